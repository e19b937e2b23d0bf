// SPDX-License-Identifier: BSD-2-Clause
// The ESS NMX digital geometry: a strip's coordinate, the uTPC pixel, and the inverse for
// readoutgen. Hot path, header-only.
#pragma once

#include "modules/nmx/NmxConfig.h"

#include <cstdint>

namespace efu::nmx {

/// The coordinate of channel `channel` (0..63) of ASIC `asic` (VMM % 2) of a hybrid:
///   Offset + 64 asic + channel, or with ReversedChannels Offset + 64 (1 - asic) + 63 - channel.
/// Offsets are at most kMaxOffset, so it never reaches the ESS invalid coordinate 65535.
constexpr uint16_t coordinateOf(const Hybrid &h, uint8_t asic, uint8_t channel) noexcept {
  return static_cast<uint16_t>(h.reversed
                                   ? h.offset + (1 - asic) * kStrips + (kStrips - 1) - channel
                                   : h.offset + asic * kStrips + channel);
}

/// The inverse: which (asic, channel) of hybrid `h` reads coordinate `coord`; false when the
/// hybrid does not cover it.
constexpr bool channelOf(const Hybrid &h, uint32_t coord, uint8_t &asic,
                         uint8_t &channel) noexcept {
  if (coord < h.offset || coord >= uint32_t{h.offset} + 2 * kStrips) {
    return false;
  }
  const uint32_t along = coord - h.offset; // 0..127
  if (h.reversed) {
    asic = static_cast<uint8_t>(1 - along / kStrips);
    channel = static_cast<uint8_t>(kStrips - 1 - along % kStrips);
  } else {
    asic = static_cast<uint8_t>(along / kStrips);
    channel = static_cast<uint8_t>(along % kStrips);
  }
  return true;
}

} // namespace efu::nmx
