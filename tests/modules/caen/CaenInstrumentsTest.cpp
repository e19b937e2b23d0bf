// SPDX-License-Identifier: BSD-2-Clause
// caen module: the ESS BIFROST, CSPEC, MIRACLES and TBL3HE geometries with the shipped ESS
// files. The expected pixels and rejections are the ESS EFU's geometry tests
// (ess-dmsc/event-formation-unit 8b399165, src/modules/<instrument>/test/), turned into tables
// against the ESS files; where those tests set a limit the ESS file does not (MaxRing), the
// table follows what the ESS EFU does with the file.
#include "modules/caen/CaenGeometry.h"
#include "modules/caen/CaenModule.h"
#include "modules/caen/CaenSource.h"
#include "tests/modules/caen/CaenTestConfig.h"
#include "tests/support/FakeModuleContext.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <map>
#include <vector>

namespace efu::caen {
namespace {

using readout::FakeModuleContext;
using test::amplitudes;
using test::configError;

/// A geometry from a shipped config and calibration (or the ESS null calibration).
CaenGeometry shippedGeometry(const std::string &config, const std::string &calibration = {}) {
  CaenConfig c(test::shipped(config), config);
  CaenCalibration cal = calibration.empty() ? nullCalibration(c)
                                            : CaenCalibration(test::shippedCalibration(calibration),
                                                              calibration, c.detector);
  return {std::move(c), std::move(cal)};
}

/// valid() then pixel(), as the module runs them; 0 when either refuses.
uint32_t pixelOf(const CaenGeometry &g, const CaenReadout &r, CaenTally &t) {
  return g.valid(r, t) ? g.pixel(r, t) : 0;
}

TEST(CaenInstruments, TheShippedEssFilesLoadWithTheirImages) {
  struct File {
    const char *config, *calibration;
    Instrument instrument;
    uint8_t type;
    uint32_t width, height, groups, units;
  };
  for (const File &f : std::vector<File>{
           {"bifrost.json", "bifrostnullcalib.json", Instrument::Bifrost, 0x34, 900, 15, 45, 3},
           {"bifrost.json", "bifrostllbcalib.json", Instrument::Bifrost, 0x34, 900, 15, 45, 3},
           {"cspec.json", "cspecnullcalib.json", Instrument::Cspec, 0x3C, 900, 180, 100, 1},
           {"miracles.json", "miraclesnullcalib.json", Instrument::Miracles, 0x38, 48, 128, 48, 2},
           {"tbl3he.json", "tbl3henullcalib.json", Instrument::Tbl3he, 0x32, 100, 8, 8, 1},
           {"tbl3he.json", "tbl3heconstcalib.json", Instrument::Tbl3he, 0x32, 100, 8, 8, 1}}) {
    const CaenGeometry g = shippedGeometry(f.config, f.calibration);
    EXPECT_EQ(g.config().instrument, f.instrument) << f.config;
    EXPECT_EQ(g.config().detectorType, f.type) << f.config;
    EXPECT_EQ(g.config().imageWidth(), f.width) << f.config;
    EXPECT_EQ(g.config().imageHeight(), f.height) << f.config;
    EXPECT_EQ(g.calibration().groups(), f.groups) << f.calibration;
    EXPECT_EQ(g.calibration().unitsPerGroup(), f.units) << f.calibration;
    // Without --calibration: the same shape as the ESS null file.
    const CaenCalibration null = nullCalibration(g.config());
    EXPECT_EQ(null.groups(), f.groups) << f.config;
    EXPECT_EQ(null.unitsPerGroup(), f.units) << f.config;
  }
  // The values the ESS files set.
  const CaenGeometry b = shippedGeometry("bifrost.json");
  EXPECT_EQ(b.config().resolution, 300U);
  EXPECT_EQ(b.config().maxGroup, 15U);
  EXPECT_EQ(b.config().maxAmplitude, 32767);
  const CaenGeometry m = shippedGeometry("miracles.json");
  EXPECT_EQ(m.config().maxTofNs, 1000000000);
  const CaenGeometry t = shippedGeometry("tbl3he.json");
  EXPECT_EQ(t.config().maxPulseGapNs, 71428600);
  EXPECT_EQ(t.config().minAmplitude, 2);
  EXPECT_EQ(t.config().maxGroup, 7U);
}

TEST(CaenInstruments, TheShippedLokiCalibrations) {
  // lokiconstcalib.json: delta = -0.5 + p on every straw, so every position is 0.5 → x =
  // round(0.5 x 511) = 256.
  const CaenGeometry constant = shippedGeometry("LokiFull.json", "lokiconstcalib.json");
  CaenTally t;
  for (const int16_t a : {0, 10, 50, 100}) {
    EXPECT_EQ(pixelOf(constant, amplitudes(0, 0, 0, a, 0, static_cast<int16_t>(100 - a), 0), t),
              256U + 1);
  }
  // calibration.json covers the first 128 of LokiFull.json's 896 groups.
  const CaenGeometry partial = shippedGeometry("LokiFull.json", "calibration.json");
  EXPECT_EQ(partial.calibration().groups(), 128U);
  EXPECT_NE(pixelOf(partial, amplitudes(0, 0, 0, 10, 10, 10, 10), t), 0U); // group 0
  EXPECT_EQ(pixelOf(partial, amplitudes(4, 0, 0, 10, 10, 10, 10), t), 0U); // ring 2: group 224
  EXPECT_EQ(t.calibrationGroup, 1);
}

// --- BIFROST: src/modules/bifrost/test/BifrostGeometryTest.cpp --------------------------------

TEST(Bifrost, EssOffsetsOfRingAndTriplet) {
  // XOffset: ring x Resolution + (group % 3) x 100; YOffset: (group / 3) x 3. Position 0
  // (A = 0) is pixel 0 of tube 0.
  const CaenGeometry g = shippedGeometry("bifrost.json", "bifrostnullcalib.json");
  for (uint32_t ring = 0; ring < 3; ++ring) {
    for (uint32_t group = 0; group < 15; ++group) {
      CaenTally t;
      const uint32_t x = ring * 300 + (group % 3) * 100;
      const uint32_t y = (group / 3) * 3;
      EXPECT_EQ(pixelOf(g,
                        amplitudes(static_cast<uint8_t>(2 * ring), 0, static_cast<uint8_t>(group),
                                   0, 1, 0, 0),
                        t),
                y * 900 + x + 1)
          << ring << " " << group;
    }
  }
  CaenTally t;
  // CalcPixel: A 0, B 1 → 1; position 1 (A 1, B 0) → tube 2, pixel 99 along it.
  EXPECT_EQ(pixelOf(g, amplitudes(0, 0, 0, 0, 1, 0, 0), t), 1U);
  EXPECT_EQ(pixelOf(g, amplitudes(0, 0, 0, 1, 0, 0, 0), t), 2U * 900 + 99 + 1);
  // The second fiber of a ring is the same ring.
  EXPECT_EQ(pixelOf(g, amplitudes(5, 0, 4, 0, 1, 0, 0), t), 3U * 900 + 600 + 100 + 1);
  // The tube's 100 pixels are the position within its interval, truncated: 0.5 of tube 1
  // ([0.334, 0.667]) is (0.5 - 0.334) / 0.333 x 99 = 49.35 → 49.
  EXPECT_EQ(pixelOf(g, amplitudes(0, 0, 0, 1, 1, 0, 0), t), 1U * 900 + 49 + 1);
  EXPECT_EQ(t.pixel, 0);
}

/// BifrostGeometryTest's calibration: the null intervals, group 44 (ring 2, triplet 14) the
/// hand-made {0.030, 0.290}, {0.627, 0.363} (reversed), {0.705, 0.970}.
nlohmann::json bifrostManualCalibration() {
  nlohmann::json cal = test::shippedCalibration("bifrostnullcalib.json");
  cal["Calibration"]["Parameters"][44]["intervals"] = {
      {0.030, 0.290}, {0.627, 0.363}, {0.705, 0.970}};
  return cal;
}

TEST(Bifrost, EssIntervalsReversedOutsideAndInvalid) {
  const CaenGeometry g(CaenConfig(test::shipped("bifrost.json"), "bifrost.json"),
                       CaenCalibration(bifrostManualCalibration(), "manual.json", "bifrost"));
  CaenTally t;
  // MiddleUnit: A 11, B 9 → 0.55, tube 1 of the reversed interval: (0.55 - 0.627) / (0.363 -
  // 0.627) = 0.2917 → pixel 28 along it; ring 2, triplet 14: x 600 + 200 + 28, y 12 + 1.
  EXPECT_EQ(pixelOf(g, amplitudes(4, 0, 14, 11, 9, 0, 0), t), 13U * 900 + 828 + 1);
  // PosOutsideInterval: position 1 lies beyond 0.970.
  EXPECT_EQ(pixelOf(g, amplitudes(4, 0, 14, 100, 0, 0, 0), t), 0U);
  EXPECT_EQ(t.outsideTube, 1);
  EXPECT_EQ(t.unitInvalid, 1);
  // UnitIdInvalidCounter: 1 / 1001 lies below 0.030.
  EXPECT_EQ(pixelOf(g, amplitudes(4, 0, 14, 1, 1000, 0, 0), t), 0U);
  EXPECT_EQ(t.unitInvalid, 2);
  // BadAmplitudes, GlobalPosInvalidCounter: -1 / 19 is not a position.
  EXPECT_EQ(pixelOf(g, amplitudes(4, 0, 14, -1, 20, 0, 0), t), 0U);
  EXPECT_EQ(t.positionInvalid, 1);
  EXPECT_EQ(t.pixel, 3);
  EXPECT_EQ(t.validation, 0);
}

TEST(Bifrost, EssValidationWithTheShippedLimits) {
  const CaenGeometry g = shippedGeometry("bifrost.json");
  CaenTally t;
  EXPECT_TRUE(g.valid(amplitudes(0, 0, 0, 1, 1, 1, 1), t));
  // FEN above MaxFEN (0: bifrost.json has none), group above MaxGroup 15.
  EXPECT_FALSE(g.valid(amplitudes(0, 20, 0, 1, 1, 0, 0), t));
  EXPECT_FALSE(g.valid(amplitudes(0, 1, 0, 1, 1, 0, 0), t));
  EXPECT_EQ(t.fen, 2);
  EXPECT_TRUE(g.valid(amplitudes(0, 0, 15, 1, 1, 0, 0), t));
  EXPECT_FALSE(g.valid(amplitudes(0, 0, 16, 1, 1, 0, 0), t));
  EXPECT_EQ(t.group, 1);
  // A + B == 0; A + B above MaxAmpl 32767 (TooLargeAmplitudes).
  EXPECT_FALSE(g.valid(amplitudes(0, 0, 0, 0, 0, 5, 5), t));
  EXPECT_FALSE(g.valid(amplitudes(0, 0, 0, 32767, 1, 0, 0), t));
  EXPECT_TRUE(g.valid(amplitudes(0, 0, 0, 32766, 1, 0, 0), t));
  EXPECT_EQ(t.amplitudeZero, 1);
  EXPECT_EQ(t.amplitudeHigh, 1);
  EXPECT_EQ(t.validation, 5);
  // The file's "MaxRing": 4 is not read by the ESS EFU (caen Config::parseConfig assigns no
  // MaxRing): ring 5 passes the checks and finds no calibration group (5 x 15 >= 45).
  CaenTally u;
  EXPECT_EQ(pixelOf(g, amplitudes(10, 0, 0, 1, 1, 0, 0), u), 0U);
  EXPECT_EQ(u.validation, 0);
  EXPECT_EQ(u.calibrationGroup, 1);
  EXPECT_EQ(u.unitInvalid, 1);
  EXPECT_EQ(u.pixel, 1);
  // Triplet 15 (allowed by MaxGroup 15) reads ring 1's first calibration group and lands
  // below the image (y 15): no pixel.
  EXPECT_EQ(pixelOf(g, amplitudes(0, 0, 15, 1, 1, 0, 0), u), 0U);
  EXPECT_EQ(u.pixel, 2);
}

// --- CSPEC: src/modules/cspec/test/CspecGeometryTest.cpp --------------------------------------

TEST(Cspec, EssPositionsAndPixels) {
  const CaenGeometry g = shippedGeometry("cspec.json", "cspecnullcalib.json");
  CaenTally t;
  // CalcPixel: all zero → none; A 0, B 1 → y 0 → 1.
  EXPECT_EQ(pixelOf(g, amplitudes(0, 0, 0, 0, 0, 0, 0), t), 0U);
  EXPECT_EQ(pixelOf(g, amplitudes(0, 0, 0, 0, 1, 0, 0), t), 1U);
  // YCoord, Position: A 1, B 0 → y = Resolution - 1 = 299, beyond the 180 rows of the ESS
  // image: no pixel.
  EXPECT_EQ(pixelOf(g, amplitudes(0, 0, 0, 1, 0, 0, 0), t), 0U);
  EXPECT_EQ(t.pixel, 2);
  // x = ring x 300 + (group % 24) x (300 / 24); y = (299 x A) / (A + B), integer division.
  struct Case {
    uint8_t fiber, group;
    int16_t a, b;
    uint32_t pixel;
  };
  for (const Case &k : std::vector<Case>{{0, 1, 0, 1, 12 + 1},
                                         {4, 25, 0, 1, 600 + 12 + 1},
                                         {2, 23, 0, 1, 300 + 276 + 1},
                                         {0, 0, 100, 100, 149 * 900 + 1},
                                         {0, 0, 3, 7, 89 * 900 + 1},
                                         {0, 0, -1, -2, 99 * 900 + 1}}) { // the ESS int arithmetic
    EXPECT_EQ(pixelOf(g, amplitudes(k.fiber, 0, k.group, k.a, k.b, 0, 0), t), k.pixel)
        << int(k.fiber) << " " << int(k.group) << " " << k.a << " " << k.b;
  }
}

TEST(Cspec, EssValidation) {
  const CaenGeometry g = shippedGeometry("cspec.json");
  CaenTally t;
  EXPECT_TRUE(g.valid(amplitudes(0, 0, 0, 0, 0, 0, 0), t)); // no amplitude checks
  EXPECT_FALSE(g.valid(amplitudes(0, 20, 0, 0, 0, 0, 0), t));
  EXPECT_EQ(t.fen, 1);
  EXPECT_TRUE(g.valid(amplitudes(0, 0, 180, 0, 0, 0, 0), t)); // MaxGroup 180
  EXPECT_FALSE(g.valid(amplitudes(0, 0, 181, 0, 0, 0, 0), t));
  EXPECT_EQ(t.group, 1);
  EXPECT_TRUE(g.valid(amplitudes(10, 0, 0, 0, 0, 0, 0), t)); // ring 5: MaxRing is not read
  EXPECT_EQ(t.validation, 2);
}

// --- MIRACLES: src/modules/miracles/test/MiraclesGeometryTest.cpp -----------------------------

TEST(Miracles, EssPositionsAlongATubePair) {
  const CaenGeometry g = shippedGeometry("miracles.json");
  // PosAlongTube: tube B from the top, tube A from the bottom.
  EXPECT_EQ(g.miraclesPosition(0, 1), 0);
  EXPECT_EQ(g.miraclesPosition(1, 1), 63);
  EXPECT_EQ(g.miraclesPosition(101, 100), 63);
  EXPECT_EQ(g.miraclesPosition(800, 1), 0);
  EXPECT_EQ(g.miraclesPosition(0, 0), -1);
}

TEST(Miracles, EssCornersAndRings) {
  const CaenGeometry g = shippedGeometry("miracles.json", "miraclesnullcalib.json");
  CaenTally t;
  // CalcPixel: A 0, B 1 → x 1 (tube B), y 0 → 2; all zero → none.
  EXPECT_EQ(pixelOf(g, amplitudes(0, 0, 0, 0, 1, 0, 0), t), 2U);
  EXPECT_EQ(pixelOf(g, amplitudes(0, 0, 0, 0, 0, 0, 0), t), 0U);
  EXPECT_EQ(t.amplitudeZero, 1);
  // Corner: ring 1, tube 11, A 5, B 0 → x 46, y 0; ring 2 → y 64.
  EXPECT_EQ(pixelOf(g, amplitudes(2, 0, 11, 5, 0, 0, 0), t), 46U + 1);
  EXPECT_EQ(pixelOf(g, amplitudes(4, 0, 0, 5, 0, 0, 0), t), 64U * 48 + 1);
  EXPECT_EQ(pixelOf(g, amplitudes(6, 0, 0, 5, 0, 0, 0), t), 64U * 48 + 24 + 1);
  // No FEN or group check; ring 5 (MaxRing is not read) is placed as ring 0 is.
  EXPECT_EQ(pixelOf(g, amplitudes(10, 7, 3, 0, 1, 0, 0), t),
            pixelOf(g, amplitudes(0, 0, 3, 0, 1, 0, 0), t));
  // ValidateDataAmplitudeHigh: the ESS EFU builds the MIRACLES geometry without MaxAmpl.
  EXPECT_TRUE(g.valid(amplitudes(0, 0, 0, 32767, 32767, 0, 0), t));
  EXPECT_EQ(t.validation, 1);
}

// --- TBL3HE: src/modules/tbl3he/test/GeometryTest.cpp, Tbl3HeConfigTest.cpp --------------------

/// GeometryTest.cpp's ValidConfig: tbl3he.json with MinValidAmplitude 0.
nlohmann::json tbl3heTestConfig() {
  auto c = test::shipped("tbl3he.json");
  c["MinValidAmplitude"] = 0;
  c["MaxTOFNS"] = 500000000;
  return c;
}

TEST(Tbl3he, EssPixelsFromTheConfigFile) {
  const CaenGeometry g(CaenConfig(tbl3heTestConfig(), "tbl3he.json"),
                       CaenCalibration(test::shippedCalibration("tbl3henullcalib.json"),
                                       "tbl3henullcalib.json", "tbl3he"));
  CaenTally t;
  // OkFromConfigFile: ring 10 (fiber 20) is bank 0, ring 9 (fiber 18) bank 1; tube = group.
  EXPECT_EQ(pixelOf(g, amplitudes(20, 0, 0, 0, 10, 0, 0), t), 1U);
  EXPECT_EQ(pixelOf(g, amplitudes(20, 0, 0, 10, 0, 0, 0), t), 100U);
  EXPECT_EQ(pixelOf(g, amplitudes(20, 0, 3, 10, 0, 0, 0), t), 400U);
  EXPECT_EQ(pixelOf(g, amplitudes(18, 0, 0, 0, 10, 0, 0), t), 401U);
  EXPECT_EQ(pixelOf(g, amplitudes(18, 0, 0, 10, 0, 0, 0), t), 500U);
  EXPECT_EQ(pixelOf(g, amplitudes(18, 0, 3, 10, 0, 0, 0), t), 800U);
  // Group 4 of bank 0 is bank 1's first tube: the ESS EFU checks only MaxGroup 7.
  EXPECT_EQ(pixelOf(g, amplitudes(20, 0, 4, 0, 10, 0, 0), t), 401U);
  EXPECT_EQ(t.pixel, 0);
  // The ESS EFU looks (ring, FEN) up by FEN x NumOfFENs + Ring (common/memory/HashMap2D.h with
  // NumOfFENs columns): ring 8 FEN 1 is number 10, as ring 10 FEN 0 is.
  EXPECT_EQ(pixelOf(g, amplitudes(16, 1, 0, 0, 10, 0, 0), t), 1U);
  EXPECT_EQ(pixelOf(g, amplitudes(14, 1, 0, 0, 10, 0, 0), t), 401U); // ring 7 FEN 1 = 9
  EXPECT_EQ(pixelOf(g, amplitudes(20, 1, 0, 0, 10, 0, 0), t), 0U);   // 12: none
  EXPECT_EQ(t.topology, 1);
}

/// GeometryTest.cpp's fixture: ring 0 bank 0, ring 1 bank 1 (FEN 0), MinValidAmplitude 0.
nlohmann::json tbl3heFixture() {
  auto c = tbl3heTestConfig();
  c["Topology"] = nlohmann::json::parse(
      R"([{"Ring": 0, "FEN": 0, "Bank": 0}, {"Ring": 1, "FEN": 0, "Bank": 1}])");
  return test::validated(c);
}

TEST(Tbl3he, EssValidation) {
  const CaenConfig c(tbl3heFixture(), "fixture.json");
  const CaenGeometry g(c, nullCalibration(c));
  CaenTally t;
  // ValidateReadouts: only rings 0 and 1 (fibers 0-3) with FEN 0.
  for (uint8_t fiber = 0; fiber < 24; ++fiber) {
    for (uint8_t fen = 0; fen < 12; ++fen) {
      EXPECT_EQ(g.valid(amplitudes(fiber, fen, 0, 1, 1, 0, 0), t), fiber < 4 && fen < 1)
          << int(fiber) << " " << int(fen);
    }
  }
  EXPECT_EQ(t.topology, 24 * 12 - 4);
  // ValidateReadoutsGroup: groups above MaxGroup 7.
  for (uint8_t group = 0; group <= 23; ++group) {
    EXPECT_EQ(g.valid(amplitudes(0, 0, group, 1, 1, 0, 0), t), group <= 7);
  }
  EXPECT_EQ(t.group, 16);
  // ValidateReadoutAmplitudeZero; AmplitudeHighNotValidated.
  EXPECT_FALSE(g.valid(amplitudes(0, 0, 0, 0, 0, 0, 0), t));
  EXPECT_EQ(t.amplitudeZero, 1);
  EXPECT_TRUE(g.valid(amplitudes(0, 0, 0, 32767, 32767, 0, 0), t));
  // CalcPixelSelectedOK.
  EXPECT_EQ(pixelOf(g, amplitudes(0, 0, 0, 0, 10, 0, 0), t), 1U);
  EXPECT_EQ(pixelOf(g, amplitudes(0, 0, 0, 10, 0, 0, 0), t), 100U);
  EXPECT_EQ(pixelOf(g, amplitudes(1, 0, 7, 0, 10, 0, 0), t), 701U);
  EXPECT_EQ(pixelOf(g, amplitudes(1, 0, 7, 10, 0, 0, 0), t), 800U);
  // CalcPixelOutOfRange: bank 1, tube 10 → group 14, beyond the 8 of the calibration.
  EXPECT_EQ(pixelOf(g, amplitudes(3, 0, 10, 10, 10, 0, 0), t), 0U); // group 10 > 7 first
  EXPECT_EQ(t.group, 17);
  // ValidateReadoutAmplitudeLow with MinValidAmplitude 10; OutsideUnitInterval with -100.
  auto low = tbl3heFixture();
  low["MinValidAmplitude"] = 10;
  const CaenConfig lc(low, "low.json");
  CaenTally u;
  EXPECT_FALSE(CaenGeometry(lc, nullCalibration(lc)).valid(amplitudes(0, 0, 0, 1, 1, 0, 0), u));
  EXPECT_EQ(u.amplitudeLow, 1);
  low["MinValidAmplitude"] = -100;
  const CaenConfig nc(low, "negative.json");
  EXPECT_EQ(pixelOf(CaenGeometry(nc, nullCalibration(nc)), amplitudes(0, 0, 0, 10, -1, 0, 0), u),
            0U);
  EXPECT_EQ(u.positionInvalid, 1);
  EXPECT_EQ(u.pixel, 1);
  // The shipped file's MinValidAmplitude 2.
  const CaenGeometry shipped = shippedGeometry("tbl3he.json");
  EXPECT_FALSE(shipped.valid(amplitudes(20, 0, 0, 1, 10, 0, 0), u));
  EXPECT_EQ(u.amplitudeLow, 2);
}

TEST(Tbl3he, TheConstantCalibrationMovesEveryPositionToTheMiddle) {
  // tbl3heconstcalib.json: delta = -0.5 + p, so the corrected position is 0.5 → pixel 49.
  const CaenGeometry g = shippedGeometry("tbl3he.json", "tbl3heconstcalib.json");
  for (const int16_t a : {2, 100, 500, 998}) {
    CaenTally t;
    EXPECT_EQ(pixelOf(g, amplitudes(20, 0, 1, a, static_cast<int16_t>(1000 - a), 0, 0), t),
              1U * 100 + 49 + 1);
  }
}

TEST(Tbl3he, ConfigRefusals) {
  const auto base = test::shipped("tbl3he.json");
  auto cfg = base;
  const auto expect = [&](const char *needle) {
    const std::string e = configError(cfg);
    EXPECT_NE(e.find(needle), std::string::npos) << e;
    cfg = base;
  };
  cfg["NumOfFENs"] = 3; // InvalidConfigNumOfFENs
  expect("NumOfFENs = 3: must equal the number of Topology entries (2)");
  cfg["Topology"][1] = {{"Ring", 10}, {"FEN", 0}, {"Bank", 1}}; // InvalidConfigDuplicateRingFEN
  expect("Topology[1] = ");
  cfg["Topology"][0]["Ring"] = 12; // InvalidConfigMaxRing
  expect("Topology[0].Ring = 12: out of range [0, 11]");
  cfg["Topology"][0]["Ring"] = -1; // InvalidConfigMinRing
  expect("Topology[0].Ring = -1");
  cfg["Topology"][0].erase("Bank"); // MissingMandatoryTopologyField
  expect("missing key 'Bank'");
  cfg["Topology"] = nlohmann::json::array(); // MissingTopology
  expect("Topology = []: TBL3HE needs at least one");
  // efu's own: a bank beyond the image's two; the same number for two pairs.
  cfg["Topology"][1]["Bank"] = 2;
  expect("Topology[1].Bank = 2: out of range [0, 1]");
  cfg["Topology"][1] = {{"Ring", 8}, {"FEN", 1}, {"Bank", 1}};
  expect("FEN x NumOfFENs + Ring = 10, which Topology[0] already has");
  // Keys of other geometries.
  cfg["Banks"] = nlohmann::json::parse(R"([{"Bank": 0, "ID": "b", "GroupsN": 1, "YOffset": 0}])");
  expect("Banks = [{");
  cfg["MaxAmpl"] = 100;
  expect("MaxAmpl = 100: only the bifrost and miracles geometry reads this key");
  auto b = test::shipped("bifrost.json");
  b["Topology"] = base["Topology"];
  EXPECT_NE(configError(b).find("Topology = [{"), std::string::npos) << configError(b);
  b = test::shipped("bifrost.json");
  b["sources"] = {"a"};
  EXPECT_NE(configError(b).find("only the loki geometry reads this key"), std::string::npos);
}

// --- The module: sources, counters, readoutgen's inverse --------------------------------------

struct Shipped {
  FakeModuleContext ctx;
  CaenModule module;
  test::Builder b;
  Shipped(const std::string &config, const std::string &calibration, uint8_t type)
      : ctx(test::shipped(config), config), module(calibrated(ctx, calibration)) {
    b.f.detectorType = type;
  }
  static FakeModuleContext &calibrated(FakeModuleContext &ctx, const std::string &calibration) {
    ctx.setCalibration(test::shippedCalibration(calibration), calibration);
    return ctx;
  }
  void send(const std::vector<CaenReadout> &readouts) {
    b.start();
    for (const CaenReadout &r : readouts) {
      b.add(r);
    }
    module.process(b.finish());
  }
};

TEST(CaenInstruments, EssSourceNamesPerTripletAndBank) {
  Shipped bifrost("bifrost.json", "bifrostnullcalib.json", readout::kTypeBifrost);
  bifrost.send({bifrost.b.readout(0, 0, 0, 0, 1, 0, 0), bifrost.b.readout(3, 0, 4, 0, 1, 0, 0),
                bifrost.b.readout(4, 0, 14, 0, 1, 0, 0), bifrost.b.readout(4, 0, 14, 1, 1, 0, 0)});
  EXPECT_EQ(bifrost.ctx.sources["arc=0;triplet=0"].events.size(), 1U);
  EXPECT_EQ(bifrost.ctx.sources["arc=1;triplet=4"].events.size(), 1U);
  EXPECT_EQ(bifrost.ctx.sources["arc=4;triplet=8"].events.size(), 2U);
  EXPECT_EQ(bifrost.ctx.sources.size(), 45U); // the 45 triplets of rings 0-2
  EXPECT_TRUE(bifrost.ctx.sink.events.empty());
  EXPECT_EQ(bifrost.ctx.value("events.count"), 4);

  Shipped tbl3he("tbl3he.json", "tbl3henullcalib.json", readout::kTypeTbl3he);
  tbl3he.send({tbl3he.b.readout(20, 0, 0, 5, 10, 0, 0), tbl3he.b.readout(18, 0, 0, 5, 10, 0, 0),
               tbl3he.b.readout(19, 0, 0, 5, 10, 0, 0)});
  EXPECT_EQ(tbl3he.ctx.sources["bank0"].events.size(), 1U);
  EXPECT_EQ(tbl3he.ctx.sources["bank1"].events.size(), 2U);

  Shipped cspec("cspec.json", "cspecnullcalib.json", readout::kTypeCspec);
  cspec.send({cspec.b.readout(0, 0, 0, 0, 1, 0, 0), cspec.b.readout(0, 3, 0, 0, 1, 0, 0)});
  EXPECT_EQ(cspec.ctx.sink.events.size(), 1U);
  EXPECT_EQ(cspec.ctx.value("geometry.fen_errors"), 1);
  EXPECT_EQ(cspec.ctx.value("geometry.validation_errors"), 1);
  // A datagram of another detector type is refused at the header.
  cspec.b.f.detectorType = readout::kTypeLoki;
  cspec.send({cspec.b.readout(0, 0, 0, 0, 1, 0, 0)});
  EXPECT_EQ(cspec.ctx.sink.events.size(), 1U);
}

TEST(CaenInstruments, ReadoutgenReachesEveryPixelItTablesAndTheModuleAgrees) {
  // For every pixel of each image: the source's readout (or none), decoded by the module's
  // geometry, is that pixel. The counts of pixels reached are the geometry's own (with
  // amplitudes >= 0, as detectors give them).
  struct File {
    const char *config, *calibration;
    uint32_t reachable;
  };
  for (const File &f : std::vector<File>{
           {"bifrost.json", "bifrostnullcalib.json", 900 * 15}, // the whole image
           {"bifrost.json", "bifrostllbcalib.json", 900 * 15},
           {"cspec.json", "cspecnullcalib.json", 3 * 24 * 180}, // 3 rings x 24 groups
           // Tube B's last pixel needs A / (A + B) >= 0.5 with A < B: negative amplitudes.
           {"miracles.json", "miraclesnullcalib.json", 48 * 128 - 48},
           // Pixel 99 needs B = 0, below the file's MinValidAmplitude 2.
           {"tbl3he.json", "tbl3henullcalib.json", 8 * 99},
           {"tbl3he.json", "tbl3heconstcalib.json", 2 * 4}}) { // every position at pixel 49
    CaenSource source(test::shipped(f.config), f.config, 7, test::shippedCalibration(f.calibration),
                      f.calibration);
    CaenConfig c(test::shipped(f.config), f.config);
    const CaenGeometry g(
        c, CaenCalibration(test::shippedCalibration(f.calibration), f.calibration, c.detector));
    struct Truth final : sdk::TruthSink {
      int32_t pixel = 0;
      void add(int64_t, int64_t, int32_t p) override { pixel = p; }
    };
    uint32_t reached = 0;
    for (uint32_t y = 0; y < c.imageHeight(); ++y) {
      for (uint32_t x = 0; x < c.imageWidth(); ++x) {
        sdk::Neutron n{};
        n.x = x;
        n.y = y;
        n.index = 0;
        std::array<uint8_t, 24> out{};
        Truth truth;
        if (source.encodeEvent(n, out, truth) == 0) {
          continue;
        }
        CaenReadout r{};
        std::memcpy(&r, out.data(), sizeof(r));
        CaenTally t;
        ASSERT_EQ(pixelOf(g, r, t), c.pixel(x, y)) << f.config << " " << x << " " << y;
        ASSERT_EQ(truth.pixel, static_cast<int32_t>(c.pixel(x, y)));
        ++reached;
      }
    }
    EXPECT_EQ(reached, f.reachable) << f.config << " " << f.calibration;
  }
}

// issue 38 item 1: the ESS EFU publishes LoKI's, CSPEC's and MIRACLES's events under "caen"
// (ess-dmsc/event-formation-unit 8b399165, src/modules/{loki,cspec,miracles}/geometry/
// *Geometry.h serializerName(), given to EV44Serializer in src/modules/caen/CaenBase.cpp); the
// module declares it as its default source, whichever file. BIFROST and TBL3HE publish under
// their triplets and banks (EssSourceNamesPerTripletAndBank): nothing goes to the default.
TEST(CaenInstruments, TheDefaultSourceIsTheEssEfusCaen) {
  for (const char *file :
       {"LokiFull.json", "cspec.json", "miracles.json", "bifrost.json", "tbl3he.json"}) {
    EXPECT_EQ(readout::declaredSourceName<CaenModule>(test::shipped(file), file), "caen") << file;
  }
}

} // namespace
} // namespace efu::caen
