// SPDX-License-Identifier: BSD-2-Clause
// The ESS Multi-Blade digital geometry: a channel's coordinate, and its inverse for readoutgen.
// Hot path, header-only.
#pragma once

#include "modules/vmm3/Vmm3Config.h"

#include <cstdint>

namespace efu::vmm3 {

/// The channels a plane reads are firstChannel(wire) .. firstChannel(wire) + channels(wire) - 1:
/// wires on 16..47, strips on 0..63.
constexpr uint8_t firstChannel(bool wire) noexcept {
  return wire ? kFirstWireChannel : 0;
}
constexpr uint8_t channels(bool wire) noexcept {
  return wire ? kLastWireChannel - kFirstWireChannel + 1 : kStrips;
}

/// True when `channel` is one the plane reads (the module tabulates it per VMM and channel).
constexpr bool validChannel(bool wire, uint8_t channel) noexcept {
  return static_cast<uint8_t>(channel - firstChannel(wire)) < channels(wire);
}

/// The coordinate of a valid channel of a plane whose cassette starts at `offset`:
///   strips: offset + 63 - channel;
///   wires:  offset + 47 - channel (FREIA, AMOR), offset + channel - 16 (ESTIA).
constexpr uint32_t coordinateOf(Layout layout, bool wire, uint16_t offset,
                                uint8_t channel) noexcept {
  if (!wire) {
    return offset + (kStrips - 1u) - channel;
  }
  return layout == Layout::Estia ? offset + channel - uint32_t{kFirstWireChannel}
                                 : offset + uint32_t{kLastWireChannel} - channel;
}

/// The inverse: the channel reading coordinate `coord` in a cassette starting at `offset`, or
/// -1 when the cassette does not reach it.
constexpr int channelOf(Layout layout, bool wire, uint16_t offset, uint32_t coord) noexcept {
  if (coord < offset) {
    return -1;
  }
  const uint32_t along = coord - offset;
  if (!wire) {
    return along < kStrips ? static_cast<int>(kStrips - 1 - along) : -1;
  }
  if (along >= kWiresPerCassette) {
    return -1;
  }
  return layout == Layout::Estia ? static_cast<int>(kFirstWireChannel + along)
                                 : static_cast<int>(kLastWireChannel - along);
}

/// The cassette covering image position (x, y) (it need not be configured); < 256.
constexpr uint32_t cassetteOf(const Vmm3Config &c, uint32_t x, uint32_t y) noexcept {
  if (c.layout == Layout::Estia) {
    return ((y / kStripsPerCassette) * kEstiaCassettesPerRow + x / kWiresPerCassette) & 0xFF;
  }
  return (y / kWiresPerCassette) & 0xFF;
}

/// A cluster centre as the ESS geometry takes it: rounded half away from zero, as a uint16.
/// A centre without weight (every hit corrected to ADC 0: NaN) is 0, which is what the ESS
/// EFU's conversion gives on x86-64.
inline uint16_t centreCoordinate(double centre) noexcept {
  if (!(centre >= 0) || centre >= 65535.5) {
    return 0;
  }
  // std::round without the libm call: the fraction of a non-negative double below 2^52 is exact.
  const auto whole = static_cast<uint32_t>(centre);
  return static_cast<uint16_t>(whole + (centre - whole >= 0.5 ? 1U : 0U));
}

} // namespace efu::vmm3
