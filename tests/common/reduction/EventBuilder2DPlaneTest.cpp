// SPDX-License-Identifier: BSD-2-Clause
// EventBuilder2D::plane(): hits inserted through a plane's handle form the events insert() forms.
#include "common/reduction/EventBuilder2D.h"
#include "tests/common/reduction/SameEvents.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

using namespace efu::reduction;

namespace {

TEST(EventBuilder2DPlane, InsertsAsInsertDoes) {
  std::mt19937_64 rng(7);
  for (const bool split : {false, true}) {
    BuilderParams p;
    p.splitMultiEvents = split;
    EventBuilder2D viaInsert(p), viaPlane(p);
    const EventBuilder2D::Plane planes[2] = {viaPlane.plane(0), viaPlane.plane(1)};
    int events = 0;
    for (int flush = 0; flush < 300; ++flush) {
      uint64_t t = 1'000'000 * static_cast<uint64_t>(flush) + 1000;
      const size_t n = rng() % 40;
      for (size_t i = 0; i < n; ++i) {
        // Mostly in time order, now and then a step back (the builder then sorts the plane).
        t = rng() % 8 == 0 ? t - rng() % 300 : t + rng() % 700;
        const auto coord = static_cast<uint16_t>(rng() % 24);
        const auto weight = static_cast<uint16_t>(rng() % 1024);
        const auto plane = static_cast<uint8_t>(rng() % 2);
        viaInsert.insert(Hit{t, coord, weight, plane});
        planes[plane].insert(t, coord, weight);
      }
      std::vector<Event2D> a, b;
      const BuilderStats sa = viaInsert.flush(a);
      const BuilderStats sb = viaPlane.flush(b);
      EXPECT_EQ(sa.spanTooLarge, sb.spanTooLarge);
      EXPECT_EQ(sa.splitSpanTooLarge, sb.splitSpanTooLarge);
      EXPECT_EQ(sa.discardedSpanTooLarge, sb.discardedSpanTooLarge);
      ASSERT_NO_FATAL_FAILURE(reference::expectSameEvents(b, a));
      events += static_cast<int>(a.size());
    }
    EXPECT_GT(events, 500);
  }
}

} // namespace
