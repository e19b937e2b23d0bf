// SPDX-License-Identifier: BSD-2-Clause
// The module's word-level shortcuts (Timepix3Readout.h: pixelXOfWord, pixelYOfWord,
// pixelTotOfWord, pixelFieldsOfWord, pixelClockOfWord, pixelTimeSince) against the field-by-field
// functions they stand in for: over every value of the fields they read, or the edges and random
// values where the domain is too large.
#include "modules/timepix3/Timepix3Readout.h"

#include <gtest/gtest.h>

#include <random>

namespace efu::timepix3 {
namespace {

TEST(Timepix3Word, CoordinatesAndWeightOfEveryPixel) {
  std::mt19937_64 rng(21);
  for (uint32_t dCol = 0; dCol < 256; dCol += 2) {
    for (uint32_t sPix = 0; sPix < 256; sPix += 4) {
      for (uint32_t pix = 0; pix < 8; ++pix) {
        PixelWord p;
        p.dCol = static_cast<uint16_t>(dCol);
        p.sPix = static_cast<uint16_t>(sPix);
        p.pix = static_cast<uint8_t>(pix);
        p.toa = static_cast<uint16_t>(rng() & 0x3FFF);
        p.tot = static_cast<uint16_t>(rng() & 0x3FF);
        p.fToA = static_cast<uint8_t>(rng() & 0xF);
        p.spidr = static_cast<uint16_t>(rng());
        const uint64_t w = encodePixel(p);
        ASSERT_EQ(pixelXOfWord(w), pixelX(p));
        ASSERT_EQ(pixelYOfWord(w), pixelY(p));
        ASSERT_EQ(pixelTotOfWord(w), p.tot);
        ASSERT_EQ(pixelFieldsOfWord(w),
                  uint64_t{pixelX(p)} | uint64_t{pixelY(p)} << 16 | uint64_t{p.tot} << 32);
      }
    }
  }
  for (uint32_t tot = 0; tot < 1024; ++tot) {
    PixelWord p;
    p.tot = static_cast<uint16_t>(tot);
    ASSERT_EQ(pixelTotOfWord(encodePixel(p)), tot);
  }
}

/// pixelFieldsOfWord(w) as the fields one by one would give it.
uint64_t fieldsOneByOne(uint64_t w) {
  return uint64_t{pixelXOfWord(w)} | uint64_t{pixelYOfWord(w)} << 16 |
         uint64_t{pixelTotOfWord(w)} << 32;
}

// The packed fields of every pixel position are checked above; here every weight and any bits.
TEST(Timepix3Word, PackedFieldsOfEveryWeightAndAnyWord) {
  std::mt19937_64 rng(23);
  for (uint32_t tot = 0; tot < 1024; ++tot) {
    PixelWord p;
    p.tot = static_cast<uint16_t>(tot);
    placePixel(p, static_cast<uint16_t>(rng() & 0xFF), static_cast<uint16_t>(rng() & 0xFF));
    const uint64_t w = encodePixel(p);
    ASSERT_EQ(pixelFieldsOfWord(w), fieldsOneByOne(w));
  }
  // Any bits at all (other types, the unused bit 52): only the fields' bits are read.
  for (int i = 0; i < 1'000'000; ++i) {
    const uint64_t w = rng();
    ASSERT_EQ(pixelFieldsOfWord(w), fieldsOneByOne(w)) << std::hex << w;
  }
}

void expectClock(uint16_t spidr, uint16_t toa, uint8_t fToA) {
  PixelWord p;
  p.spidr = spidr;
  p.toa = toa;
  p.fToA = fToA;
  p.tot = 0x3FF; // the neighbouring bits set: they must not leak in
  p.dCol = 0xFE;
  ASSERT_EQ(pixelClockOfWord(encodePixel(p)), pixelClockNs(spidr, toa, fToA))
      << spidr << " " << toa << " " << int{fToA};
}

TEST(Timepix3Word, ClockOfEveryToaAndFineToa) {
  // Every toa and fToA with spidr 0 (the negative readings), 1, 65535 and some others.
  for (const uint16_t spidr : {0, 1, 2, 1000, 32768, 65534, 65535}) {
    for (uint32_t toa = 0; toa < 16384; ++toa) {
      for (uint8_t f = 0; f < 16; ++f) {
        expectClock(spidr, static_cast<uint16_t>(toa), f);
      }
    }
  }
}

TEST(Timepix3Word, ClockOfEverySpidr) {
  for (uint32_t spidr = 0; spidr < 65536; ++spidr) {
    for (const uint16_t toa : {0, 1, 8191, 16383}) {
      for (uint8_t f = 0; f < 16; ++f) {
        expectClock(static_cast<uint16_t>(spidr), toa, f);
      }
    }
  }
}

TEST(Timepix3Word, TimeSinceMatchesPixelTime) {
  std::mt19937_64 rng(22);
  const uint64_t pulses[] = {0, 1, 1'700'000'000'000'000'000ULL, UINT64_MAX, UINT64_MAX - 5};
  const uint64_t tdcs[] = {0, 1, 1000, kPixelClockNs / 2, kPixelClockNs - 1};
  std::vector<int64_t> clocks = {-24, -1, 0, 1, 999, 1000, 1001, kPixelClockNs / 2 - 1,
                                 kPixelClockNs / 2, kPixelClockNs - 1};
  for (int i = 0; i < 200; ++i) {
    clocks.push_back(static_cast<int64_t>(rng() % kPixelClockNs));
  }
  for (const uint64_t pulse : pulses) {
    for (const uint64_t tdc : tdcs) {
      for (const int64_t clock : clocks) {
        ASSERT_EQ(pixelTimeSince(pulse - tdc, tdc, clock), pixelTimeNs(pulse, tdc, clock))
            << pulse << " " << tdc << " " << clock;
      }
    }
  }
  for (int i = 0; i < 100000; ++i) {
    const uint64_t pulse = rng();
    const uint64_t tdc = rng() % kPixelClockNs;
    const auto clock = static_cast<int64_t>(rng() % kPixelClockNs) - 24;
    ASSERT_EQ(pixelTimeSince(pulse - tdc, tdc, clock), pixelTimeNs(pulse, tdc, clock));
  }
}

} // namespace
} // namespace efu::timepix3
