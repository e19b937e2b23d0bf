// SPDX-License-Identifier: BSD-2-Clause
// The Timepix3 camera's readout words and the ESS EVR timing datagram, and the clock arithmetic
// that turns them into nanoseconds, as the ESS EFU's timepix3 module reads them. Shared by the
// module, readoutgen's source and the tests (the source's ground truth uses these functions).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace efu::timepix3 {

// ---- the wire ------------------------------------------------------------------------------

/// A datagram of exactly this size whose first byte is kEvrType is an EVR timing datagram;
/// any other datagram is a sequence of 8-byte little-endian camera words.
constexpr size_t kEvrBytes = 24;
constexpr uint8_t kEvrType = 1;
constexpr size_t kWordBytes = 8;

/// The word type, in the top 4 bits.
constexpr uint8_t kPixelType = 0xB;
constexpr uint8_t kTdcType = 0x6;
/// The TDC kinds (bits 56..59 of a TDC word).
constexpr uint8_t kTdc1Rising = 15;
constexpr uint8_t kTdc1Falling = 10;
constexpr uint8_t kTdc2Rising = 14;
constexpr uint8_t kTdc2Falling = 11;

/// A pixel word's fields. dCol is even (0..254) and sPix a multiple of 4 (0..252): the
/// double-column and super-pixel origins; pix (0..7) places the pixel within them.
struct PixelWord {
  uint16_t dCol = 0;
  uint16_t sPix = 0;
  uint8_t pix = 0;
  uint16_t toa = 0;   ///< 14 bits, 25 ns
  uint16_t tot = 0;   ///< 10 bits
  uint8_t fToA = 0;   ///< 4 bits, 1.5625 ns subtracted
  uint16_t spidr = 0; ///< 16 bits, 409.6 us
};

struct TdcWord {
  uint8_t kind = 0;     ///< kTdc1Rising ...
  uint16_t counter = 0; ///< 12-bit trigger counter
  uint64_t stamp35 = 0; ///< 35-bit coarse time, 3.125 ns
  uint8_t fine = 0;     ///< 4-bit fine time, 0.26 ns
};

struct EvrDatagram {
  uint8_t type = kEvrType;
  uint32_t counter = 0;
  uint32_t pulseSeconds = 0, pulseNanoseconds = 0;
  uint32_t prevPulseSeconds = 0, prevPulseNanoseconds = 0;
};

[[nodiscard]] inline uint64_t loadWord(const uint8_t *p) noexcept {
  uint64_t w;
  std::memcpy(&w, p, sizeof w); // little-endian hosts only (as efu)
  return w;
}
[[nodiscard]] constexpr uint8_t wordType(uint64_t w) noexcept {
  return static_cast<uint8_t>(w >> 60);
}

[[nodiscard]] constexpr PixelWord decodePixel(uint64_t w) noexcept {
  PixelWord p;
  p.dCol = static_cast<uint16_t>((w >> 52) & 0xFE);
  p.sPix = static_cast<uint16_t>((w >> 45) & 0xFC);
  p.pix = static_cast<uint8_t>((w >> 44) & 0x7);
  p.toa = static_cast<uint16_t>((w >> 30) & 0x3FFF);
  p.tot = static_cast<uint16_t>((w >> 20) & 0x3FF);
  p.fToA = static_cast<uint8_t>((w >> 16) & 0xF);
  p.spidr = static_cast<uint16_t>(w & 0xFFFF);
  return p;
}
[[nodiscard]] constexpr uint64_t encodePixel(const PixelWord &p) noexcept {
  return uint64_t{kPixelType} << 60 | (uint64_t{p.dCol} & 0xFE) << 52 |
         (uint64_t{p.sPix} & 0xFC) << 45 | (uint64_t{p.pix} & 0x7) << 44 |
         (uint64_t{p.toa} & 0x3FFF) << 30 | (uint64_t{p.tot} & 0x3FF) << 20 |
         (uint64_t{p.fToA} & 0xF) << 16 | p.spidr;
}

[[nodiscard]] constexpr TdcWord decodeTdc(uint64_t w) noexcept {
  TdcWord t;
  t.kind = static_cast<uint8_t>((w >> 56) & 0xF);
  t.counter = static_cast<uint16_t>((w >> 44) & 0xFFF);
  t.stamp35 = (w >> 9) & 0x7FFFFFFFFULL;
  t.fine = static_cast<uint8_t>((w >> 5) & 0xF);
  return t;
}
[[nodiscard]] constexpr uint64_t encodeTdc(const TdcWord &t) noexcept {
  return uint64_t{kTdcType} << 60 | (uint64_t{t.kind} & 0xF) << 56 |
         (uint64_t{t.counter} & 0xFFF) << 44 | (t.stamp35 & 0x7FFFFFFFFULL) << 9 |
         (uint64_t{t.fine} & 0xF) << 5;
}

[[nodiscard]] inline EvrDatagram decodeEvr(const uint8_t *p) noexcept {
  EvrDatagram e;
  e.type = p[0];
  std::memcpy(&e.counter, p + 4, 4);
  std::memcpy(&e.pulseSeconds, p + 8, 4);
  std::memcpy(&e.pulseNanoseconds, p + 12, 4);
  std::memcpy(&e.prevPulseSeconds, p + 16, 4);
  std::memcpy(&e.prevPulseNanoseconds, p + 20, 4);
  return e;
}
inline void encodeEvr(const EvrDatagram &e, uint8_t *out) noexcept {
  std::memset(out, 0, kEvrBytes);
  out[0] = e.type;
  std::memcpy(out + 4, &e.counter, 4);
  std::memcpy(out + 8, &e.pulseSeconds, 4);
  std::memcpy(out + 12, &e.pulseNanoseconds, 4);
  std::memcpy(out + 16, &e.prevPulseSeconds, 4);
  std::memcpy(out + 20, &e.prevPulseNanoseconds, 4);
}

// ---- geometry ------------------------------------------------------------------------------

/// Column and row of a pixel word (the pymepix convention the ESS EFU follows).
[[nodiscard]] constexpr uint16_t pixelX(const PixelWord &p) noexcept {
  return static_cast<uint16_t>(p.dCol + p.pix / 4);
}
[[nodiscard]] constexpr uint16_t pixelY(const PixelWord &p) noexcept {
  return static_cast<uint16_t>(p.sPix + (p.pix & 0x3));
}
/// pixelX(decodePixel(w)) and pixelY(decodePixel(w)) straight from the word's bits.
[[nodiscard]] constexpr uint16_t pixelXOfWord(uint64_t w) noexcept {
  return static_cast<uint16_t>(((w >> 52) & 0xFE) | ((w >> 46) & 1));
}
[[nodiscard]] constexpr uint16_t pixelYOfWord(uint64_t w) noexcept {
  return static_cast<uint16_t>(((w >> 45) & 0xFC) | ((w >> 44) & 3));
}
/// decodePixel(w).tot.
[[nodiscard]] constexpr uint16_t pixelTotOfWord(uint64_t w) noexcept {
  return static_cast<uint16_t>((w >> 20) & 0x3FF);
}
namespace detail {
/// What the pixel bits 44..51 (pix and the low five bits of sPix) and 52..59 (the top bit of
/// sPix and dCol) of a pixel word add to x | y << 16: two small tables in place of the four
/// shifts and masks that move these fields bit group by bit group.
struct GeometryTables {
  std::array<uint32_t, 256> low{};
  std::array<uint32_t, 256> high{};
};
constexpr GeometryTables makeGeometryTables() noexcept {
  GeometryTables t;
  for (uint32_t b = 0; b < 256; ++b) {
    // low: bits 0..2 pix, 3..7 sPix bits 2..6; high: bit 0 sPix bit 7, 1..7 dCol (x bits 1..7).
    t.low[b] = ((b >> 2) & 1) | (((b & 3) | (b & 0xF8) >> 1) << 16);
    t.high[b] = (b & 0xFE) | ((b & 1) << 7) << 16;
  }
  return t;
}
inline constexpr GeometryTables kGeometry = makeGeometryTables();
} // namespace detail

/// pixelX, pixelY and tot of a pixel word as four little-endian uint16_t would hold x, y, tot
/// and 0 (PixelHit's x, y, weight and tag), in one register: no field extracted, widened and
/// packed on its own.
[[nodiscard]] constexpr uint64_t pixelFieldsOfWord(uint64_t w) noexcept {
  return detail::kGeometry.low[(w >> 44) & 0xFF] | detail::kGeometry.high[(w >> 52) & 0xFF] |
         ((w << 12) & (uint64_t{0x3FF} << 32)); // tot
}
/// The word fields of column x, row y (0..255 each).
inline void placePixel(PixelWord &p, uint16_t x, uint16_t y) noexcept {
  p.dCol = static_cast<uint16_t>(x & 0xFE);
  p.sPix = static_cast<uint16_t>(y & 0xFC);
  p.pix = static_cast<uint8_t>((x & 1) << 2 | (y & 3));
}

// ---- clocks --------------------------------------------------------------------------------

/// The pixel clock (spidr, toa, fToA) wraps after this many ns; the TDC clock after four times.
constexpr uint64_t kPixelClockNs = 26'843'545'600;

/// A pixel's time on the camera's pixel clock: 409600 spidr + 25 toa - 1.5625 fToA, truncated
/// toward zero as the ESS EFU's double arithmetic does. Negative (spidr = toa = 0, fToA > 0)
/// only within the first 24 ns after a wrap.
[[nodiscard]] constexpr int64_t pixelClockNs(uint16_t spidr, uint16_t toa, uint8_t fToA) noexcept {
  // In sixteenths of a ns all three terms are integers.
  const int64_t sixteenths =
      16 * (409'600 * int64_t{spidr} + 25 * int64_t{toa}) - 25 * int64_t{fToA};
  return sixteenths >= 0 ? sixteenths / 16 : -((-sixteenths) / 16);
}

/// A TDC time in ns: 3.125 ns coarse bins plus 0.26 ns fine bins, summed in doubles and
/// truncated, as the ESS EFU computes it (so that the same words give the same times).
[[nodiscard]] inline uint64_t tdcNs(uint64_t stamp35, uint8_t fine) noexcept {
  const double coarse = 3.125 * static_cast<double>(stamp35);
  const double sub = 0.26 * static_cast<double>(fine);
  return static_cast<uint64_t>(coarse + sub);
}
/// The TDC time on the pixel clock (the ESS EFU's quarter arithmetic).
[[nodiscard]] constexpr uint64_t tdcOnPixelClock(uint64_t tdcTimeNs) noexcept {
  const auto quarter = static_cast<uint8_t>(tdcTimeNs / kPixelClockNs);
  return tdcTimeNs - kPixelClockNs * quarter;
}

/// A pixel's absolute time (ns since the epoch) from the last paired pulse: its pulse time and
/// its TDC time on the pixel clock. A pixel clock reading below the TDC's is taken as after a
/// wrap of the pixel clock. Unsigned arithmetic, as there.
[[nodiscard]] constexpr uint64_t pixelTimeNs(uint64_t pulseTimeNs, uint64_t tdcPixelClockNs,
                                             int64_t pixelClock) noexcept {
  const auto clock = static_cast<uint64_t>(pixelClock); // a negative reading wraps, as there
  if (pixelClock >= 0 && tdcPixelClockNs > clock) {
    return pulseTimeNs + (kPixelClockNs - tdcPixelClockNs) + clock;
  }
  return pulseTimeNs + (clock - tdcPixelClockNs);
}

namespace detail {
/// 25 f / 16 rounded up, for f = 0..15 (a static table: a local one may be rebuilt per call).
inline constexpr std::array<int64_t, 16> kFineUp = {0,  2,  4,  5,  7,  8,  10, 11,
                                                    13, 15, 16, 18, 19, 21, 22, 24};
} // namespace detail
/// pixelClockNs() of a pixel word, straight from its bits: 409600 spidr + 25 toa is
/// 25 * (spidr << 14 | toa), and truncating (16 * that - 25 fToA) / 16 toward zero subtracts
/// 25 fToA / 16 rounded up (a table of the 16), or, when spidr = toa = 0 (the only negative
/// readings, off the common path), rounded down.
[[nodiscard]] constexpr int64_t pixelClockOfWord(uint64_t w) noexcept {
  const uint64_t ticks = (w & 0xFFFF) << 14 | ((w >> 30) & 0x3FFF);
  const auto fine = static_cast<int64_t>((w >> 16) & 0xF);
  if (ticks == 0) [[unlikely]] {
    return -((25 * fine) >> 4);
  }
  return 25 * static_cast<int64_t>(ticks) - detail::kFineUp[static_cast<size_t>(fine)];
}
/// pixelTimeNs(pulseTimeNs, tdcPixelClockNs, pixelClock) as pulseTimeNs - tdcPixelClockNs
/// (`since`, computed once per pulse) plus the reading and, when it is below the TDC's (but not
/// negative), one turn of the pixel clock: the same sum modulo 2^64.
[[nodiscard]] constexpr uint64_t pixelTimeSince(uint64_t since, uint64_t tdcPixelClockNs,
                                                int64_t pixelClock) noexcept {
  const auto clock = static_cast<uint64_t>(pixelClock); // negative: above any TDC reading
  // The two bases picked, then one addition (in a loop, since + kPixelClockNs is computed once).
  return clock + (clock < tdcPixelClockNs ? since + kPixelClockNs : since);
}

/// The EVR's pulse time in ns since the epoch (exact; the ESS EFU sums it in a double).
[[nodiscard]] constexpr uint64_t evrPulseNs(uint32_t seconds, uint32_t nanoseconds) noexcept {
  return uint64_t{seconds} * 1'000'000'000ULL + nanoseconds;
}

} // namespace efu::timepix3
