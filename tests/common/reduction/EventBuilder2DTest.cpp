// SPDX-License-Identifier: BSD-2-Clause
// EventBuilder2D: every rule and boundary by hand, the ESS EFU's own test expectations, and a
// randomised comparison with a plain reading of the rules (common/reduction/README.md).
#include "common/reduction/EventBuilder2D.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <random>
#include <vector>

using namespace efu::reduction;

namespace {

constexpr uint8_t A = 0;
constexpr uint8_t B = 1;

BuilderParams params(uint64_t clusterGap = 500, uint64_t matchGap = 500, bool split = false,
                     float low = 0.8f, float high = 1.2f) {
  BuilderParams p;
  p.clusterTimeGapNs = clusterGap;
  p.matchTimeGapNs = matchGap;
  p.splitMultiEvents = split;
  p.coefficientLow = low;
  p.coefficientHigh = high;
  return p;
}

std::vector<Event2D> run(EventBuilder2D &b, const std::vector<Hit> &hits) {
  for (const Hit &h : hits) {
    b.insert(h);
  }
  std::vector<Event2D> out;
  b.flush(out);
  return out;
}

std::vector<Event2D> run(const BuilderParams &p, const std::vector<Hit> &hits) {
  EventBuilder2D b(p);
  return run(b, hits);
}

/// Expected aggregates of a non-empty plane.
struct Expect {
  uint64_t t0, t1;
  uint16_t c0, c1;
  uint32_t hits;
  double weights, mass;
};

void expectPlane(const PlaneCluster &p, const Expect &e) {
  EXPECT_EQ(p.timeStart, e.t0);
  EXPECT_EQ(p.timeEnd, e.t1);
  EXPECT_EQ(p.coordStart, e.c0);
  EXPECT_EQ(p.coordEnd, e.c1);
  EXPECT_EQ(p.hits, e.hits);
  EXPECT_EQ(p.weightSum, e.weights);
  EXPECT_EQ(p.coordMass, e.mass);
}

void expectSame(const PlaneCluster &x, const PlaneCluster &y) {
  EXPECT_EQ(x.timeStart, y.timeStart);
  EXPECT_EQ(x.timeEnd, y.timeEnd);
  EXPECT_EQ(x.coordStart, y.coordStart);
  EXPECT_EQ(x.coordEnd, y.coordEnd);
  EXPECT_EQ(x.hits, y.hits);
  EXPECT_EQ(x.weightSum, y.weightSum);
  EXPECT_EQ(x.coordMass, y.coordMass);
}

// ---- PlaneCluster and Event2D ----------------------------------------------------------------

TEST(PlaneCluster, EmptyHasNoSpanNoGapAndNoCentre) {
  PlaneCluster p;
  EXPECT_TRUE(p.empty());
  EXPECT_EQ(p.coordSpan(), 0);
  EXPECT_FALSE(p.hasGap(0));
  EXPECT_TRUE(std::isnan(p.coordCenter()));
}

TEST(PlaneCluster, SpanGapAndCentre) {
  PlaneCluster p;
  p.coordStart = 0;
  p.coordEnd = 3;
  p.hits = 3; // coordinates 0, 1, 3: one missing
  p.weightSum = 4;
  p.coordMass = 6;
  EXPECT_EQ(p.coordSpan(), 4);
  EXPECT_TRUE(p.hasGap(0));  // 3 + 0 < 4
  EXPECT_FALSE(p.hasGap(1)); // 3 + 1 == 4
  EXPECT_EQ(p.coordCenter(), 1.5);
  p.hits = 4; // a duplicate of one coordinate hides the missing one
  EXPECT_FALSE(p.hasGap(0));
  p.weightSum = 0; // all weights 0: the mass is 0 too
  p.coordMass = 0;
  EXPECT_TRUE(std::isnan(p.coordCenter()));
}

TEST(PlaneCluster, SpanIsSixteenBits) {
  PlaneCluster p;
  p.hits = 2;
  p.coordStart = 0;
  p.coordEnd = 65535;
  EXPECT_EQ(p.coordSpan(), 0); // 65536 does not fit, as in the ESS EFU
}

TEST(Event2D, TimeStartOverNonEmptyPlanes) {
  Event2D e;
  EXPECT_TRUE(e.empty());
  EXPECT_FALSE(e.bothPlanes());
  e.b.hits = 1;
  e.b.timeStart = 70;
  EXPECT_EQ(e.timeStart(), 70u);
  EXPECT_FALSE(e.bothPlanes());
  e.a.hits = 1;
  e.a.timeStart = 90;
  EXPECT_EQ(e.timeStart(), 70u);
  EXPECT_TRUE(e.bothPlanes());
  e.a.timeStart = 20;
  EXPECT_EQ(e.timeStart(), 20u);
}

// ---- Clustering ------------------------------------------------------------------------------

// matchTimeGapNs = 0 keeps time-separated clusters apart, so events show the clusters.
TEST(Clustering, TimeGapEqualStaysInGroup) {
  EventBuilder2D b(params(500, 0));
  auto ev = run(b, {{1000, 5, 10, A}, {1500, 5, 20, A}});
  ASSERT_EQ(ev.size(), 1u);
  expectPlane(ev[0].a, {1000, 1500, 5, 5, 2, 30, 150});
  EXPECT_TRUE(ev[0].b.empty());
}

TEST(Clustering, TimeGapPlusOneStartsNewGroup) {
  EventBuilder2D b(params(500, 0));
  auto ev = run(b, {{1000, 5, 10, A}, {1501, 5, 20, A}});
  ASSERT_EQ(ev.size(), 2u);
  expectPlane(ev[0].a, {1000, 1000, 5, 5, 1, 10, 50});
  expectPlane(ev[1].a, {1501, 1501, 5, 5, 1, 20, 100});
}

TEST(Clustering, GapIsBetweenNeighboursInTimeOrder) {
  // 0, 400, 800, 1200: every step is 400, the whole chain is one group; inserted shuffled.
  EventBuilder2D b(params(500, 0));
  auto ev = run(b, {{800, 1, 1, A}, {0, 1, 1, A}, {1200, 1, 1, A}, {400, 1, 1, A}});
  ASSERT_EQ(ev.size(), 1u);
  expectPlane(ev[0].a, {0, 1200, 1, 1, 4, 4, 4});
}

TEST(Clustering, EachDistinctCoordinateIsACluster) {
  // One time group, coordinates 3, 4, 4, 6: three clusters, 4 at 100..101, 6 at 100, 3 at 102.
  // Matching with no gap allowed keeps 3 apart (it starts 1 ns after the others end).
  auto ev = run(params(500, 0), {{100, 6, 1, A}, {100, 4, 2, A}, {102, 3, 3, A}, {101, 4, 4, A}});
  ASSERT_EQ(ev.size(), 2u);
  expectPlane(ev[0].a, {100, 101, 4, 6, 3, 7, 6 + 8 + 16});
  expectPlane(ev[1].a, {102, 102, 3, 3, 1, 3, 9});
  // With the default gap they merge into one event.
  EventBuilder2D b(params());
  ev = run(b, {{100, 6, 1, A}, {100, 4, 2, A}, {102, 3, 3, A}, {101, 4, 4, A}});
  ASSERT_EQ(ev.size(), 1u);
  expectPlane(ev[0].a, {100, 102, 3, 6, 4, 10, 6 + 8 + 9 + 16});
  EXPECT_EQ(ev[0].a.coordSpan(), 4);
  EXPECT_FALSE(ev[0].a.hasGap(0)); // 4 hits over 4 coordinates, the duplicate hides 5
}

TEST(Clustering, DistinctCoordinatesWithOwnTimesChainIntoOneEvent) {
  // One group 0..500, but coordinate 1 only at 0 and coordinate 2 only at 500: two clusters
  // 500 ns apart, one event with matchTimeGapNs = 500, two with 499.
  std::vector<Hit> hits{{0, 1, 1, A}, {500, 2, 1, A}};
  EXPECT_EQ(run(params(500, 500), hits).size(), 1u);
  EXPECT_EQ(run(params(500, 499), hits).size(), 2u);
}

TEST(Clustering, HitsOfOtherPlanesAreIgnored) {
  EventBuilder2D b(params());
  auto ev = run(b, {{10, 1, 5, A}, {10, 2, 7, 2}, {10, 3, 9, 255}, {10, 4, 11, B}});
  ASSERT_EQ(ev.size(), 1u);
  expectPlane(ev[0].a, {10, 10, 1, 1, 1, 5, 5});
  expectPlane(ev[0].b, {10, 10, 4, 4, 1, 11, 44});
  EXPECT_EQ(b.stats().invalidPlane, 2);
  EXPECT_EQ(run(params(), {{10, 2, 7, 2}}).size(), 0u);
}

// ---- Matching --------------------------------------------------------------------------------

TEST(Matching, GapEqualJoins) {
  auto ev = run(params(500, 500), {{1000, 7, 3, A}, {1500, 9, 4, B}});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_TRUE(ev[0].bothPlanes());
  EXPECT_EQ(ev[0].timeStart(), 1000u);
}

TEST(Matching, GapPlusOneSeparates) {
  auto ev = run(params(500, 500), {{1000, 7, 3, A}, {1501, 9, 4, B}});
  ASSERT_EQ(ev.size(), 2u);
  expectPlane(ev[0].a, {1000, 1000, 7, 7, 1, 3, 21});
  EXPECT_TRUE(ev[0].b.empty());
  EXPECT_TRUE(ev[1].a.empty());
  expectPlane(ev[1].b, {1501, 1501, 9, 9, 1, 4, 36});
}

TEST(Matching, OverlapAndTouchingAreGapZero) {
  // A spans 0..800; B at 300 (inside) and B at 800 (touching the end) join with gap 0 even
  // when no gap is allowed; B at 801 does not.
  auto ev = run(params(500, 0),
                {{0, 1, 1, A}, {400, 1, 1, A}, {800, 1, 1, A}, {300, 2, 1, B}, {800, 3, 1, B}});
  ASSERT_EQ(ev.size(), 1u);
  expectPlane(ev[0].b, {300, 800, 2, 3, 2, 2, 5});
  ev = run(params(500, 0), {{0, 1, 1, A}, {400, 1, 1, A}, {800, 1, 1, A}, {801, 3, 1, B}});
  EXPECT_EQ(ev.size(), 2u);
}

TEST(Matching, EventEndIsTheLatestEndOfAllItsClusters) {
  // A coordinate 1 spans 0..800, B at 300..300, A coordinate 5 at 850. With matchTimeGapNs 100
  // the last joins: 850 - 800 = 50 (the event ends at 800, not at the B cluster's 300).
  auto ev = run(params(500, 100),
                {{0, 1, 1, A}, {400, 1, 1, A}, {800, 1, 1, A}, {850, 5, 1, A}, {300, 2, 1, B}});
  ASSERT_EQ(ev.size(), 1u);
  expectPlane(ev[0].a, {0, 850, 1, 5, 4, 4, 8});
  expectPlane(ev[0].b, {300, 300, 2, 2, 1, 1, 2});
}

TEST(Matching, EqualStartTimesShareAnEvent) {
  auto ev = run(params(500, 0), {{100, 1, 2, B}, {100, 9, 3, A}});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_TRUE(ev[0].bothPlanes());
}

TEST(Matching, TwoEventsInOneFlushInTimeOrder) {
  // The later neutron's hits are inserted first.
  auto ev = run(params(), {{5000, 20, 6, A},
                           {5100, 21, 4, A},
                           {5050, 8, 10, B},
                           {100, 3, 5, A},
                           {120, 40, 7, B},
                           {130, 41, 1, B}});
  ASSERT_EQ(ev.size(), 2u);
  expectPlane(ev[0].a, {100, 100, 3, 3, 1, 5, 15});
  expectPlane(ev[0].b, {120, 130, 40, 41, 2, 8, 280 + 41});
  expectPlane(ev[1].a, {5000, 5100, 20, 21, 2, 10, 120 + 84});
  expectPlane(ev[1].b, {5050, 5050, 8, 8, 1, 10, 80});
  EXPECT_EQ(ev[0].timeStart(), 100u);
  EXPECT_EQ(ev[1].timeStart(), 5000u);
}

TEST(Matching, OnePlaneEvents) {
  auto ev = run(params(), {{100, 3, 5, A}, {10000, 4, 6, B}});
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_FALSE(ev[0].bothPlanes());
  EXPECT_FALSE(ev[0].a.empty());
  EXPECT_TRUE(ev[0].b.empty());
  EXPECT_TRUE(ev[1].a.empty());
  EXPECT_FALSE(ev[1].b.empty());
  EXPECT_EQ(ev[1].timeStart(), 10000u);
}

TEST(Flush, ForgetsHitsAndAppends) {
  EventBuilder2D b(params());
  b.insert({100, 3, 5, A});
  b.insert({100, 3, 5, B});
  EXPECT_EQ(b.pending(), 2u);
  std::vector<Event2D> out;
  b.flush(out);
  EXPECT_EQ(b.pending(), 0u);
  ASSERT_EQ(out.size(), 1u);
  b.flush(out);
  EXPECT_EQ(out.size(), 1u); // nothing new
  // A hit 100 ns after the first flush's hits is not joined to them.
  b.insert({200, 3, 7, A});
  b.flush(out);
  ASSERT_EQ(out.size(), 2u); // appended
  expectPlane(out[1].a, {200, 200, 3, 3, 1, 7, 21});
  EXPECT_TRUE(out[1].b.empty());
}

// ---- Splitting multi-neutron events ------------------------------------------------------------

std::vector<Hit> twoNeutrons(uint16_t wa1, uint16_t wa2, uint16_t wb1, uint16_t wb2) {
  // Plane A: coordinates 1, 2 (weight wa1 each) and 30 (wa2); plane B: 5 (wb1) and 40, 41
  // (wb2 each). All at nearly one time: one event spanning 30 and 37 coordinates.
  return {{100, 1, wa1, A}, {101, 2, wa1, A},  {102, 30, wa2, A},
          {100, 5, wb1, B}, {103, 40, wb2, B}, {104, 41, wb2, B}};
}

TEST(Split, OffKeepsWideEvents) {
  EventBuilder2D b(params());
  auto ev = run(b, twoNeutrons(50, 100, 100, 50));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].a.coordSpan(), 30);
  EXPECT_EQ(b.stats().spanTooLarge, 0);
}

TEST(Split, SpanBelowTenIsKept) {
  // Spans of 9 in both planes (coordinates 1..9) are emitted as they are.
  EventBuilder2D b(params(500, 500, true));
  auto ev = run(b, {{0, 1, 5, A}, {0, 9, 5, A}, {0, 1, 5, B}, {0, 9, 50, B}});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].a.coordSpan(), 9);
  EXPECT_EQ(b.stats().spanTooLarge, 0);
}

TEST(Split, SpanOfTenTakesTheSplitPath) {
  // Plane B spans 1..10 (one part: the step 9 is not above 10), plane A one hit: the split
  // gives a1 = 5, b1 = 10 and empty a2, b2. a1/b1 do not match (5 * 1.2 < 10), a2/b2 (0, 0)
  // do, a1/b2 and a2/b1 do not: discarded.
  EventBuilder2D b(params(500, 500, true));
  auto ev = run(b, {{0, 1, 5, A}, {0, 1, 5, B}, {0, 10, 5, B}});
  EXPECT_TRUE(ev.empty());
  EXPECT_EQ(b.stats().spanTooLarge, 1);
  EXPECT_EQ(b.stats().discardedSpanTooLarge, 1);
  EXPECT_EQ(b.stats().splitSpanTooLarge, 0);
}

// flush() returns the counts of that flush; stats() keeps the sums.
TEST(Split, FlushReturnsWhatThatFlushCounted) {
  EventBuilder2D b(params(500, 500, true));
  std::vector<Event2D> out;
  for (const Hit &h : std::vector<Hit>{{0, 1, 5, A}, {0, 1, 5, B}, {0, 10, 5, B}}) {
    b.insert(h);
  }
  BuilderStats s = b.flush(out);
  EXPECT_EQ(s.spanTooLarge, 1);
  EXPECT_EQ(s.discardedSpanTooLarge, 1);
  b.insert({0, 1, 5, 7}); // plane 7: dropped
  s = b.flush(out);
  EXPECT_EQ(s.spanTooLarge, 0);
  EXPECT_EQ(s.discardedSpanTooLarge, 0);
  EXPECT_EQ(s.invalidPlane, 1);
  EXPECT_EQ(b.stats().spanTooLarge, 1);
  EXPECT_EQ(b.stats().invalidPlane, 1);
  EXPECT_EQ(b.flush(out).invalidPlane, 0);
}

TEST(Split, StraightPairing) {
  // a1 = 2 * 100 = 200, a2 = 100, b1 = 200, b2 = 2 * 50 = 100: a1-b1 and a2-b2.
  EventBuilder2D b(params(500, 500, true));
  auto ev = run(b, twoNeutrons(100, 100, 200, 50));
  ASSERT_EQ(ev.size(), 2u);
  expectPlane(ev[0].a, {100, 101, 1, 2, 2, 200, 300});
  expectPlane(ev[0].b, {100, 100, 5, 5, 1, 200, 1000});
  expectPlane(ev[1].a, {102, 102, 30, 30, 1, 100, 3000});
  expectPlane(ev[1].b, {103, 104, 40, 41, 2, 100, 2000 + 2050});
  EXPECT_EQ(b.stats().spanTooLarge, 1);
  EXPECT_EQ(b.stats().splitSpanTooLarge, 1);
  EXPECT_EQ(b.stats().discardedSpanTooLarge, 0);
}

TEST(Split, CrossedPairing) {
  // a1 = 200, a2 = 400, b1 = 400, b2 = 2 * 100 = 200: a1-b2 first, then a2-b1.
  EventBuilder2D b(params(500, 500, true));
  auto ev = run(b, twoNeutrons(100, 400, 400, 100));
  ASSERT_EQ(ev.size(), 2u);
  expectPlane(ev[0].a, {100, 101, 1, 2, 2, 200, 300});
  expectPlane(ev[0].b, {103, 104, 40, 41, 2, 200, 4000 + 4100});
  expectPlane(ev[1].a, {102, 102, 30, 30, 1, 400, 12000});
  expectPlane(ev[1].b, {100, 100, 5, 5, 1, 400, 2000});
  EXPECT_EQ(b.stats().splitSpanTooLarge, 1);
}

TEST(Split, AmbiguousWeightsAreDiscarded) {
  // Everything 200: every pairing matches.
  EventBuilder2D b(params(500, 500, true));
  auto ev = run(b, twoNeutrons(100, 200, 200, 100));
  EXPECT_TRUE(ev.empty());
  EXPECT_EQ(b.stats().spanTooLarge, 1);
  EXPECT_EQ(b.stats().discardedSpanTooLarge, 1);
}

TEST(Split, ThreeGroupsInAPlaneAreDiscarded) {
  // Plane A at 1, 20, 40: three parts, so both A parts are empty; B's parts (100, 100) match
  // no empty part.
  EventBuilder2D b(params(500, 500, true));
  auto ev =
      run(b, {{0, 1, 100, A}, {0, 20, 100, A}, {0, 40, 100, A}, {0, 1, 100, B}, {0, 30, 100, B}});
  EXPECT_TRUE(ev.empty());
  EXPECT_EQ(b.stats().discardedSpanTooLarge, 1);
}

TEST(Split, StepOfTenStaysStepOfElevenSplits) {
  // Plane A 1 and 11 (step 10): one part of 200 over 11 coordinates. Plane B 1 (100) and 12
  // (100, step 11): two parts. a1 = 200 matches neither b1 = 100 nor b2 = 100; discarded.
  EventBuilder2D b(params(500, 500, true));
  auto ev = run(b, {{0, 1, 100, A}, {0, 11, 100, A}, {0, 1, 100, B}, {0, 12, 100, B}});
  EXPECT_TRUE(ev.empty());
  EXPECT_EQ(b.stats().discardedSpanTooLarge, 1);
  // With B one part 1 and 11 (200): a1-b1 and the two empty parts match; the second event is
  // entirely empty and is emitted all the same.
  EventBuilder2D c(params(500, 500, true));
  ev = run(c, {{0, 1, 100, A}, {0, 11, 100, A}, {5, 1, 150, B}, {5, 11, 50, B}});
  ASSERT_EQ(ev.size(), 2u);
  expectPlane(ev[0].a, {0, 0, 1, 11, 2, 200, 1200});
  expectPlane(ev[0].b, {5, 5, 1, 11, 2, 200, 150 + 550});
  EXPECT_TRUE(ev[1].empty());
  EXPECT_EQ(c.stats().splitSpanTooLarge, 1);
}

TEST(Split, CoefficientEdges) {
  // a1 = 100 on A 1, a2 = 1000 on A 30; b1 on B 1, b2 = 1000 on B 30. With 0.75 and 1.25
  // (exact in float) b1 = 75 and b1 = 125 match a1 exactly at the edges; 74 and 126 do not.
  auto hits = [](uint16_t wb1) {
    return std::vector<Hit>{{0, 1, 100, A}, {0, 30, 1000, A}, {0, 1, wb1, B}, {0, 30, 1000, B}};
  };
  const auto p = params(500, 500, true, 0.75f, 1.25f);
  EXPECT_EQ(run(p, hits(75)).size(), 2u);
  EXPECT_EQ(run(p, hits(74)).size(), 0u);
  EXPECT_EQ(run(p, hits(125)).size(), 2u);
  EXPECT_EQ(run(p, hits(126)).size(), 0u);
}

TEST(Split, CoefficientsAreFloats) {
  // 0.8f is slightly above 0.8: 100 * 0.8f > 80, so a1 = 100 and b1 = 80 do not match.
  // 1.2f is slightly above 1.2: 100 * 1.2f >= 120, so b1 = 120 matches.
  auto hits = [](uint16_t wb1) {
    return std::vector<Hit>{{0, 1, 100, A}, {0, 30, 1000, A}, {0, 1, wb1, B}, {0, 30, 1000, B}};
  };
  const auto p = params(500, 500, true, 0.8f, 1.2f);
  EXPECT_EQ(run(p, hits(80)).size(), 0u);
  EXPECT_EQ(run(p, hits(81)).size(), 2u);
  EXPECT_EQ(run(p, hits(120)).size(), 2u);
  EXPECT_EQ(run(p, hits(121)).size(), 0u);
}

// ---- The ESS EFU's test expectations, in tables ------------------------------------------------

/// Hits on a grid: every time of [t0, t1] in steps of tStep at every coordinate of [c0, c1] in
/// steps of cStep.
struct Block {
  uint8_t plane;
  uint16_t weight, c0, c1, cStep;
  uint64_t t0, t1, tStep;
};

std::vector<Hit> hitsOf(std::initializer_list<Block> blocks) {
  std::vector<Hit> hits;
  for (const Block &b : blocks) {
    for (uint64_t t = b.t0; t <= b.t1; t += b.tStep) {
      for (uint32_t c = b.c0; c <= b.c1; c += b.cStep) {
        hits.push_back({t, static_cast<uint16_t>(c), b.weight, b.plane});
      }
    }
  }
  return hits;
}

// src/common/reduction/matching/test/GapMatcherTest.cpp (matching gap 70, splitting on with
// 0.8 / 1.2). There clusters are handed to the matcher directly; here the same hits go through
// clustering first (one cluster per coordinate, all overlapping in time), which gives the same
// events. Its cases with flush = false do not apply: this builder always flushes fully.
struct MatcherCase {
  const char *name;
  std::vector<Hit> hits;
  size_t events;
  int64_t spanTooLarge;
};

TEST(EssGapMatcher, Table) {
  const MatcherCase cases[] = {
      {"MultiHitOnMatchSingleEvent",
       hitsOf({{A, 10, 50, 55, 1, 0, 5, 1}, {B, 10, 100, 109, 2, 0, 5, 1}}), 1, 0},
      {"MultiHitOnMatchMultiEvent",
       hitsOf({{A, 10, 50, 55, 1, 0, 1, 1},
               {A, 100, 200, 205, 1, 0, 1, 1},
               {B, 10, 100, 105, 1, 0, 1, 1},
               {B, 100, 10, 15, 1, 0, 1, 1}}),
       2, 1},
      {"MultiHitOnFailedMatchMultiEventPlaneA",
       hitsOf({{A, 10, 50, 55, 1, 0, 5, 1},
               {A, 10, 200, 205, 1, 0, 5, 1},
               {B, 10, 100, 105, 1, 0, 5, 1}}),
       0, 1},
      {"MultiHitOnFailedMatchMultiEventPlaneB",
       hitsOf({{A, 10, 100, 105, 1, 0, 5, 1},
               {B, 10, 50, 55, 1, 0, 5, 1},
               {B, 10, 200, 205, 1, 0, 5, 1}}),
       0, 1},
  };
  for (const MatcherCase &c : cases) {
    SCOPED_TRACE(c.name);
    EventBuilder2D b(params(500, 70, true, 0.8f, 1.2f));
    EXPECT_EQ(run(b, c.hits).size(), c.events);
    EXPECT_EQ(b.stats().spanTooLarge, c.spanTooLarge);
  }
}

// src/common/reduction/clustering/test/GapClustererTest.cpp, its time-gap cases (weight 1,
// plane 0), seen as events with no matching gap allowed: clusters of different time groups are
// then different events. The Multi-Blade builder never sets a coordinate gap, so of the
// coordinate-gap cases only the gap-0 one applies: its 100 clusters (10 coordinates at each of 10
// times) overlap per time and match into 10 events of 10 hits.
struct ClustererCase {
  const char *name;
  Block block;
  uint64_t timeGap;
  size_t clusters, events;
};

TEST(EssGapClusterer, Table) {
  const ClustererCase cases[] = {
      {"ZeroTimeGap", {A, 1, 0, 0, 1, 1, 10, 1}, 0, 10, 10},
      {"JustUnderFiveTimeGap", {A, 1, 0, 0, 1, 0, 40, 4}, 5, 1, 1},
      {"ExactlyFiveTimeGap", {A, 1, 0, 0, 1, 0, 50, 5}, 5, 1, 1},
      {"JustOverFiveTimeGap", {A, 1, 0, 0, 1, 1, 60, 6}, 5, 10, 10},
      {"ZeroCoordGap", {A, 1, 1, 10, 1, 1, 10, 1}, 0, 100, 10},
  };
  for (const ClustererCase &c : cases) {
    SCOPED_TRACE(c.name);
    const auto ev = run(params(c.timeGap, 0), hitsOf({c.block}));
    EXPECT_EQ(ev.size(), c.events);
    uint32_t hits = 0;
    for (const Event2D &e : ev) {
      hits += e.a.hits;
      EXPECT_EQ(e.a.hits, ev[0].a.hits);
    }
    EXPECT_EQ(hits, hitsOf({c.block}).size());
  }
}

// src/common/reduction/test/ClusterTest.cpp and EventTest.cpp: aggregates of a plane (the
// hits of each case form one event here).
struct AggregateCase {
  const char *name;
  std::vector<Hit> hits;
  Expect a;
};

TEST(EssClusterAggregates, Table) {
  const AggregateCase cases[] = {
      {"TimeSpan", {{10, 0, 0, A}, {20, 0, 0, A}, {5, 0, 0, A}}, {5, 20, 0, 0, 3, 0, 0}},
      {"StripSpan", {{0, 0, 0, A}, {0, 10, 0, A}, {0, 41, 0, A}}, {0, 0, 0, 41, 3, 0, 0}},
      {"AdcSum", {{0, 0, 0, A}, {0, 0, 2, A}, {0, 0, 40, A}}, {0, 0, 0, 0, 3, 42, 0}},
      {"CoordsMass", {{0, 10, 2, A}, {0, 0, 8, A}}, {0, 0, 0, 10, 2, 10, 20}},
      {"Merge2Valid",
       {{0, 5, 1, A}, {7, 5, 1, A}, {12, 15, 1, A}, {6, 15, 1, A}, {5, 15, 1, A}},
       {0, 12, 5, 15, 5, 5, 5 + 5 + 45}},
  };
  for (const AggregateCase &c : cases) {
    SCOPED_TRACE(c.name);
    auto ev = run(params(), c.hits);
    ASSERT_EQ(ev.size(), 1u);
    expectPlane(ev[0].a, c.a);
    EXPECT_TRUE(ev[0].b.empty());
  }
  auto ev = run(params(), {{0, 5, 1, A}, {7, 5, 1, A}, {12, 15, 1, A}, {6, 15, 1, A}});
  EXPECT_EQ(ev[0].a.coordSpan(), 11);                                              // Merge2Valid
  EXPECT_EQ(run(params(), {{0, 10, 2, A}, {0, 0, 8, A}})[0].a.coordCenter(), 2.0); // CoordsMass
  ev = run(params(), {{0, 0, 0, A}, {0, 1, 0, A}, {0, 3, 0, A}});                  // HasGap
  EXPECT_TRUE(ev[0].a.hasGap(0));
  EXPECT_FALSE(ev[0].a.hasGap(1));
  // EventTest TimeSpan / MergeXY: A at 3 and 7, B at 5 and 1; 2 and 3 hits.
  ev = run(params(), {{3, 0, 0, A}, {7, 0, 0, A}, {5, 0, 0, B}, {1, 0, 0, B}, {1, 0, 0, B}});
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].timeStart(), 1u);
  EXPECT_EQ(ev[0].a.hits, 2u);
  EXPECT_EQ(ev[0].b.hits, 3u);
}

// src/modules/freia/test/FreiaInstrumentTest.cpp: the events its generateEvents() cases start
// from, and the two readouts of its GoodEvent datagram (wire at tick 1, strip at tick 17 of the
// 88.0525 MHz clock, about 11 and 193 ns; coordinates arbitrary here) which one builder turns
// into one event.
TEST(EssFreiaInstrument, Events) {
  auto ev = run(params(), {{0, 1, 100, A}, {0, 1, 100, B}, {0, 3, 100, B}}); // WireGap
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_TRUE(ev[0].b.hasGap(0));
  EXPECT_FALSE(ev[0].a.hasGap(0));
  ev = run(params(), {{0, 1, 100, A}, {0, 3, 100, A}, {0, 1, 100, B}}); // StripGap
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_TRUE(ev[0].a.hasGap(0));
  ev = run(params(), {{0, 1, 0, B}}); // ClusterWireOnly
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_FALSE(ev[0].bothPlanes());
  EXPECT_FALSE(ev[0].b.empty());
  ev = run(params(), {{0, 1, 0, A}}); // ClusterStripOnly
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_FALSE(ev[0].bothPlanes());
  EXPECT_FALSE(ev[0].a.empty());
  ev = run(params(), {{0, 3, 100, A}, {0, 1, 100, B}}); // GoodEvent
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_TRUE(ev[0].bothPlanes());
  EXPECT_EQ(ev[0].timeStart(), 0u);
  ev = run(params(), {{11, 16, 256, B}, {193, 16, 256, A}}); // the GoodEvent datagram
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_TRUE(ev[0].bothPlanes());
  EXPECT_EQ(ev[0].timeStart(), 11u);
}

// ---- Against a plain reading of the rules ----------------------------------------------------

struct RefCluster {
  PlaneCluster agg;
  std::vector<Hit> hits;
  uint8_t plane = 0;
  // The ESS Cluster's uTPC bookkeeping, literally: updated by add() (Cluster::insert) only.
  int idxMin = 0, idxMax = 0;
  uint64_t tEnd = 0;
  void add(const Hit &h) {
    if (hits.empty()) {
      tEnd = h.timeNs;
      idxMin = idxMax = 0;
    }
    if (h.timeNs == tEnd) {
      idxMax = static_cast<int>(hits.size());
    } else if (h.timeNs > tEnd) {
      idxMin = idxMax = static_cast<int>(hits.size());
      tEnd = h.timeNs;
    }
    agg.timeStart = std::min(agg.timeStart, h.timeNs);
    agg.timeEnd = std::max(agg.timeEnd, h.timeNs);
    agg.coordStart = std::min(agg.coordStart, h.coord);
    agg.coordEnd = std::max(agg.coordEnd, h.coord);
    agg.hits++;
    agg.weightSum += h.weight;
    agg.coordMass += static_cast<double>(h.weight) * h.coord;
    hits.push_back(h);
  }
  /// Cluster::merge: an empty cluster becomes a copy of the other; otherwise hits and sums are
  /// appended and the uTPC indices stay.
  void merge(const RefCluster &c) {
    if (hits.empty()) {
      *this = c;
      return;
    }
    const int keepMin = idxMin, keepMax = idxMax;
    const uint64_t keepEnd = tEnd;
    for (const Hit &h : c.hits) {
      add(h);
    }
    idxMin = keepMin;
    idxMax = keepMax;
    tEnd = keepEnd;
  }
  /// Cluster::coordUtpc(false).
  [[nodiscard]] uint16_t utpc() const {
    int idx = idxMax;
    const int n = static_cast<int>(hits.size());
    if (idxMin != idxMax) {
      if (idxMin < (n - 1) - idxMax) {
        idx = idxMin;
      } else if (idxMin > (n - 1) - idxMax) {
        idx = idxMax;
      } else {
        idx = hits[idxMin].weight > hits[idxMax].weight ? idxMin : idxMax;
      }
    }
    return hits[static_cast<size_t>(idx)].coord;
  }
  [[nodiscard]] PlaneCluster result() const {
    PlaneCluster r = agg;
    r.utpcCoord = hits.empty() ? uint16_t{0} : utpc();
    return r;
  }
};

struct Reference {
  BuilderParams p;
  BuilderStats stats;
  std::vector<Event2D> out;

  void split(const RefCluster &c, RefCluster &one, RefCluster &two) {
    std::vector<Hit> hits = c.hits;
    // std::sort as the ESS EFU sorts (its permutation of equal coordinates decides uTPC ties).
    std::sort(hits.begin(), hits.end(),
              [](const Hit &x, const Hit &y) { return x.coord < y.coord; });
    unsigned last = 0;
    bool filled = false;
    for (const Hit &h : hits) {
      if (one.hits.empty()) {
        one.add(h);
      } else if (h.coord - last <= 10 && !filled) {
        one.add(h);
      } else if (h.coord - last > 10 && !filled) {
        filled = true;
        two.add(h);
      } else if (h.coord - last <= 10 && filled) {
        two.add(h);
      } else {
        one = RefCluster{};
        two = RefCluster{};
        return;
      }
      last = h.coord;
    }
  }
  bool match(const RefCluster &x, const RefCluster &y) const {
    const double low = p.coefficientLow, high = p.coefficientHigh;
    return x.agg.weightSum * low <= y.agg.weightSum && x.agg.weightSum * high >= y.agg.weightSum;
  }
  void close(const RefCluster &a, const RefCluster &b) {
    if (!p.splitMultiEvents || (a.agg.coordSpan() < 10 && b.agg.coordSpan() < 10)) {
      out.push_back({a.result(), b.result()});
      return;
    }
    stats.spanTooLarge++;
    RefCluster a1, a2, b1, b2;
    split(a, a1, a2);
    split(b, b1, b2);
    if (match(a1, b1) && match(a2, b2) && !match(a1, b2) && !match(a2, b1)) {
      out.push_back({a1.result(), b1.result()});
      out.push_back({a2.result(), b2.result()});
    } else if (match(a1, b2) && match(a2, b1) && !match(a1, b1) && !match(a2, b2)) {
      out.push_back({a1.result(), b2.result()});
      out.push_back({a2.result(), b1.result()});
    } else {
      stats.discardedSpanTooLarge++;
      return;
    }
    stats.splitSpanTooLarge++;
  }
  void flush(const std::vector<Hit> &all) {
    std::vector<RefCluster> clusters;
    for (uint8_t plane = 0; plane < 2; ++plane) {
      std::vector<Hit> hits;
      for (const Hit &h : all) {
        if (h.plane == plane) {
          hits.push_back(h);
        }
      }
      // std::sort on the insertion order, as the ESS EFU sorts.
      std::sort(hits.begin(), hits.end(),
                [](const Hit &x, const Hit &y) { return x.timeNs < y.timeNs; });
      std::vector<std::vector<Hit>> groups;
      for (size_t i = 0; i < hits.size(); ++i) {
        if (i == 0 || hits[i].timeNs - hits[i - 1].timeNs > p.clusterTimeGapNs) {
          groups.emplace_back();
        }
        groups.back().push_back(hits[i]);
      }
      for (auto &g : groups) {
        std::sort(g.begin(), g.end(), [](const Hit &x, const Hit &y) { return x.coord < y.coord; });
        RefCluster c;
        c.plane = plane;
        for (const Hit &h : g) {
          if (!c.hits.empty() && h.coord > c.agg.coordEnd) {
            clusters.push_back(c);
            c = RefCluster{};
            c.plane = plane;
          }
          c.add(h);
        }
        clusters.push_back(c);
      }
    }
    std::stable_sort(clusters.begin(), clusters.end(), [](const auto &x, const auto &y) {
      return x.agg.timeStart < y.agg.timeStart;
    });
    RefCluster a, b;
    uint64_t end = 0;
    bool open = false;
    for (const RefCluster &c : clusters) {
      if (open) {
        const uint64_t gap = c.agg.timeStart <= end ? 0 : c.agg.timeStart - end;
        if (gap > p.matchTimeGapNs) {
          close(a, b);
          a = RefCluster{};
          b = RefCluster{};
          open = false;
        }
      }
      RefCluster &into = c.plane == 0 ? a : b;
      into.merge(c);
      end = open ? std::max(end, c.agg.timeEnd) : c.agg.timeEnd;
      open = true;
    }
    if (open) {
      close(a, b);
    }
  }
};

/// Random flushes: a few neutrons, each a few hits per plane around one time and coordinate,
/// some far apart in coordinate (two neutrons at once), duplicates, noise and bad planes, in
/// random order.
std::vector<Hit> randomHits(std::mt19937_64 &rng, size_t neutrons, uint16_t coordRange) {
  std::vector<Hit> hits;
  std::uniform_int_distribution<uint64_t> start(0, neutrons * 1500);
  std::uniform_int_distribution<int> jitter(0, 600), count(0, 5), step(0, 14), weight(0, 400);
  std::uniform_int_distribution<int> coord(0, coordRange), plane(0, 40);
  for (size_t n = 0; n < neutrons; ++n) {
    const uint64_t t = 1'000'000 + start(rng);
    for (uint8_t pl = 0; pl < 2; ++pl) {
      int c = coord(rng);
      const int k = count(rng);
      for (int i = 0; i < k; ++i) {
        const int w = weight(rng);
        hits.push_back({t + static_cast<uint64_t>(jitter(rng)),
                        static_cast<uint16_t>(std::min(c, 65535)), static_cast<uint16_t>(w),
                        plane(rng) == 0 ? uint8_t{2} : pl});
        c += step(rng) < 10 ? step(rng) % 2 : step(rng);
      }
    }
  }
  std::shuffle(hits.begin(), hits.end(), rng);
  return hits;
}

void compare(const BuilderParams &p, const std::vector<Hit> &hits, EventBuilder2D &b,
             BuilderStats before) {
  Reference ref{p, {}, {}};
  ref.flush(hits);
  auto ev = run(b, hits);
  ASSERT_EQ(ev.size(), ref.out.size());
  for (size_t i = 0; i < ev.size(); ++i) {
    SCOPED_TRACE(i);
    expectSame(ev[i].a, ref.out[i].a);
    expectSame(ev[i].b, ref.out[i].b);
    // The ESS uTPC coordinate (NMX's pixel) of every non-empty plane.
    if (!ev[i].a.empty()) {
      EXPECT_EQ(ev[i].a.utpcCoord, ref.out[i].a.utpcCoord);
    }
    if (!ev[i].b.empty()) {
      EXPECT_EQ(ev[i].b.utpcCoord, ref.out[i].b.utpcCoord);
    }
  }
  EXPECT_EQ(b.stats().spanTooLarge - before.spanTooLarge, ref.stats.spanTooLarge);
  EXPECT_EQ(b.stats().splitSpanTooLarge - before.splitSpanTooLarge, ref.stats.splitSpanTooLarge);
  EXPECT_EQ(b.stats().discardedSpanTooLarge - before.discardedSpanTooLarge,
            ref.stats.discardedSpanTooLarge);
}

TEST(Reference, RandomFlushesMatch) {
  std::mt19937_64 rng(20240611);
  // matchTimeGapNs >= clusterTimeGapNs matches whole time groups, smaller gaps single clusters.
  const BuilderParams variants[] = {params(),
                                    params(500, 500, true),
                                    params(100, 0, true),
                                    params(0, 1000, true, 0.5f, 2.0f),
                                    params(300, 50, false),
                                    params(200, 199, true),
                                    params(200, 200, true),
                                    params(600, 150, true, 0.9f, 1.1f)};
  for (const BuilderParams &p : variants) {
    EventBuilder2D b(p); // one builder per variant, reused: flushes must not leak state
    for (int round = 0; round < 400; ++round) {
      SCOPED_TRACE(round);
      const size_t neutrons = 1 + rng() % (round % 4 == 0 ? 200 : 12);
      const uint16_t range = round % 3 == 0 ? 20 : (round % 3 == 1 ? 200 : 65535);
      const auto hits = randomHits(rng, neutrons, range);
      const BuilderStats before = b.stats();
      compare(p, hits, b, before);
      if (HasFailure()) {
        return;
      }
    }
  }
}

TEST(Reference, TimeOrderedFlushesMatch) {
  // Hits in time order, as a datagram mostly brings a plane's hits: clusterPlane groups them as
  // inserted and sorts only for a hit earlier than the start of its group. Rounds 3k: in order;
  // 3k + 1: neighbours swapped here and there (mostly within a group: no sort); 3k + 2: one hit
  // moved anywhere (mostly into another group: a sort).
  std::mt19937_64 rng(20261203);
  // From a gap of 2^63 a step back can wrap to no more than the gap: such gaps sort first.
  const uint64_t huge = uint64_t{1} << 63, most = std::numeric_limits<uint64_t>::max();
  for (const BuilderParams &p : {params(), params(500, 500, true), params(200, 199, true),
                                 params(0, 1000, true), params(huge, huge), params(most, most)}) {
    EventBuilder2D b(p);
    for (int round = 0; round < 150; ++round) {
      SCOPED_TRACE(round);
      auto hits = randomHits(rng, 1 + rng() % 20, round % 2 == 0 ? 30 : 300);
      std::stable_sort(hits.begin(), hits.end(),
                       [](const Hit &x, const Hit &y) { return x.timeNs < y.timeNs; });
      if (round % 3 == 1) {
        for (size_t i = 1; i < hits.size(); ++i) {
          if (rng() % 4 == 0) {
            std::swap(hits[i - 1], hits[i]);
          }
        }
      }
      if (round % 3 == 2 && hits.size() > 2) {
        std::swap(hits[rng() % hits.size()], hits[rng() % hits.size()]);
      }
      compare(p, hits, b, b.stats());
      if (HasFailure()) {
        return;
      }
    }
  }
}

TEST(Reference, EqualTimesOnTheSplitPathMatch) {
  // Few distinct times and coordinates, wide events: the split path's uTPC coordinate depends on
  // how std::sort orders equal times and coordinates, so on the ESS EFU's order being rebuilt
  // from the insertion order, whether the plane was sorted (shuffled) or not (in time order).
  std::mt19937_64 rng(42);
  const BuilderParams p = params(500, 500, true, 0.5f, 2.0f);
  EventBuilder2D b(p);
  for (int round = 0; round < 300; ++round) {
    SCOPED_TRACE(round);
    std::vector<Hit> hits;
    const uint64_t t0 = 1'000'000 + static_cast<uint64_t>(round) * 100'000;
    for (int i = 0; i < 40; ++i) {
      const auto plane = static_cast<uint8_t>(rng() % 2);
      const auto coord = static_cast<uint16_t>(rng() % 3 == 0 ? 30 + rng() % 3 : rng() % 3);
      hits.push_back({t0 + 100 * (rng() % 3), coord, static_cast<uint16_t>(1 + rng() % 4), plane});
    }
    if (round % 2 == 1) {
      std::stable_sort(hits.begin(), hits.end(),
                       [](const Hit &x, const Hit &y) { return x.timeNs < y.timeNs; });
    }
    compare(p, hits, b, b.stats());
    if (HasFailure()) {
      return;
    }
  }
}

TEST(Reference, LargeShuffledFlushMatches) {
  // Thousands of hits out of order: the sorts leave their small-input path.
  std::mt19937_64 rng(7);
  for (const BuilderParams &p :
       {params(), params(500, 500, true), params(2000, 2000, true), params(500, 100, true)}) {
    EventBuilder2D b(p);
    compare(p, randomHits(rng, 3000, 300), b, b.stats());
  }
}

TEST(Reference, OneHugeTimeGroup) {
  // Everything within one group and one event: large coordinate sort, split path with many hits.
  std::mt19937_64 rng(11);
  std::vector<Hit> hits;
  for (int i = 0; i < 5000; ++i) {
    hits.push_back({1000 + rng() % 400, static_cast<uint16_t>(rng() % 2000),
                    static_cast<uint16_t>(rng() % 1024), static_cast<uint8_t>(rng() % 2)});
  }
  for (const BuilderParams &p : {params(), params(500, 500, true), params(500, 100, true)}) {
    EventBuilder2D b(p);
    compare(p, hits, b, b.stats());
  }
}

TEST(Reference, InsertionOrderDoesNotMatter) {
  std::mt19937_64 rng(3);
  auto hits = randomHits(rng, 50, 100);
  auto first = run(params(500, 500, true), hits);
  std::sort(hits.begin(), hits.end(), [](const Hit &x, const Hit &y) {
    return x.timeNs != y.timeNs ? x.timeNs > y.timeNs : x.coord > y.coord;
  });
  auto second = run(params(500, 500, true), hits);
  ASSERT_EQ(first.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    expectSame(first[i].a, second[i].a);
    expectSame(first[i].b, second[i].b);
  }
}

} // namespace
