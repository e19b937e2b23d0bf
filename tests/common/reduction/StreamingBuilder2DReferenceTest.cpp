// SPDX-License-Identifier: BSD-2-Clause
// StreamingBuilder2D against the builder as it was before issue 39's changes
// (StreamingBuilder2DReference.h): random streams in order, out of order, with bursts at one time,
// a dead plane, steps back, restarts and full flushes, each bound small enough to act. Every
// event (field by field, the sums bit for bit), every bound count and the state after each call
// must be the same.
#include "common/reduction/StreamingBuilder2D.h"
#include "tests/common/reduction/StreamingBuilder2DReference.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace efu::reduction {
namespace {

using reference::expectSameEvents;
using reference::expectSameState;

/// Kinds of stream: the time step between hits and how often time goes back.
struct Shape {
  uint64_t maxStep;   ///< ns between a hit and the next, uniform in [0, maxStep]
  int backPercent;    ///< % of hits earlier than the last, by up to backNs
  uint64_t backNs;
  int deadPlane;      ///< -1: none, else this plane gets no hits (the stale bound)
  int burstPercent;   ///< % of datagrams whose hits all have one time (a stuck clock)
};

void compare(uint64_t seed, const StreamingParams &params, const Shape &shape, int datagrams) {
  std::mt19937_64 rng(seed);
  StreamingBuilder2D b(params);
  reference::ReferenceBuilder r(params);
  std::vector<Event2D> outB, outR;
  uint64_t t = 1'000'000;
  const auto pick = [&](uint64_t n) { return n == 0 ? 0 : rng() % (n + 1); };
  for (int d = 0; d < datagrams; ++d) {
    const auto hits = static_cast<int>(rng() % 40);
    const bool burst = static_cast<int>(rng() % 100) < shape.burstPercent;
    for (int k = 0; k < hits; ++k) {
      if (!burst) {
        if (static_cast<int>(rng() % 100) < shape.backPercent) {
          t = t > shape.backNs ? t - pick(shape.backNs) : t;
        } else {
          t += pick(shape.maxStep);
        }
      }
      auto plane = static_cast<uint8_t>(rng() % 2);
      if (rng() % 200 == 0) {
        plane = 2; // dropped, counted
      }
      if (plane == shape.deadPlane) {
        plane = static_cast<uint8_t>(1 - plane);
      }
      const Hit h{t, static_cast<uint16_t>(rng() % 12), static_cast<uint16_t>(rng() % 1024), plane};
      b.insert(h);
      r.insert(h);
    }
    reference::endDatagram(b, r, static_cast<unsigned>(rng() % 100), outB, outR);
    {
      SCOPED_TRACE("seed " + std::to_string(seed) + " datagram " + std::to_string(d));
      expectSameEvents(outB, outR);
      expectSameState(b, r);
    }
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
    if (rng() % 50 == 0) {
      t += 2'000'000'000; // past the stale bound and the step-back bound
    }
  }
  reference::expectSameFinalFlush(b, r, outB, outR);
  expectSameState(b, r);
}

/// Loose bounds that only the longest streams reach: TREX-like values (the ESS gaps and latency,
/// bounds of the size a module would set), written out here so that this test of common/ code
/// depends on no module.
const StreamingParams kLoose{.clusterTimeGapNs = 500,
                             .matchTimeGapNs = 500,
                             .latencyNs = 2010,
                             .staleNs = 1'000'000'000,
                             .maxWaiting = 16384,
                             .maxOpenHits = 4096,
                             .maxEventHits = 65536,
                             .stepBackNs = 100'000'000};
const StreamingParams kTight{.clusterTimeGapNs = 500,
                             .matchTimeGapNs = 300,
                             .latencyNs = 2010,
                             .staleNs = 20'000,
                             .maxWaiting = 6,
                             .maxOpenHits = 3,
                             .maxEventHits = 5,
                             .stepBackNs = 5'000};
const StreamingParams kUnbounded{}; // the ESS EFU's: no bounds

const Shape kShapes[] = {
    {1'000, 0, 0, -1, 0},        // in order, a neutron every few hits
    {200, 0, 0, -1, 0},          // dense: long time clusters, several coordinates each
    {3'000, 10, 2'000, -1, 0},   // out of order within a few clusters
    {3'000, 5, 200'000, -1, 0},  // steps back past the step-back bound
    {1'000, 0, 0, 1, 0},         // grids dead: the stale bound
    {600, 0, 0, -1, 30},         // bursts at one time: the hit bounds
    {0, 0, 0, -1, 0},            // every hit at one time
};

TEST(StreamingBuilder2DReference, SameAsBefore) {
  uint64_t seed = 1;
  for (const StreamingParams &p : {kLoose, kTight, kUnbounded}) {
    for (const Shape &s : kShapes) {
      for (int run = 0; run < 4; ++run) {
        compare(seed++, p, s, 300);
      }
    }
  }
}

TEST(StreamingBuilder2DReference, SameAsBeforeRandomParams) {
  std::mt19937_64 rng(99);
  for (int run = 0; run < 60; ++run) {
    const StreamingParams p = reference::randomParams(rng, 6, 10);
    const Shape &s = kShapes[rng() % std::size(kShapes)];
    compare(1000 + static_cast<uint64_t>(run), p, s, 200);
  }
}

// Streams whose clusters of a flush leave start order often (the builder finds that while it
// clusters, instead of checking the lists): many hits before the last, so that time clusters
// hold several coordinates in an order other than their times', and a datagram's first hits
// fall behind the time cluster the last one left open.
TEST(StreamingBuilder2DReference, SameAsBeforeClustersOutOfOrder) {
  const Shape shapes[] = {
      {400, 50, 700, -1, 0},   // dense, back within the gap and past it
      {900, 30, 3'000, -1, 0}, // sparse, back behind the open cluster
      {150, 20, 400, -1, 0},   // long time clusters, mostly in order
  };
  uint64_t seed = 5000;
  for (const StreamingParams &p : {kLoose, kTight, kUnbounded}) {
    for (const Shape &s : shapes) {
      for (int run = 0; run < 4; ++run) {
        compare(seed++, p, s, 300);
      }
    }
  }
}

} // namespace
} // namespace efu::reduction
