// SPDX-License-Identifier: BSD-2-Clause
// The Timepix3 words, the EVR datagram and the clock arithmetic (modules/timepix3/
// Timepix3Readout.h). Expectations from the ESS EFU's src/modules/timepix3/test/
// Timepix3ParserTest.cpp (the byte strings and their fields), Timepix3TimingEventHandlerTest.cpp
// (a TDC time on the pixel clock) and Timepix3PixelEventHandlerTest.cpp (pixel times of flight).
#include "modules/timepix3/Timepix3Readout.h"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace efu::timepix3 {
namespace {

uint64_t word(const std::array<uint8_t, 8> &b) {
  return loadWord(b.data());
}

TEST(Timepix3Readout, EssPixelWord) {
  const uint64_t w = word({0x92, 0x00, 0xd3, 0x4c, 0xc0, 0x97, 0x01, 0xb1});
  ASSERT_EQ(wordType(w), kPixelType);
  const PixelWord p = decodePixel(w);
  EXPECT_EQ(p.dCol, 16);
  EXPECT_EQ(p.sPix, 12);
  EXPECT_EQ(p.pix, 1);
  EXPECT_EQ(p.toa, 7937);
  EXPECT_EQ(p.tot, 205);
  EXPECT_EQ(p.fToA, 3);
  EXPECT_EQ(p.spidr, 146);
  EXPECT_EQ(encodePixel(p), w);
  EXPECT_EQ(pixelX(p), 16); // dCol + pix / 4
  EXPECT_EQ(pixelY(p), 13); // sPix + pix % 4
}

TEST(Timepix3Readout, EssTdcWords) {
  // The four ESS byte strings differ only in the last byte: the kind.
  struct Row {
    uint8_t last;
    uint8_t kind;
  };
  for (const Row &r : {Row{0x6f, kTdc1Rising}, Row{0x6a, kTdc1Falling}, Row{0x6e, kTdc2Rising},
                       Row{0x6b, kTdc2Falling}}) {
    const uint64_t w = word({0xe0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, r.last});
    ASSERT_EQ(wordType(w), kTdcType);
    const TdcWord t = decodeTdc(w);
    EXPECT_EQ(t.kind, r.kind);
    EXPECT_EQ(t.counter, 4095);
    EXPECT_EQ(t.stamp35, 34359738367ULL);
    EXPECT_EQ(t.fine, 15);
    EXPECT_EQ(encodeTdc(t), w);
  }
}

TEST(Timepix3Readout, EssEvrDatagram) {
  const std::vector<uint8_t> b = {0x01, 0x45, 0x53, 0x53, 0x2a, 0xc0, 0x08, 0x00,
                                  0xcc, 0xa1, 0x3f, 0x64, 0xdd, 0xc9, 0x9a, 0x3b,
                                  0xcb, 0xa1, 0x3f, 0x64, 0xdd, 0xc9, 0x9a, 0x3b};
  ASSERT_EQ(b.size(), kEvrBytes);
  const EvrDatagram e = decodeEvr(b.data());
  EXPECT_EQ(e.type, kEvrType);
  EXPECT_EQ(e.counter, 573482U);
  EXPECT_EQ(e.pulseSeconds, 1681891788U);
  EXPECT_EQ(e.pulseNanoseconds, 999999965U);
  EXPECT_EQ(e.prevPulseSeconds, 1681891787U);
  EXPECT_EQ(e.prevPulseNanoseconds, 999999965U);
  EXPECT_EQ(evrPulseNs(e.pulseSeconds, e.pulseNanoseconds), 1681891788999999965ULL);
}

TEST(Timepix3Readout, EssGeometryColumnsAndRows) {
  // The ESS Timepix3GeometryTest's field values (struct-level: not all are encodable words).
  struct Row {
    uint16_t dCol, sPix;
    uint8_t pix;
    uint16_t x, y;
  };
  for (const Row &r : {Row{0, 0, 0, 0, 0}, Row{200, 10, 11, 202, 13}, Row{10, 10, 0, 10, 10},
                       Row{255, 254, 1, 255, 255}}) {
    PixelWord p;
    p.dCol = r.dCol;
    p.sPix = r.sPix;
    p.pix = r.pix;
    EXPECT_EQ(pixelX(p), r.x) << r.dCol;
    EXPECT_EQ(pixelY(p), r.y) << r.sPix;
  }
}

TEST(Timepix3Readout, PlacePixelInvertsXY) {
  for (uint16_t x : {0, 1, 2, 35, 254, 255}) {
    for (uint16_t y : {0, 1, 2, 3, 115, 255}) {
      PixelWord p;
      placePixel(p, x, y);
      const PixelWord back = decodePixel(encodePixel(p));
      EXPECT_EQ(pixelX(back), x);
      EXPECT_EQ(pixelY(back), y);
    }
  }
}

TEST(Timepix3Readout, EssTdcOnPixelClock) {
  // 14029934583 coarse and 100 fine bins: 43843545597.875 ns, truncated; one pixel-clock wrap.
  const uint64_t t = tdcNs(14029934583ULL, 100);
  EXPECT_EQ(t, 43843545597ULL);
  EXPECT_EQ(tdcOnPixelClock(t), 16999999997ULL);
  EXPECT_EQ(tdcOnPixelClock(kPixelClockNs - 1), kPixelClockNs - 1);
  EXPECT_EQ(tdcOnPixelClock(4 * kPixelClockNs), 0U);
}

TEST(Timepix3Readout, PixelClock) {
  struct Row {
    uint16_t spidr, toa;
    uint8_t fToA;
    int64_t ns;
  };
  for (const Row &r : {Row{0, 0, 0, 0}, Row{0, 1, 0, 25}, Row{0, 1, 1, 23}, // 23.4375
                       Row{1, 0, 0, 409600}, Row{41503, 14848, 1, 16999999998},
                       Row{65535, 16383, 0, 26843545575}, Row{0, 0, 15, -23}}) {
    EXPECT_EQ(pixelClockNs(r.spidr, r.toa, r.fToA), r.ns) << r.spidr << " " << r.toa;
  }
}

TEST(Timepix3Readout, EssPixelTimesOfFlight) {
  const uint64_t pulse = 1706778348000000000ULL;
  // Shortly after the TDC: 1 ns.
  EXPECT_EQ(pixelTimeNs(pulse, 16999999997ULL, pixelClockNs(41503, 14848, 1)) - pulse, 1U);
  // After a pixel-clock wrap: 2000 ns before the wrap, 2000 ns after it.
  EXPECT_EQ(pixelTimeNs(pulse, kPixelClockNs - 2000, pixelClockNs(0, 80, 0)) - pulse, 4000U);
  // Late: spidr 55000 is seconds after the TDC.
  EXPECT_EQ(pixelTimeNs(pulse, 16999999997ULL, pixelClockNs(55000, 14848, 1)) - pulse,
            22528371198ULL - 16999999997ULL);
  // A negative reading (just after a wrap, fine ToA past zero) goes before the pulse.
  EXPECT_EQ(static_cast<int64_t>(pixelTimeNs(pulse, 1000, pixelClockNs(0, 0, 15)) - pulse), -1023);
}

} // namespace
} // namespace efu::timepix3
