// SPDX-License-Identifier: BSD-2-Clause
// Where a trex readout goes, as tables made once from the configuration: its Config entry, its
// event builder, the vessel's MinADC, its plane and its channel's coordinate, so that a readout
// costs a few loads instead of the Config lookups and the channel maps' arithmetic
// (TrexGeometry.h) per readout.
#pragma once

#include "common/readout/Vmm3Readout.h"
#include "common/reduction/StreamingBuilder2D.h"
#include "modules/trex/TrexConfig.h"
#include "modules/trex/TrexGeometry.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace efu::trex {

/// A configured (ring, FEN, vmm): Config entry * 2 + vmm % 2.
/// What a readout needs sits in one place: its route's hits go to `hits`, its channel's
/// coordinate is a load from `coord`.
struct TrexRoute {
  /// The builder's plane (TrexRoutes::bind()).
  reduction::StreamingBuilder2D::Plane hits;
  uint16_t minAdc = 0;  ///< the vessel's MinADC
  uint16_t entry = 0;   ///< index in TrexConfig::hybrids
  uint16_t builder = 0; ///< the entry's event builder (ring, FEN): index in builderKeys()
  uint8_t plane = 0;    ///< 0 wires, 1 grids
  /// Per channel its wire or grid coordinate, or kInvalidCoord.
  std::array<uint16_t, vmm3::kChannelsPerVmm> coord{};
};

class TrexRoutes {
public:
  explicit TrexRoutes(const TrexConfig &c)
      : routeOf_([&c](uint8_t ring, uint8_t fen, uint8_t vmm) {
          const int16_t s = c.slot(ring, fen, static_cast<uint8_t>(vmm >> 1));
          return s < 0 ? -1 : s * 2 + (vmm & 1);
        }),
        routes_(c.hybrids.size() * 2) {
    for (const TrexHybrid &h : c.hybrids) {
      keys_.push_back(static_cast<uint16_t>(builderKey(h.ring, h.fen)));
    }
    std::sort(keys_.begin(), keys_.end());
    keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
    for (size_t i = 0; i < c.hybrids.size(); ++i) {
      const TrexHybrid &h = c.hybrids[i];
      const bool wire = isWire(c.instrument, h.hybrid);
      for (uint8_t asic = 0; asic < 2; ++asic) {
        const size_t route = i * 2 + asic;
        TrexRoute &to = routes_[route];
        to.minAdc = h.minAdc;
        to.entry = static_cast<uint16_t>(i);
        to.builder = static_cast<uint16_t>(builderOf(builderKey(h.ring, h.fen)));
        to.plane = static_cast<uint8_t>(wire ? 0 : 1);
        for (uint8_t ch = 0; ch <= vmm3::kMaxChannel; ++ch) {
          to.coord[ch] =
              wire
                  ? wireCoord(c.instrument, h.ring, h.fen, h.hybrid, asic, ch, h.xOffset, h.rotated)
                  : gridCoord(c.instrument, h.hybrid, asic, ch, h.yOffset, h.rotated, h.isShort);
        }
      }
    }
  }

  /// The route of a readout that passed checkReadout(), or < 0: ring above 10, FEN above 13 or
  /// (ring, FEN, vmm / 2) not in Config (the module's readouts.error_mapping).
  [[nodiscard]] int16_t routeOf(const vmm3::Vmm3Readout &r) const noexcept { return routeOf_(r); }
  [[nodiscard]] const TrexRoute &route(int16_t route) const noexcept {
    return routes_[static_cast<size_t>(route)];
  }
  /// The event builders' keys (builderKey of their ring and FEN), in key order: one per (ring,
  /// FEN) of the Config entries, as the ESS EFU loops them.
  [[nodiscard]] const std::vector<uint16_t> &builderKeys() const noexcept { return keys_; }
  /// The builder of a key, or -1 when no Config entry has it (not for the hot path).
  [[nodiscard]] int builderOf(size_t key) const noexcept {
    const auto it = std::lower_bound(keys_.begin(), keys_.end(), key);
    return it != keys_.end() && *it == key ? static_cast<int>(it - keys_.begin()) : -1;
  }
  /// Points each route at its builder's plane; `builders` in builderKeys() order, not moved
  /// afterwards.
  void bind(std::vector<reduction::StreamingBuilder2D> &builders) noexcept {
    for (TrexRoute &to : routes_) {
      to.hits = builders[to.builder].plane(to.plane);
    }
  }

private:
  vmm3::RouteTable routeOf_;
  std::vector<TrexRoute> routes_;
  std::vector<uint16_t> keys_;   ///< builder -> builder key
};

} // namespace efu::trex
