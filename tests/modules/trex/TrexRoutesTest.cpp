// SPDX-License-Identifier: BSD-2-Clause
// TrexRoutes (the module's per-readout tables) against what they replace: the Config lookup,
// the vessel's MinADC and the channel maps of TrexGeometry.h, over every address a readout that
// passed checkReadout() can have, for the shipped TREX and LET files.
#include "modules/trex/TrexRoutes.h"
#include "tests/modules/trex/TrexTestSupport.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace efu::trex {
namespace {

void expectSameAsGeometry(const std::string &file) {
  const TrexConfig c = parseTrexConfig(test::shipped(file), file);
  const TrexRoutes routes(c);
  int64_t mapped = 0;
  for (unsigned fiber = 0; fiber <= readout::kMaxFiber; ++fiber) {
    for (unsigned fen = 0; fen <= readout::kMaxFen; ++fen) {
      for (unsigned vmm = 0; vmm <= vmm3::kMaxVmm; ++vmm) {
        vmm3::Vmm3Readout r{};
        r.fiber = static_cast<uint8_t>(fiber);
        r.fen = static_cast<uint8_t>(fen);
        r.vmm = static_cast<uint8_t>(vmm);
        const auto ring = static_cast<uint8_t>(fiber / 2);
        const auto hybrid = static_cast<uint8_t>(vmm >> 1);
        const int16_t slot = ring > kMaxRing || fen > kMaxFen
                                 ? -1
                                 : c.slot(ring, static_cast<uint8_t>(fen), hybrid);
        const int16_t route = routes.routeOf(r);
        ASSERT_EQ(route < 0, slot < 0) << fiber << " " << fen << " " << vmm;
        if (slot < 0) {
          continue;
        }
        ++mapped;
        const TrexHybrid &h = c.hybrids[static_cast<size_t>(slot)];
        const TrexRoute &to = routes.route(route);
        EXPECT_EQ(to.entry, slot);
        EXPECT_EQ(to.minAdc, h.minAdc);
        const bool wire = isWire(c.instrument, hybrid);
        EXPECT_EQ(to.plane, wire ? 0 : 1);
        const auto asic = static_cast<uint8_t>(vmm & 1);
        for (uint8_t ch = 0; ch <= vmm3::kMaxChannel; ++ch) {
          const uint16_t coord =
              wire ? wireCoord(c.instrument, ring, static_cast<uint8_t>(fen), hybrid, asic, ch,
                               h.xOffset, h.rotated)
                   : gridCoord(c.instrument, hybrid, asic, ch, h.yOffset, h.rotated, h.isShort);
          ASSERT_EQ(routes.route(route).coord[ch], coord)
              << fiber << " " << fen << " " << vmm << " " << int{ch};
        }
      }
    }
  }
  // Both fibers of a ring, both VMMs of each Config entry.
  EXPECT_EQ(mapped, static_cast<int64_t>(c.hybrids.size()) * 4);
}

// The builders are the configured (ring, FEN) keys in key order, each route naming its entry's.
void expectBuildersInKeyOrder(const std::string &file) {
  const TrexConfig c = parseTrexConfig(test::shipped(file), file);
  const TrexRoutes routes(c);
  std::vector<uint16_t> keys;
  for (size_t key = 0; key < kBuilderKeys; ++key) {
    bool configured = false;
    for (const TrexHybrid &h : c.hybrids) {
      configured = configured || builderKey(h.ring, h.fen) == key;
    }
    if (configured) {
      keys.push_back(static_cast<uint16_t>(key));
    }
    EXPECT_EQ(routes.builderOf(key), configured ? static_cast<int>(keys.size()) - 1 : -1) << key;
  }
  EXPECT_EQ(routes.builderKeys(), keys);
  for (size_t i = 0; i < c.hybrids.size(); ++i) {
    const size_t key = builderKey(c.hybrids[i].ring, c.hybrids[i].fen);
    for (int asic = 0; asic < 2; ++asic) {
      const TrexRoute &to = routes.route(static_cast<int16_t>(i * 2 + static_cast<size_t>(asic)));
      EXPECT_EQ(to.entry, i);
      EXPECT_EQ(routes.builderKeys()[to.builder], key);
    }
  }
}

// bind(): a hit inserted through a route's handle reaches its entry's builder, in the route's
// plane, and no other builder (the module inserts through the handle instead of
// builders[to.builder].insert()).
void expectBoundToBuilderPlane(const std::string &file) {
  const TrexConfig c = parseTrexConfig(test::shipped(file), file);
  TrexRoutes routes(c);
  std::vector<reduction::StreamingBuilder2D> builders;
  builders.reserve(routes.builderKeys().size());
  for (size_t b = 0; b < routes.builderKeys().size(); ++b) {
    builders.emplace_back();
  }
  routes.bind(builders);
  for (size_t route = 0; route < c.hybrids.size() * 2; ++route) {
    const TrexRoute &to = routes.route(static_cast<int16_t>(route));
    to.hits.insert(reduction::Hit{1000, 7, 100, to.plane});
    for (size_t b = 0; b < builders.size(); ++b) {
      ASSERT_EQ(builders[b].received(), b == to.builder) << file << " " << route << " " << b;
    }
    std::vector<reduction::Event2D> events;
    builders[to.builder].flush(events, true); // forms the hit's event and forgets the hit
    ASSERT_EQ(events.size(), 1U) << file << " " << route;
    EXPECT_EQ(events[0].a.empty(), to.plane != 0) << file << " " << route;
    EXPECT_EQ(events[0].b.empty(), to.plane == 0) << file << " " << route;
  }
}

TEST(TrexRoutes, BoundTrex) {
  expectBoundToBuilderPlane("trex.json");
}
TEST(TrexRoutes, BoundLet) {
  expectBoundToBuilderPlane("let.json");
}

TEST(TrexRoutes, BuildersTrex) { expectBuildersInKeyOrder("trex.json"); }
TEST(TrexRoutes, BuildersLet) { expectBuildersInKeyOrder("let.json"); }

TEST(TrexRoutes, SameAsGeometryTrex) { expectSameAsGeometry("trex.json"); }
TEST(TrexRoutes, SameAsGeometryLet) { expectSameAsGeometry("let.json"); }

} // namespace
} // namespace efu::trex
