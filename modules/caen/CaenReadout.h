// SPDX-License-Identifier: BSD-2-Clause
// CAEN charge-division readout (docs/wire-formats.md §4): packed layout.
#pragma once

#include <cstddef>
#include <cstdint>

namespace efu::caen {

#pragma pack(push, 1)
/// One 24-byte CAEN readout, little-endian.
struct CaenReadout {
  uint8_t fiber;     ///< <= 23
  uint8_t fen;       ///< <= 23
  uint16_t length;   ///< bytes of this readout: must be 24
  uint32_t timeHigh; ///< seconds
  uint32_t timeLow;  ///< 88.0525 MHz ticks, <= 88 052 499
  uint8_t flagsOm;
  uint8_t group; ///< the FEN's group (LoKI: 0..7, layer group % 4)
  uint16_t unused;
  int16_t ampA;
  int16_t ampB;
  int16_t ampC;
  int16_t ampD;
};
#pragma pack(pop)
static_assert(sizeof(CaenReadout) == 24, "CAEN readout is 24 bytes");
static_assert(offsetof(CaenReadout, ampA) == 16, "amplitudes start at byte 16");

} // namespace efu::caen
