// SPDX-License-Identifier: BSD-2-Clause
// caen module: the ESS LoKI geometry (pixel tables from the ESS EFU's tests), config checks,
// readout parsing boundaries, one counter per reason, and readoutgen's inverse.
#include "modules/caen/CaenModule.h"
#include "modules/caen/CaenReadout.h"
#include "modules/caen/CaenSource.h"
#include "tests/modules/caen/CaenTestConfig.h"
#include "tests/support/FakeModuleContext.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace efu::caen {
namespace {

using readout::FakeModuleContext;
using test::amplitudes;
using test::Builder;
using test::configError;

/// The pixel the module's geometry gives a (valid) LoKI readout.
uint32_t lokiPixel(const CaenConfig &c, const CaenCalibration &cal, const CaenReadout &r,
                   CaenTally &t) {
  return CaenGeometry(c, cal).pixel(r, t);
}

// The ESS EFU's expectations for LokiFull.json: src/modules/loki/test/LokiConfigTest.cpp
// (GetGlobalGroup) and LokiFullGeometryTest.cpp (getY), event-formation-unit 8b399165.
TEST(LokiGeometry, EssGlobalGroupsAndRowsOfLokiFull) {
  const CaenConfig c(test::lokiFull(), "LokiFull.json");
  const LokiGeometry &g = c.loki;
  struct Row {
    uint32_t ring, fen, group, expected;
  };
  for (const Row &r : std::vector<Row>{{0, 0, 0, 0},
                                       {0, 0, 4, 1},
                                       {0, 15, 4, 31},
                                       {1, 0, 0, 32},
                                       {1, 0, 4, 33},
                                       {1, 11, 4, 55},
                                       {1, 11, 7, 223},
                                       {0, 0, 1, 56},
                                       {0, 15, 5, 87},
                                       {1, 0, 1, 88},
                                       {1, 11, 5, 111},
                                       {2, 0, 0, 224},
                                       {2, 0, 1, 240},
                                       {9, 15, 7, 895}}) {
    EXPECT_EQ(g.globalGroup(r.ring, r.fen, r.group), r.expected)
        << r.ring << " " << r.fen << " " << r.group;
  }
  EXPECT_EQ(g.row(2, 0, 0, 0), 1568U);
  EXPECT_EQ(g.row(3, 0, 0, 0), 2016U);
  EXPECT_EQ(g.totalGroups, 896U); // ConfiguredBanks 9, ConfiguredRings 10
  EXPECT_EQ(c.imageWidth(), 512U);
  EXPECT_EQ(c.imageHeight(), 896U * 7);
  // Every straw of every configured ring has a row of its own: all 6272 rows are read.
  for (uint32_t row = 0; row < c.imageHeight(); ++row) {
    ASSERT_TRUE(c.mapped[row]) << row;
    const Channel &ch = c.channels[row];
    ASSERT_EQ(g.row(ch.ring, ch.fen, ch.group, ch.unit), row);
  }
}

// The ESS EFU's pixel expectations: src/modules/loki/test/LokiFullGeometryTest.cpp with
// LokiFull.json and lokinullcalib.json.
TEST(LokiGeometry, EssPixelsOfLokiFull) {
  const CaenConfig c(test::lokiFull(), "LokiFull.json");
  const CaenCalibration cal(test::lokiNullCalibration(), "lokinullcalib.json", "loki");
  struct Case {
    uint8_t fiber;
    int16_t a, b, c, d;
    uint32_t pixel;
  };
  for (const Case &k : std::vector<Case>{{0, 0, 0, 100, 0, 1},       // bank 0, first pixel
                                         {4, 0, 0, 100, 0, 802817},  // ring 2: bank 1
                                         {6, 0, 0, 100, 0, 1032193}, // ring 3: bank 2
                                         {0, 100, 0, 0, 0, 512}}) {  // bank 0, last pixel
    CaenTally t;
    EXPECT_EQ(lokiPixel(c, cal, amplitudes(k.fiber, 0, 0, k.a, k.b, k.c, k.d), t), k.pixel)
        << int(k.fiber);
  }
}

/// The instrument of the ESS EFU's src/modules/loki/test/LokiGeometryTest.cpp: one bank of 56
/// groups per layer on ring 0 (16 FENs), 512 pixels, the null intervals.
struct EssUnitTest : ::testing::Test {
  CaenConfig c{test::validated(nlohmann::json::parse(R"({"Detector": "loki", "Resolution": 512,
      "Banks": [{"Bank": 0, "ID": "bank0", "GroupsN": 56, "YOffset": 0}],
      "Config": [{"Ring": 0, "Bank": 0, "FENs": 16, "FENOffset": 0}]})")),
               "unit.json"};
  CaenCalibration cal{test::nullCalibration(224), "null.json", "loki"};
  CaenTally t;
  /// The straw (0..6) a readout of group 0 lands on, from its pixel; -1 for none.
  int unit(int16_t a, int16_t b, int16_t cc, int16_t d) {
    const uint32_t p = lokiPixel(c, cal, amplitudes(0, 0, 0, a, b, cc, d), t);
    return p == 0 ? -1 : static_cast<int>((p - 1) / 512);
  }
  int x(int16_t a, int16_t b, int16_t cc, int16_t d) {
    const uint32_t p = lokiPixel(c, cal, amplitudes(0, 0, 0, a, b, cc, d), t);
    return p == 0 ? -1 : static_cast<int>((p - 1) % 512);
  }
};

TEST_F(EssUnitTest, UnitAndPositionFromTheFourAmplitudes) {
  // MinMaxUnit and MinMaxPos: unit from (B + D) / sum, position from (A + B) / sum.
  for (int16_t i = 1; i < 4096; i += 7) {
    EXPECT_EQ(unit(0, i, 0, 0), 6);
    EXPECT_EQ(unit(0, 0, 0, i), 6);
    EXPECT_EQ(unit(i, i, 0, 0), 3);
    EXPECT_EQ(unit(0, 0, i, i), 3);
    EXPECT_EQ(unit(0, 0, i, 0), 0);
    EXPECT_EQ(x(0, 0, i, 0), 0);
    EXPECT_EQ(x(0, 0, 0, i), 0);
    EXPECT_EQ(x(0, 0, i, i), 0);
    EXPECT_EQ(x(i, i, 0, 0), 511);
  }
  // calcPixel: all 10 → unit 3, position 0.5 → round(255.5) = 256: 3 x 512 + 256 + 1.
  EXPECT_EQ(lokiPixel(c, cal, amplitudes(0, 0, 0, 10, 10, 10, 10), t), 1793U);
  // AllZeroes
  const CaenTally before = t;
  EXPECT_EQ(lokiPixel(c, cal, amplitudes(0, 0, 0, 0, 0, 0, 0), t), 0U);
  EXPECT_EQ(t.amplitudeZero - before.amplitudeZero, 1);
  EXPECT_EQ(t.pixel - before.pixel, 1);
}

TEST_F(EssUnitTest, UnitLimitsOfTheNullIntervals) {
  // UnitLimits: interval ends belong to the interval; the gaps between intervals to none.
  const double d = 0.0001;
  struct Limit {
    double s;
    int unit;
  };
  for (const Limit &l : std::vector<Limit>{{0.1, 0},
                                           {0.143 - d, 0},
                                           {0.143, 0},
                                           {0.144 + d, 1},
                                           {0.286 - d, 1},
                                           {0.286, 1},
                                           {0.287 + d, 2},
                                           {0.429 - d, 2},
                                           {0.429, 2},
                                           {0.43 + d, 3},
                                           {0.571 - d, 3},
                                           {0.571, 3},
                                           {0.572 + d, 4},
                                           {0.714 - d, 4},
                                           {0.714, 4},
                                           {0.715 + d, 5},
                                           {0.857 - d, 5},
                                           {0.857, 5},
                                           {0.858 + d, 6},
                                           {0.1435, CaenCalibration::kOutside},
                                           {1.5, CaenCalibration::kOutside}}) {
    EXPECT_EQ(cal.unit(0, l.s), l.unit) << l.s;
  }
  EXPECT_EQ(cal.unit(224, 0.1), CaenCalibration::kGroupBeyond);
}

TEST_F(EssUnitTest, PolynomialCorrectionAndClamping) {
  const CaenCalibration shifted(test::nullCalibration(224, 0.25), "shift.json", "loki");
  CaenTally u;
  // position 0.5 - 0.25 = 0.25 → round(0.25 x 511) = 128 on straw 3
  EXPECT_EQ(lokiPixel(c, shifted, amplitudes(0, 0, 0, 10, 10, 10, 10), u), 3U * 512 + 128 + 1);
  // position 0.1 - 0.25 < 0 → clamped to pixel 0 of straw 0, counted
  EXPECT_EQ(lokiPixel(c, shifted, amplitudes(0, 0, 0, 1, 0, 9, 0), u), 1U);
  EXPECT_EQ(u.positionLow, 1);
  const CaenCalibration back(test::nullCalibration(224, -0.25), "back.json", "loki");
  EXPECT_EQ(lokiPixel(c, back, amplitudes(0, 0, 0, 9, 0, 1, 0), u), 512U);
  EXPECT_EQ(u.positionHigh, 1);
  EXPECT_EQ(u.pixel, 0);
}

TEST_F(EssUnitTest, ImpossibleAmplitudesGiveNoPixel) {
  EXPECT_EQ(lokiPixel(c, cal, amplitudes(0, 0, 0, -10, 0, 20, 0), t), 0U); // (A+B)/sum < 0
  EXPECT_EQ(t.positionInvalid, 0); // the ESS EFU's LoKI geometry counts only the pixel error
  EXPECT_EQ(t.pixel, 1);
  EXPECT_EQ(lokiPixel(c, cal, amplitudes(0, 0, 0, 0, 0, 10, -20), t), 0U); // straw 2 > 1
  EXPECT_EQ(t.outsideTube, 1);
  // Groups above 7 are not checked by the ESS EFU either: group 8 of FEN 0 is FEN 1's group 0.
  EXPECT_EQ(lokiPixel(c, cal, amplitudes(0, 0, 8, 10, 10, 10, 10), t),
            lokiPixel(c, cal, amplitudes(0, 1, 0, 10, 10, 10, 10), t));
  // A group beyond the calibration's groups has no straw intervals.
  const CaenCalibration small(test::nullCalibration(10), "small.json", "loki");
  EXPECT_EQ(lokiPixel(c, small, amplitudes(0, 5, 0, 10, 10, 10, 10), t), 0U); // group 10
  EXPECT_EQ(t.calibrationGroup, 1);
  EXPECT_EQ(t.pixel, 3);
}

TEST(LokiGeometry, AGroupBeyondTheBanksRowsHasNoPixel) {
  // Ring 11 feeds bank 1 (rows 112..167): group 60 of its FEN 0 is global group 31, which a
  // 100-group calibration covers, but its row 112 + 7 x 15 = 217 lies beyond the image.
  const CaenConfig c(test::smallLoki(), "small.json");
  const CaenCalibration cal(test::nullCalibration(100), "null.json", "loki");
  CaenTally t;
  EXPECT_EQ(c.loki.globalGroup(11, 0, 60), 31U);
  EXPECT_EQ(lokiPixel(c, cal, amplitudes(22, 0, 60, 10, 10, 10, 10), t), 0U);
  EXPECT_EQ(t.rowInvalid, 1);
  EXPECT_EQ(t.pixel, 1);
}

TEST(CaenConfig, ErrorsNameFileKeyAndValue) {
  auto cfg = test::lokiFull();
  const auto expect = [&](const char *needle) {
    const std::string e = configError(cfg);
    EXPECT_NE(e.find("x.json"), std::string::npos) << e;
    EXPECT_NE(e.find(needle), std::string::npos) << e;
    cfg = test::lokiFull();
  };
  cfg["Detector"] = "dream";
  expect("Detector = \"dream\": efu's caen module serves the ESS geometries of: loki, bifrost");
  cfg["Detector"] = "bifrost"; // LoKI's own keys in another instrument's file
  expect("Banks = [{\"Bank\":0,");
  cfg["Detector"] = "bifrost";
  expect("only the loki geometry reads this key; the file's Detector is bifrost");
  cfg["Config"][1]["Ring"] = 12;
  expect("Config[1].Ring = 12: out of range [0, 11]");
  cfg["Config"][1]["Ring"] = 0;
  expect("Config[1].Ring = 0: ring listed twice");
  cfg["Config"][2]["Bank"] = 9;
  expect("Config[2].Bank = 9");
  cfg["Banks"].erase(1);
  expect("Config[2].Bank = 1: no such bank in Banks");
  cfg["Banks"][0]["Colour"] = 1;
  expect("Banks[0].Colour = 1: unknown key");
  cfg["Banks"][0].erase("GroupsN");
  expect("missing key 'GroupsN'");
  cfg["Banks"][2]["YOffset"] = 2017;
  expect("Banks[2].YOffset = 2017: must be a multiple of 7");
  cfg["Config"][0]["FENs"] = 17; // 17 FENs x 2 groups of bank 0 run into ring 1's FENs
  expect("which an earlier ring already reads");
  cfg["Config"][9] = {{"Ring", 9}, {"Bank", 8}, {"FENs", 1}, {"FENOffset", 16}};
  expect("group 3 straw 0 lands on row 6272, beyond the 6272 rows");
  cfg["GroupsZ"] = 3;
  expect("GroupsZ = 3: the LoKI geometry has 4 layers");
  cfg["ReadoutConstDelayNS"] = 5;
  expect("ReadoutConstDelayNS = 5");
  cfg["sources"] = {"a", "b"};
  expect("needs one source name per bank (9 in Banks)");
  cfg["Resolution"] = 65536; // 114688 rows x 65536 pixels: beyond int32 pixel ids
  cfg["Banks"] =
      nlohmann::json::array({{{"Bank", 0}, {"ID", "b"}, {"GroupsN", 4096}, {"YOffset", 0}}});
  cfg["Config"] =
      nlohmann::json::array({{{"Ring", 0}, {"Bank", 0}, {"FENs", 1}, {"FENOffset", 0}}});
  expect("Resolution = 65536: 114688 straw rows of this many pixels exceed");
  EXPECT_EQ(configError(test::lokiFull()), "");
}

TEST(CaenConfig, EssDefaults) {
  // src/modules/caen/geometry/Config.h: MaxTOFNS 20 and MaxPulseTimeNS 5 periods of 14 Hz.
  const CaenConfig c(test::lokiFull(), "LokiFull.json");
  EXPECT_EQ(c.maxTofNs, 20 * 71'428'571);
  EXPECT_EQ(c.maxPulseGapNs, 357'142'855);
  EXPECT_EQ(c.detectorType, readout::kTypeLoki);
}

TEST(CaenCalibration, EssChecksNameFileKeyAndValue) {
  const auto error = [](const nlohmann::json &cal) -> std::string {
    try {
      CaenCalibration c(cal, "cal.json", "loki");
    } catch (const sdk::ConfigError &e) {
      return e.what();
    }
    return "";
  };
  auto cal = test::nullCalibration(3);
  EXPECT_EQ(error(cal), "");
  cal["Calibration"]["instrument"] = "bifrost";
  EXPECT_NE(error(cal).find("Calibration.instrument = \"bifrost\""), std::string::npos);
  cal = test::nullCalibration(3);
  cal["Calibration"]["groups"] = 4;
  EXPECT_NE(error(cal).find("Calibration.Parameters"), std::string::npos);
  cal = test::nullCalibration(3);
  cal["Calibration"]["Parameters"][1]["groupindex"] = 2;
  EXPECT_NE(error(cal).find("Parameters[1].groupindex = 2: expected 1"), std::string::npos);
  cal = test::nullCalibration(3);
  cal["Calibration"]["Parameters"][2]["intervals"][1] = {0.143, 0.286}; // touches unit 0
  EXPECT_NE(error(cal).find("Parameters[2].intervals"), std::string::npos);
  EXPECT_NE(error(cal).find("overlap"), std::string::npos);
  cal = test::nullCalibration(3);
  cal["Calibration"]["Parameters"][0]["intervals"][6] = {0.858, 1.01};
  EXPECT_NE(error(cal).find("Parameters[0].intervals[6] = [0.858,1.01]"), std::string::npos);
  cal = test::nullCalibration(3);
  cal["Calibration"]["Parameters"][0]["polynomials"][3] = {0.0, 0.0, 0.0};
  EXPECT_NE(error(cal).find("Parameters[0].polynomials[3]"), std::string::npos);
  cal = test::nullCalibration(3);
  cal["Calibration"]["Parameters"][0]["intervals"][6] = {1.0, 0.858}; // reversed: allowed
  EXPECT_EQ(error(cal), "");
  EXPECT_EQ(CaenCalibration(cal, "cal.json", "loki").unit(0, 0.9), 6);
}

/// Builds datagrams for the module.
FakeModuleContext &withCalibration(FakeModuleContext &ctx, const nlohmann::json &cal) {
  ctx.setCalibration(cal, "null.json");
  return ctx;
}

struct ModuleTest : ::testing::Test {
  FakeModuleContext ctx{test::smallLoki(), "small.json"};
  CaenModule module{withCalibration(ctx, test::nullCalibration(24))};
  Builder b;

  /// Sends one datagram with the readouts; returns the counters that changed.
  std::map<std::string, int64_t> send(const std::vector<CaenReadout> &readouts) {
    const auto before = ctx.snapshot();
    b.start();
    for (const CaenReadout &r : readouts) {
      b.add(r);
    }
    module.process(b.finish());
    std::map<std::string, int64_t> moved;
    for (const auto &[k, v] : ctx.snapshot()) {
      if (v != before.at(k)) {
        moved[k] = v - before.at(k);
      }
    }
    return moved;
  }
  std::map<std::string, int64_t> one(const CaenReadout &r) { return send({r}); }
  /// What one valid header with one complete readout moves, plus `extra`.
  static std::map<std::string, int64_t> with(std::map<std::string, int64_t> extra) {
    std::map<std::string, int64_t> m{{"parser.essheader.ok", 1},
                                     {"parser.essheader.oq.00.packets", 1},
                                     {"parser.essheader.seq.expected", 1},
                                     {"parser.readout.header.count", 1},
                                     {"parser.readout.count", 1}};
    m.insert(extra.begin(), extra.end());
    return m;
  }
};

TEST_F(ModuleTest, AcceptedReadoutBecomesPixelEvent) {
  // Ring 11 (fiber 23), FEN 0, group 6 (layer 2, pair 1), straw 3 (B + D = sum / 2), position
  // 0.5: bank 1 row 112 + 2 x 2 x 7 + 7 + 3 = 150; x = round(0.5 x 99) = 50.
  const auto moved = one(b.readout(23, 0, 6, 10, 10, 10, 10, 12345));
  EXPECT_EQ(moved, with({{"events.count", 1}, {"events.timestamp.tof.count", 1}}));
  ASSERT_EQ(ctx.sink.events.size(), 1U);
  const auto &e = ctx.sink.events[0];
  EXPECT_EQ(e.pixelId, 150 * 100 + 50 + 1);
  EXPECT_EQ(e.pulseTimeNs, readout::ticksToNs(100, 1000));
  EXPECT_NEAR(e.tofNs, 12345, 6); // within half a tick
}

TEST_F(ModuleTest, EachRejectionHasItsCounter) {
  EXPECT_EQ(one(b.readout(2, 0, 0, 10, 10, 10, 10)),
            with({{"geometry.ring_mapping_errors", 1}, {"geometry.validation_errors", 1}}));
  EXPECT_EQ(one(b.readout(1, 2, 0, 10, 10, 10, 10)),
            with({{"geometry.topology_errors", 1}, {"geometry.validation_errors", 1}}));
  EXPECT_EQ(one(b.readout(0, 0, 0, 0, 0, 0, 0)), with({{"events.timestamp.tof.count", 1},
                                                       {"geometry.ampl_zero", 1},
                                                       {"geometry.pixel_errors", 1}}));
  EXPECT_EQ(one(b.readout(0, 0, 0, 0, 0, 10, -20)), with({{"events.timestamp.tof.count", 1},
                                                          {"geometry.outside_tube", 1},
                                                          {"geometry.pixel_errors", 1}}));
  EXPECT_EQ(one(b.readout(0, 1, 200, 10, 10, 10, 10)), with({{"events.timestamp.tof.count", 1},
                                                             {"geometry.calib_group_errors", 1},
                                                             {"geometry.pixel_errors", 1}}));
  EXPECT_EQ(one(b.readout(0, 0, 0, 10, 10, 10, 10, 100'000'100)),
            with({{"events.timestamp.tof.high", 1}}));
  EXPECT_EQ(one(b.readout(0, 0, 0, 10, 10, 10, 10, -100)),
            with({{"events.timestamp.tof.negative", 1},
                  {"events.timestamp.prevtof.count", 1},
                  {"events.count", 1}}));
  EXPECT_EQ(one(b.readout(0, 0, 0, 10, 10, 10, 10, -200'000'000)),
            with({{"events.timestamp.tof.negative", 1}, {"events.timestamp.prevtof.negative", 1}}));
  // An event before the pulse is measured from the previous pulse (the tof the ESS EFU gives);
  // efu publishes it with the previous pulse as its reference time.
  const auto &e = ctx.sink.events.back();
  EXPECT_EQ(e.pulseTimeNs, readout::ticksToNs(b.f.prevPulse.high, b.f.prevPulse.low));
}

TEST_F(ModuleTest, ABadReadoutHeaderEndsTheDatagram) {
  // As the ESS EFU's DataParser: the readouts before it count, nothing after it is read.
  const CaenReadout good = b.readout(0, 0, 0, 10, 10, 10, 10);
  CaenReadout fiber = good;
  fiber.fiber = 24;
  auto moved = send({good, fiber, good});
  EXPECT_EQ(moved.at("parser.readout.error_ringfen"), 1);
  EXPECT_EQ(moved.at("parser.readout.count"), 1);
  EXPECT_EQ(moved.at("events.count"), 1);
  CaenReadout fen = good;
  fen.fen = 24;
  EXPECT_EQ(send({fen, good}).at("parser.readout.error_ringfen"), 1);
  CaenReadout length = good;
  length.length = 20;
  moved = send({length, good});
  EXPECT_EQ(moved.at("parser.readout.error_datlen_invalid"), 1);
  EXPECT_EQ(moved.at("parser.readout.header.count"), 1);
  EXPECT_FALSE(moved.contains("parser.readout.count"));
  length.length = 49; // more than is left
  moved = send({good, length});
  EXPECT_EQ(moved.at("parser.readout.error_datlen_mismatch"), 1);
  EXPECT_EQ(moved.at("events.count"), 1);
  b.start();
  b.add(good);
  b.addBytes(3);
  const auto before = ctx.value("parser.readout.error_headersize");
  module.process(b.finish());
  EXPECT_EQ(ctx.value("parser.readout.error_headersize"), before + 1);
}

TEST_F(ModuleTest, HeaderChecksAndHeartbeats) {
  b.start();
  module.process(b.finish()); // heartbeat
  EXPECT_EQ(ctx.value("parser.essheader.heartbeats"), 1);
  b.f.detectorType = readout::kTypeBifrost;
  b.start();
  b.add(b.readout(0, 0, 0, 10, 10, 10, 10));
  module.process(b.finish());
  EXPECT_EQ(ctx.value("parser.essheader.errors.type"), 1);
  b.f.detectorType = readout::kTypeLoki;
  // MaxPulseTimeNS (default 357 142 855): a previous pulse 0.4 s before the pulse is refused.
  const auto prev = b.f.prevPulse;
  b.f.prevPulse = readout::nsToTicks(readout::ticksToNs(100, 1000) - 400'000'000);
  b.start();
  b.add(b.readout(0, 0, 0, 10, 10, 10, 10));
  module.process(b.finish());
  EXPECT_EQ(ctx.value("parser.essheader.errors.timehigh"), 1);
  EXPECT_EQ(ctx.value("parser.readout.count"), 0);
  b.f.prevPulse = prev;
  // the loss pair handed to the daemon is the sequence pair
  ASSERT_NE(ctx.lossLost(), nullptr);
  EXPECT_EQ(ctx.lossExpected()->get(), ctx.value("parser.essheader.seq.expected"));
}

// Issue 38 item 2, through LoKI: the header of a datagram from the ESS EFU's generator with header
// fuzzing, byte for byte (version 1, 8960 bytes, sequence number 50, pulse 1796351008 s +
// 20097094 ticks, previous pulse 156 s after it). The ESS EFU accepts it (its
// src/common/readout/ess/Parser.cpp refuses only pulse - previous pulse above MaxPulseTimeDiffNS,
// a signed difference) and published 368 events from it, e.g. pixel 5377 at tof 29907271 ns
// (getTOF of src/common/time/ESSTime.cpp: from the pulse; before the pulse, from the previous
// pulse, which is later still: refused). The capture's readouts are not in the issue: these 372
// are ours, 368 at pixel 5377 on the tick of that tof and 4 before the pulse.
TEST(CaenModule, Issue38PreviousPulseAfterThePulsePublishesTheEventsAsTheEssEfu) {
  const char *hex = "000145535330002300002024126b46a83201bc24126b0eb0d200320000000000";
  std::vector<uint8_t> d;
  for (size_t i = 0; hex[i] != '\0'; i += 2) {
    d.push_back(static_cast<uint8_t>(std::stoi(std::string(hex + i, 2), nullptr, 16)));
  }
  ASSERT_EQ(d.size(), 32U);
  // Fiber 0, FEN 0, group 4 is LokiFull's global group 1; equal amplitudes: straw 3, position
  // 256 of 512, so row 10 and pixel 10 x 512 + 256 + 1 (the null calibration, as without a file).
  CaenReadout neutron = test::amplitudes(0, 0, 4, 10, 10, 10, 10);
  neutron.timeHigh = 1'796'351'008;
  neutron.timeLow = 22'730'504;
  CaenReadout early = neutron; // 1 ms before the pulse
  const auto e = readout::nsToTicks(readout::ticksToNs(1'796'351'008, 20'097'094) - 1'000'000);
  early.timeHigh = e.high;
  early.timeLow = e.low;
  for (int i = 0; i < 372; ++i) {
    const CaenReadout &r = i % 93 == 92 ? early : neutron;
    const auto *p = reinterpret_cast<const uint8_t *>(&r);
    d.insert(d.end(), p, p + sizeof(r));
  }
  ASSERT_EQ(d.size(), 8960U);
  FakeModuleContext ctx(test::lokiFull(), "LokiFull.json");
  CaenModule module(ctx);
  module.process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
  ASSERT_EQ(ctx.sink.events.size(), 368U);
  const int64_t pulseNs = readout::ticksToNs(1'796'351'008, 20'097'094);
  for (const auto &ev : ctx.sink.events) {
    ASSERT_EQ(ev, (readout::RecordedEvent{pulseNs, 29'907'271, 5377}));
  }
  EXPECT_EQ(ctx.value("parser.essheader.ok"), 1);
  EXPECT_EQ(ctx.value("parser.essheader.prev_after_pulse"), 1);
  EXPECT_EQ(ctx.value("parser.essheader.errors.timehigh"), 0);
  EXPECT_EQ(ctx.value("parser.readout.count"), 372);
  EXPECT_EQ(ctx.value("events.count"), 368);
  EXPECT_EQ(ctx.value("events.timestamp.tof.count"), 368);
  EXPECT_EQ(ctx.value("events.timestamp.tof.negative"), 4);
  EXPECT_EQ(ctx.value("events.timestamp.prevtof.negative"), 4);
  EXPECT_EQ(ctx.value("events.timestamp.prevtof.count"), 0);
}

TEST(CaenModule, WithoutACalibrationFileTheEssNullCalibration) {
  // The same intervals and polynomials as the shipped lokinullcalib.json, group by group.
  const CaenCalibration file(test::lokiNullCalibration(), "lokinullcalib.json", "loki");
  const CaenCalibration null = nullCalibration(CaenConfig(test::lokiFull(), "LokiFull.json"));
  ASSERT_EQ(null.groups(), file.groups());
  ASSERT_EQ(null.unitsPerGroup(), file.unitsPerGroup());
  for (uint32_t g = 0; g < 896; g += 17) {
    for (int i = 0; i <= 1000; ++i) {
      ASSERT_EQ(null.unit(g, i / 1000.0), file.unit(g, i / 1000.0)) << g << " " << i;
    }
    for (uint32_t u = 0; u < 7; ++u) {
      ASSERT_EQ(null.corrected(g, u, 0.3), file.corrected(g, u, 0.3));
    }
  }
  FakeModuleContext ctx{test::smallLoki(), "small.json"};
  CaenModule module(ctx);
  auto cal = test::nullCalibration(24);
  cal["Calibration"]["instrument"] = "LoKI";
  ctx.setCalibration(cal, "cal.json");
  EXPECT_THROW(CaenModule m(ctx), sdk::ConfigError); // the ESS EFU compares names exactly
}

TEST(CaenSources, EachBanksEventsGoToItsOwnSource) {
  auto config = test::smallLoki();
  config["sources"] = {"loki_rear", "loki_front"};
  FakeModuleContext ctx{config, "small.json"};
  ctx.setCalibration(test::nullCalibration(24));
  CaenModule module(ctx);
  Builder b;
  b.start();
  b.add(b.readout(0, 0, 0, 10, 10, 10, 10));  // ring 0: bank 0
  b.add(b.readout(22, 0, 0, 10, 10, 10, 10)); // ring 11: bank 1
  b.add(b.readout(23, 0, 0, 10, 10, 10, 10));
  module.process(b.finish());
  EXPECT_EQ(ctx.sources["loki_rear"].events.size(), 1U);
  EXPECT_EQ(ctx.sources["loki_front"].events.size(), 2U);
  EXPECT_TRUE(ctx.sink.events.empty());
}

TEST(CaenSource, EveryStrawAndPositionDecodesToItsPixel) {
  // readoutgen's inverse against the module's geometry, with the null calibration and with a
  // shifted one (positions moved by a polynomial; the ends clamp).
  const auto config = test::smallLoki();
  for (const double shift : {0.0, 0.05}) {
    const auto cal = test::nullCalibration(24, shift);
    const CaenSource source(config, "small.json", 1, cal, "cal.json");
    const CaenCalibration calibration(cal, "cal.json", "loki");
    const CaenConfig &c = source.config();
    for (uint32_t row = 0; row < c.imageHeight(); ++row) {
      const Channel &ch = c.channels[row];
      for (uint32_t x = 0; x < c.resolution; x += 3) {
        std::array<int16_t, 4> amp{};
        const uint32_t group = c.loki.globalGroup(ch.ring, ch.fen, ch.group);
        const bool reachable = source.amplitudes(group, ch.unit, x, 3000, amp);
        // The shift moves every position 0.05 down: the last pixels cannot be reached.
        if (x + 1 < (1.0 - shift) * 99) {
          ASSERT_TRUE(reachable) << row << " " << x;
        }
        if (!reachable) {
          continue;
        }
        CaenTally t;
        ASSERT_EQ(lokiPixel(c, calibration,
                            amplitudes(static_cast<uint8_t>(2 * ch.ring), ch.fen, ch.group, amp[0],
                                       amp[1], amp[2], amp[3]),
                            t),
                  c.pixel(x, row))
            << row << " " << x << " shift " << shift;
        ASSERT_EQ(amp[0] + amp[1] + amp[2] + amp[3], 3000);
      }
    }
  }
}

} // namespace
} // namespace efu::caen
