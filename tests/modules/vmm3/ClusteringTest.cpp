// SPDX-License-Identifier: BSD-2-Clause
// VMM3 clustering and matching: strips, gaps, windows, cross-batch clusters, late hits, flush.
#include "modules/vmm3/Clustering.h"

#include <gtest/gtest.h>

#include <vector>

using namespace efu::vmm3;

namespace {

class Recorder final : public EventOutput {
public:
  void event(const Event &e) noexcept override { events.push_back(e); }
  void unmatched(Plane plane, const Cluster &c) noexcept override {
    (plane == Plane::X ? unmatchedX : unmatchedY).push_back(c);
  }
  std::vector<Event> events;
  std::vector<Cluster> unmatchedX;
  std::vector<Cluster> unmatchedY;
};

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr uint32_t kNx = 256;
constexpr uint32_t kNy = 128;

EventFormer::Params params(int64_t timeGap = 100, uint32_t stripGap = 1, int64_t window = 200,
                           int64_t sortWindow = 1000) {
  EventFormer::Params p;
  p.planes.timeGapNs = timeGap;
  p.planes.stripGap = stripGap;
  p.planes.sortWindowNs = sortWindow;
  p.planes.maxGroupHits = 64;
  p.planes.sortCapacity = 256;
  p.matchWindowNs = window;
  p.nx = kNx;
  p.ny = kNy;
  p.matchCapacity = 64;
  return p;
}

class Clustering : public ::testing::Test {
protected:
  void make(const EventFormer::Params &p) { former_ = std::make_unique<EventFormer>(p, out_); }
  void x(int64_t t, uint16_t strip, uint16_t adc = 100) {
    EXPECT_TRUE(former_->addHit(Plane::X, Hit{kT0 + t, strip, adc}));
  }
  void y(int64_t t, uint16_t strip, uint16_t adc = 100) {
    EXPECT_TRUE(former_->addHit(Plane::Y, Hit{kT0 + t, strip, adc}));
  }
  Recorder out_;
  std::unique_ptr<EventFormer> former_;
};

TEST_F(Clustering, SingleStripEventWithPixelId) {
  make(params());
  x(0, 10);
  y(0, 20);
  former_->advance();
  EXPECT_TRUE(out_.events.empty()); // still open: a later hit could join
  former_->flush();
  ASSERT_EQ(out_.events.size(), 1U);
  const Event &e = out_.events[0];
  EXPECT_EQ(e.x, 10U);
  EXPECT_EQ(e.y, 20U);
  EXPECT_EQ(e.pixelId, static_cast<int32_t>(20 * kNx + 10 + 1));
  EXPECT_EQ(e.timeNs, kT0);
  EXPECT_EQ(e.cx.hits, 1);
  EXPECT_TRUE(former_->idle());
}

TEST_F(Clustering, WideClusterChargeWeightedCentre) {
  make(params());
  // Triangle 1:2:3:2:1 around strip 50 (x), uneven around 70 (y): centre 70.75 → 71.
  const uint16_t adc[] = {40, 80, 120, 80, 40};
  for (int i = 0; i < 5; ++i) {
    x(i * 3, static_cast<uint16_t>(48 + i), adc[i]);
  }
  y(2, 70, 100);
  y(1, 71, 300);
  former_->flush();
  ASSERT_EQ(out_.events.size(), 1U);
  const Event &e = out_.events[0];
  EXPECT_EQ(e.cx.hits, 5);
  EXPECT_EQ(e.cx.charge, 360U);
  EXPECT_EQ(e.cx.stripMin, 48);
  EXPECT_EQ(e.cx.stripMax, 52);
  EXPECT_EQ(e.x, 50U);
  EXPECT_EQ(e.y, 71U);
  EXPECT_EQ(e.timeNs, kT0); // earliest hit of either plane
  EXPECT_EQ(e.cy.timeNs, kT0 + 1);
  EXPECT_EQ(e.cx.endTimeNs, kT0 + 12);
}

TEST_F(Clustering, StripGapSplitsAndJoins) {
  make(params(100, 1));
  // stripGap 1: neighbours may differ by 2 (one missing strip), not by 3.
  x(0, 10);
  x(0, 11);
  x(1, 13); // joins (one missing strip)
  x(1, 16); // splits (two missing strips)
  x(2, 17);
  former_->flush();
  EXPECT_EQ(former_->stats().planes[0].clusters, 2);
  ASSERT_EQ(out_.unmatchedX.size(), 2U);
  EXPECT_EQ(out_.unmatchedX[0].stripMin, 10);
  EXPECT_EQ(out_.unmatchedX[0].stripMax, 13);
  EXPECT_EQ(out_.unmatchedX[1].stripMin, 16);
  EXPECT_EQ(out_.unmatchedX[1].hits, 2);
}

TEST_F(Clustering, StripGapZeroNeedsAdjacentStrips) {
  make(params(100, 0));
  x(0, 10);
  x(0, 11);
  x(0, 13);
  former_->flush();
  EXPECT_EQ(former_->stats().planes[0].clusters, 2);
}

TEST_F(Clustering, TimeGapJustInsideJoinsJustOutsideSplits) {
  make(params(100));
  x(0, 10);
  x(100, 11); // exactly the gap: same cluster
  x(201, 12); // 101 after the previous hit: new cluster
  former_->flush();
  ASSERT_EQ(out_.unmatchedX.size(), 2U);
  EXPECT_EQ(out_.unmatchedX[0].hits, 2);
  EXPECT_EQ(out_.unmatchedX[1].timeNs, kT0 + 201);
}

TEST_F(Clustering, ClusterSpanningTwoBatchesFormsOnce) {
  make(params());
  x(0, 30);
  x(5, 31);
  y(0, 40);
  former_->advance(); // end of datagram 1
  EXPECT_TRUE(out_.events.empty());
  x(10, 32);
  y(8, 41);
  former_->advance(); // end of datagram 2
  // Later neutrons push both planes past the sort window, the gap and the match window.
  x(5000, 100);
  y(5000, 100);
  former_->advance();
  EXPECT_TRUE(out_.events.empty()); // 5000 is still inside the 1000 ns sort window
  x(10'000, 100);
  y(10'000, 100);
  former_->advance();
  ASSERT_EQ(out_.events.size(), 1U);
  EXPECT_EQ(out_.events[0].cx.hits, 3);
  EXPECT_EQ(out_.events[0].cy.hits, 2);
  EXPECT_EQ(out_.events[0].x, 31U);
  former_->flush();
  EXPECT_EQ(out_.events.size(), 3U);
  EXPECT_TRUE(out_.unmatchedX.empty());
  EXPECT_TRUE(out_.unmatchedY.empty());
}

TEST_F(Clustering, MatchWindowEdges) {
  make(params(100, 1, 200));
  x(0, 10);
  y(200, 20); // |dt| = window: matched
  x(10'000, 10);
  y(10'201, 20); // window + 1: both unmatched
  y(20'000, 30);
  x(20'200, 40); // y first this time, still inside
  former_->flush();
  ASSERT_EQ(out_.events.size(), 2U);
  EXPECT_EQ(out_.events[0].timeNs, kT0);
  EXPECT_EQ(out_.events[1].timeNs, kT0 + 20'000);
  EXPECT_EQ(out_.events[1].x, 40U);
  ASSERT_EQ(out_.unmatchedX.size(), 1U);
  ASSERT_EQ(out_.unmatchedY.size(), 1U);
  EXPECT_EQ(out_.unmatchedX[0].timeNs, kT0 + 10'000);
  EXPECT_EQ(out_.unmatchedY[0].timeNs, kT0 + 10'201);
  const FormerStats s = former_->stats();
  EXPECT_EQ(s.events, 2);
  EXPECT_EQ(s.unmatched[0], 1);
  EXPECT_EQ(s.unmatched[1], 1);
}

TEST_F(Clustering, MatchingWaitsForTheOtherPlane) {
  make(params(100, 1, 200, 0));
  x(0, 10);
  x(1000, 50); // closes x's first group
  former_->advance();
  EXPECT_TRUE(out_.events.empty()); // y may still send a partner for t = 0
  EXPECT_TRUE(out_.unmatchedX.empty());
  y(150, 20);
  y(1000, 60);
  former_->advance(); // y's watermark (1000) is past 0 + 200: decide
  ASSERT_EQ(out_.events.size(), 1U);
  EXPECT_EQ(out_.events[0].y, 20U);
}

TEST_F(Clustering, SmallDisorderIsSortedLateHitsAreCounted) {
  make(params(100, 1, 200, 1000));
  x(500, 11);
  x(0, 10); // 500 ns out of order: inside the 1000 ns sort window
  y(0, 20);
  x(3000, 90);                                                      // releases hits up to 2000
  EXPECT_FALSE(former_->addHit(Plane::X, Hit{kT0 + 400, 12, 100})); // older than released ones
  former_->flush();
  const FormerStats s = former_->stats();
  EXPECT_EQ(s.planes[0].late, 1);
  EXPECT_EQ(s.planes[1].late, 0);
  // 0 and 500 are 500 ns apart (> gap 100): separate clusters despite arriving out of order.
  EXPECT_EQ(s.planes[0].clusters, 3);
  ASSERT_EQ(out_.events.size(), 1U);
  EXPECT_EQ(out_.events[0].x, 10U);
}

TEST_F(Clustering, ABigJumpBackInTimeIsARestartNotLateHits) {
  make(params(100, 1, 200, 1000));
  x(5'000'000'000, 10);
  y(5'000'000'000, 20);
  x(5'000'010'000, 10); // releases the first hits
  y(5'000'010'000, 20);
  // A sender restarted: 5 s earlier. Everything open is flushed, then time starts over.
  x(0, 30);
  y(0, 40);
  former_->flush();
  const FormerStats s = former_->stats();
  EXPECT_EQ(s.restarts, 1);
  EXPECT_EQ(s.planes[0].late, 0);
  ASSERT_EQ(out_.events.size(), 3U);
  EXPECT_EQ(out_.events[2].x, 30U);
  // A jump back within a second is still late.
  make(params(100, 1, 200, 1000));
  x(5'000'000'000, 10);
  x(5'000'010'000, 10);
  EXPECT_FALSE(former_->addHit(Plane::X, Hit{kT0 + 4'500'000'000, 1, 100}));
  EXPECT_EQ(former_->stats().restarts, 0);
}

TEST_F(Clustering, TwoNeutronsAtOnceSeparateByStrip) {
  make(params());
  x(0, 10);
  x(0, 11);
  x(2, 100);
  x(3, 101);
  y(1, 20);
  y(2, 21);
  former_->flush();
  EXPECT_EQ(former_->stats().planes[0].clusters, 2);
  EXPECT_EQ(out_.events.size(), 1U);
  EXPECT_EQ(out_.unmatchedX.size(), 1U);
}

TEST_F(Clustering, FullGroupClosesEarlyAndFullBuffersNeverLoseHits) {
  EventFormer::Params p = params(100, 1, 200, 0);
  p.planes.maxGroupHits = 16;
  make(p);
  for (int i = 0; i < 40; ++i) {
    x(i, static_cast<uint16_t>(i % 4));
  }
  former_->flush();
  const FormerStats s = former_->stats();
  EXPECT_EQ(s.planes[0].forcedCloses, 2); // 40 hits in groups of 16, 16, 8
  EXPECT_EQ(s.planes[0].clusters, 3);
  uint32_t hits = 0;
  for (const Cluster &c : out_.unmatchedX) {
    hits += c.hits;
  }
  EXPECT_EQ(hits, 40U);
}

TEST_F(Clustering, ManyEventsInOrderAllMatch) {
  make(params());
  for (int n = 0; n < 10'000; ++n) {
    const int64_t t = n * 1000;
    const auto s = static_cast<uint16_t>(n % 120 + 2);
    x(t, s);
    x(t + 3, static_cast<uint16_t>(s + 1));
    y(t + 1, static_cast<uint16_t>(s % 100));
    if (n % 7 == 0) {
      former_->advance();
    }
  }
  former_->flush();
  EXPECT_EQ(out_.events.size(), 10'000U);
  EXPECT_TRUE(out_.unmatchedX.empty());
  EXPECT_EQ(former_->stats().matchOverflows, 0);
  for (size_t n = 0; n < out_.events.size(); n += 997) {
    EXPECT_EQ(out_.events[n].timeNs, kT0 + static_cast<int64_t>(n) * 1000);
  }
}

} // namespace
