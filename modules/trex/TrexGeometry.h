// SPDX-License-Identifier: BSD-2-Clause
// The ESS EFU's TREX and LET digital geometry: which hybrid reads wires, and the channel maps
// to the wire coordinate (x * 16 + z) and to the grid coordinate (y). The arithmetic is the
// ESS EFU's, in 16 bits: a rotated short vessel's grid coordinate wraps below 0, and a
// computed 65535 is refused as the ESS EFU's invalid coordinate.
#pragma once

#include "modules/trex/TrexConfig.h"

#include <cstdint>

namespace efu::trex {

constexpr uint16_t kInvalidCoord = 65535;
constexpr uint16_t kDepth = 16;      ///< wires per column (z)
constexpr uint16_t kColumnWidth = 6; ///< columns per FEN half of a vessel

/// TREX reads wires on hybrid 0, LET on hybrid 1; every other hybrid reads grids.
constexpr bool isWire(Instrument i, uint8_t hybrid) noexcept {
  return hybrid == (i == Instrument::Trex ? 0 : 1);
}

/// The wire coordinate x * 16 + z of (hybrid, vmm % 2, channel), or kInvalidCoord.
constexpr uint16_t wireCoord(Instrument i, uint8_t ring, uint8_t fen, uint8_t hybrid, uint8_t asic,
                             uint8_t channel, uint16_t xOffset, bool rotated) noexcept {
  if (i == Instrument::Let) {
    channel = static_cast<uint8_t>(channel % 2 == 0 ? channel + 1 : channel - 1); // pairs swapped
  }
  if (hybrid != (i == Instrument::Trex ? 0 : 1) || asic > 1 || channel > 63 ||
      (asic == 0 && channel < 32)) {
    return kInvalidCoord;
  }
  const uint16_t vmmIndex = i == Instrument::Trex ? hybrid * 2 + asic : asic;
  auto coord = static_cast<uint16_t>(vmmIndex * 64 + channel - 32);
  // TREX: odd FENs read the second column block; LET: even rings do.
  if (i == Instrument::Trex ? (fen % 2) != 0 : (ring % 2) == 0) {
    coord = static_cast<uint16_t>(coord + kDepth * kColumnWidth);
  }
  if (rotated) {
    const auto column = static_cast<uint8_t>(coord >> 4);
    const auto depth = static_cast<uint8_t>(coord % kDepth);
    coord = static_cast<uint16_t>(kDepth * static_cast<uint8_t>(11 - column) + depth);
  }
  return static_cast<uint16_t>(coord + kDepth * xOffset);
}

/// The grid coordinate (y) of (hybrid, vmm % 2, channel), or kInvalidCoord.
constexpr uint16_t gridCoord(Instrument i, uint8_t hybrid, uint8_t asic, uint8_t channel,
                             uint16_t yOffset, bool rotated, bool isShort) noexcept {
  bool valid = false;
  if (isShort) {
    // A short vessel's 51 grids on one VMM: TREX hybrid 1, LET hybrid 0.
    valid = hybrid == (i == Instrument::Trex ? 1 : 0) && asic == 0 && channel <= 50;
  } else if (hybrid == 1) {
    valid = asic == 0 ? channel >= 58 && channel <= 63 : asic == 1;
  } else if (hybrid == 2) {
    valid = asic == 1 ? channel <= 5 : asic == 0;
  }
  if (!valid) {
    return kInvalidCoord;
  }
  auto y = isShort ? uint16_t{channel}
                   : static_cast<uint16_t>((hybrid * 2 + asic - 2) * 64 + channel - 58);
  if (rotated) {
    y = static_cast<uint16_t>(-y);
  }
  return static_cast<uint16_t>(y + yOffset);
}

/// std::round of a cluster centre to 16 bits, as the ESS EFU casts it; false for a centre the
/// cast cannot represent (NaN when every weight is 0: undefined in the ESS EFU).
inline bool roundCentre(double centre, uint16_t &out) noexcept {
  if (!(centre >= 0) || centre >= 65535.5) {
    return false;
  }
  const auto whole = static_cast<uint32_t>(centre);
  out = static_cast<uint16_t>(whole + (centre - whole >= 0.5 ? 1U : 0U));
  return true;
}

} // namespace efu::trex
