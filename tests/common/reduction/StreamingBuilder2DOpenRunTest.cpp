// SPDX-License-Identifier: BSD-2-Clause
// StreamingBuilder2D's time clusters left open over flushes, against the builder as it was
// before issue 39's changes (StreamingBuilder2DReference.h): datagrams of a few hits close
// together, so that time clusters stay open over many flushes, with restarts between the inserts
// and the flush (the unflushed hits stay), full flushes, flushes of one plane only and the hit
// bound small enough to act. Every event, bound count and the state after each call must be the
// same.
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

void compareOpenRuns(uint64_t seed, const StreamingParams &params, uint64_t maxStep,
                     int backPercent) {
  std::mt19937_64 rng(seed);
  StreamingBuilder2D b(params);
  reference::ReferenceBuilder r(params);
  std::vector<Event2D> outB, outR;
  uint64_t t = 1'000'000;
  bool unflushed = false; // hits inserted and not yet flushed (a restart leaves them)
  for (int d = 0; d < 400; ++d) {
    const auto hits = static_cast<int>(rng() % 5);
    const auto only = static_cast<int>(rng() % 4); // 0 or 1: this datagram's hits on one plane
    for (int k = 0; k < hits; ++k) {
      if (static_cast<int>(rng() % 100) < backPercent) {
        t -= std::min<uint64_t>(t, rng() % 1'500);
      } else {
        t += rng() % (maxStep + 1);
      }
      const auto plane = static_cast<uint8_t>(only < 2 ? only : static_cast<int>(rng() % 2));
      const Hit h{t, static_cast<uint16_t>(rng() % 6), static_cast<uint16_t>(rng() % 1024), plane};
      b.insert(h);
      r.insert(h);
    }
    unflushed = unflushed || hits > 0;
    ASSERT_EQ(b.received(), unflushed) << "seed " << seed << " datagram " << d;
    const unsigned what = rng() % 100;
    outB.clear();
    outR.clear();
    if (what < 10) {
      b.restart(outB);
      r.restart(outR);
    } else if (what < 15) {
      b.flush(outB, true);
      r.flush(outR, true);
      unflushed = false;
    } else if (what < 85) {
      b.flush(outB);
      r.flush(outR);
      unflushed = false;
    } // else the hits wait for the next datagram's flush
    {
      SCOPED_TRACE("seed " + std::to_string(seed) + " datagram " + std::to_string(d));
      expectSameEvents(outB, outR);
      expectSameState(b, r);
    }
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
  reference::expectSameFinalFlush(b, r, outB, outR);
  ASSERT_EQ(b.pendingHits(), 0U);
}

TEST(StreamingBuilder2DOpenRun, SameAsBefore) {
  const StreamingParams loose{.staleNs = 1'000'000'000,
                              .maxWaiting = 16384,
                              .maxOpenHits = 4096,
                              .maxEventHits = 65536,
                              .stepBackNs = 100'000'000};
  const StreamingParams tight{.matchTimeGapNs = 300,
                              .staleNs = 20'000,
                              .maxWaiting = 6,
                              .maxOpenHits = 3,
                              .maxEventHits = 5,
                              .stepBackNs = 5'000};
  const StreamingParams unbounded{};
  uint64_t seed = 7000;
  for (const StreamingParams &p : {loose, tight, unbounded}) {
    for (const uint64_t step : {uint64_t{0}, uint64_t{300}, uint64_t{600}, uint64_t{2'000}}) {
      for (const int back : {0, 10}) {
        for (int run = 0; run < 3; ++run) {
          compareOpenRuns(seed++, p, step, back);
        }
      }
    }
  }
}

} // namespace
} // namespace efu::reduction
