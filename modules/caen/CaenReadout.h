// SPDX-License-Identifier: BSD-2-Clause
// CAEN charge-division readout (docs/wire-formats.md §4): packed layout and the position → pixel rule.
#pragma once

#include <cstddef>
#include <cstdint>

namespace efu::caen {

#pragma pack(push, 1)
/// One 24-byte CAEN readout, little-endian.
struct CaenReadout {
  uint8_t fiber;      ///< <= 23
  uint8_t fen;        ///< <= 23
  uint16_t length;    ///< bytes of this readout: must be 24
  uint32_t timeHigh;  ///< seconds
  uint32_t timeLow;   ///< 88.0525 MHz ticks, <= 88 052 499
  uint8_t flagsOm;
  uint8_t group;      ///< selects the tube together with (fiber, FEN)
  uint16_t unused;
  int16_t ampA;
  int16_t ampB;
  int16_t ampC;
  int16_t ampD;
};
#pragma pack(pop)
static_assert(sizeof(CaenReadout) == 24, "CAEN readout is 24 bytes");
static_assert(offsetof(CaenReadout, ampA) == 16, "amplitudes start at byte 16");

/// Pixel index along a tube (0 .. pixelsPerTube-1) for amplitudes with a + b > 0, a >= 0,
/// b >= 0: floor(b * pixelsPerTube / (a + b)), clamped to the last pixel (b == a + b).
constexpr uint32_t positionIndex(int32_t a, int32_t b, uint32_t pixelsPerTube) noexcept {
  const auto sum = static_cast<uint32_t>(a + b);
  const uint32_t pos = static_cast<uint32_t>(b) * pixelsPerTube / sum;
  return pos < pixelsPerTube ? pos : pixelsPerTube - 1;
}

/// The B amplitude that puts a readout with amplitude sum `sum` in the middle of pixel `pos`:
/// floor((2 pos + 1) sum / (2 pixelsPerTube)). positionIndex(sum - b, b) == pos whenever
/// sum >= 2 * pixelsPerTube (the generator guarantees it).
constexpr int32_t amplitudeBForPosition(uint32_t pos, int32_t sum, uint32_t pixelsPerTube) noexcept {
  return static_cast<int32_t>((2 * static_cast<int64_t>(pos) + 1) * sum /
                              (2 * static_cast<int64_t>(pixelsPerTube)));
}

} // namespace efu::caen
