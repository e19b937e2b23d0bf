// SPDX-License-Identifier: BSD-2-Clause
// caen --calibration: the ESS charge-division correction, its inverse, and refusals naming the
// file, the key path and the value.
#include "tests/modules/caen/CaenTestConfig.h"
#include "tests/support/FakeModuleContext.h"
#include "common/sdk/ModuleConfig.h"
#include "modules/caen/CaenCalibration.h"
#include "modules/caen/CaenModule.h"
#include "modules/caen/CaenReadout.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

namespace efu::caen {
namespace {

using readout::FakeModuleContext;

using test::baseConfig;

/// One group per tube (32), `units` equal touching intervals over [0, 1], every unit with
/// polynomial `poly`.
nlohmann::json calibration(uint32_t units, const std::vector<double> &poly) {
  nlohmann::json parameters = nlohmann::json::array();
  for (int g = 0; g < 32; ++g) {
    nlohmann::json intervals = nlohmann::json::array();
    nlohmann::json polys = nlohmann::json::array();
    for (uint32_t u = 0; u < units; ++u) {
      intervals.push_back({static_cast<double>(u) / units, static_cast<double>(u + 1) / units});
      polys.push_back(poly);
    }
    parameters.push_back({{"groupindex", g}, {"intervals", intervals}, {"polynomials", polys}});
  }
  return {{"Calibration",
           {{"instrument", "test"}, {"groups", 32}, {"groupsize", units},
            {"Parameters", parameters}}}};
}

std::string refusal(const nlohmann::json &cal) {
  try {
    CaenCalibration c(cal, "cal.json", CaenConfig(baseConfig(), "x.json"));
  } catch (const sdk::ConfigError &e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(CaenCalibration, IdentityLeavesEveryPixelUnchanged) {
  const CaenConfig config(baseConfig(), "x.json");
  for (const uint32_t units : {1U, 7U, 100U}) {
    const CaenCalibration cal(calibration(units, {0, 0, 0, 0}), "cal.json", config);
    for (const uint32_t tube : {0U, 17U, 31U}) {
      for (const int32_t sum : {10, 99, 100, 1000, 4999, 32767}) {
        for (int32_t b = 0; b <= sum; ++b) {
          uint32_t pos = 0;
          ASSERT_TRUE(cal.position(tube, sum - b, b, pos)) << units << " " << sum << " " << b;
          ASSERT_EQ(pos, positionIndex(sum - b, b, 100)) << units << " " << sum << " " << b;
        }
      }
    }
  }
}

TEST(CaenCalibration, PolynomialMovesPositionsAsComputedByHand) {
  const CaenConfig config(baseConfig(), "x.json");
  uint32_t pos = 0;
  // delta = 0.05 + 0.1 p: corrected = 0.9 p - 0.05
  const CaenCalibration linear(calibration(1, {0.05, 0.1, 0, 0}), "cal.json", config);
  ASSERT_TRUE(linear.position(3, 45, 55, pos)); // p 0.55 -> 0.445 -> pixel 44 (uncalibrated 55)
  EXPECT_EQ(pos, 44U);
  ASSERT_TRUE(linear.position(3, 0, 100, pos)); // p 1 -> 0.85
  EXPECT_EQ(pos, 85U);
  ASSERT_TRUE(linear.position(3, 98, 2, pos)); // p 0.02 -> -0.032, clamped to 0
  EXPECT_EQ(pos, 0U);
  // delta = 0.5 p^2 - 0.5 p^3: p 0.55 -> 0.55 - 0.0680625 = 0.4819375 -> pixel 48
  const CaenCalibration cubic(calibration(1, {0, 0, 0.5, -0.5}), "cal.json", config);
  ASSERT_TRUE(cubic.position(3, 45, 55, pos));
  EXPECT_EQ(pos, 48U);
  // delta = -0.3: p 0.9 -> 1.2, clamped to 1 -> the last pixel
  const CaenCalibration shifted(calibration(1, {-0.3, 0, 0, 0}), "cal.json", config);
  ASSERT_TRUE(shifted.position(3, 10, 90, pos));
  EXPECT_EQ(pos, 99U);
}

TEST(CaenCalibration, InverseFindsEveryReachablePixel) {
  const CaenConfig config(baseConfig(), "x.json");
  const CaenCalibration cal(calibration(4, {0.02, -0.05, 0.08, -0.03}), "cal.json", config);
  uint32_t reached = 0;
  for (uint32_t x = 0; x < 100; ++x) {
    for (const int32_t sum : {1000, 3000, 32767}) {
      const int32_t b = cal.amplitudeB(5, x, sum);
      if (b < 0) {
        continue;
      }
      uint32_t pos = 0;
      ASSERT_TRUE(cal.position(5, sum - b, b, pos));
      ASSERT_EQ(pos, x) << sum;
      ++reached;
    }
  }
  EXPECT_GE(reached, 3U * 97); // only pixels the correction pushes off the edges are missed
}

/// A module over baseConfig() with `cal` as its calibration.
struct CalibratedRun {
  FakeModuleContext ctx{baseConfig(), "x.json"};
  std::unique_ptr<CaenModule> module;
  std::vector<uint8_t> d;
  uint32_t seq = 0;
  explicit CalibratedRun(const nlohmann::json &cal) {
    if (!cal.is_null()) {
      ctx.setCalibration(cal, "cal.json");
    }
    module = std::make_unique<CaenModule>(ctx);
  }
  /// One datagram with readouts (fiber 0, FEN 0, group g, a, b).
  void send(const std::vector<std::array<int, 3>> &readouts) {
    readout::HeaderFields f;
    f.detectorType = readout::kTypeLoki;
    f.pulse = {100, 1000};
    f.prevPulse = {99, 0};
    d.assign(readout::headerBytes(0), 0);
    for (const auto &[g, a, b] : readouts) {
      CaenReadout r{};
      r.length = 24;
      r.group = static_cast<uint8_t>(g);
      r.ampA = static_cast<int16_t>(a);
      r.ampB = static_cast<int16_t>(b);
      r.timeHigh = 100;
      r.timeLow = 2000;
      const auto *p = reinterpret_cast<const uint8_t *>(&r);
      d.insert(d.end(), p, p + sizeof(r));
    }
    f.totalLength = static_cast<uint16_t>(d.size());
    f.seqNum = seq++;
    readout::writeHeader(d, f);
    module->process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
  }
  std::vector<int32_t> pixels() const {
    std::vector<int32_t> out;
    for (const auto &e : ctx.sink.events) {
      out.push_back(e.pixelId);
    }
    return out;
  }
};

TEST(CaenCalibration, ModuleWithIdentityGivesTheSameEvents) {
  std::vector<std::array<int, 3>> readouts;
  for (int g = 0; g < 8; ++g) {
    for (int b = 0; b <= 300; b += 3) {
      readouts.push_back({g, 300 - b, b});
    }
  }
  CalibratedRun plain(nullptr), identity(calibration(100, {0, 0, 0, 0}));
  for (size_t i = 0; i < readouts.size(); i += 300) {
    const std::vector<std::array<int, 3>> part(
        readouts.begin() + static_cast<long>(i),
        readouts.begin() + static_cast<long>(std::min(i + 300, readouts.size())));
    plain.send(part);
    identity.send(part);
  }
  EXPECT_EQ(plain.pixels().size(), readouts.size());
  EXPECT_EQ(plain.pixels(), identity.pixels());
  EXPECT_EQ(identity.ctx.value("readouts.errors.calibration"), 0);
}

TEST(CaenCalibration, PositionsOutsideTheIntervalsAreCounted) {
  auto cal = calibration(2, {0, 0, 0, 0});
  for (auto &group : cal["Calibration"]["Parameters"]) {
    group["intervals"] = nlohmann::json::parse("[[0.1, 0.5], [0.5, 0.9]]");
  }
  CalibratedRun run(cal);
  // p 0.05 and 0.95 are outside; p 0.5 (both intervals) and 0.3 are in
  run.send({{0, 95, 5}, {0, 5, 95}, {0, 50, 50}, {0, 70, 30}});
  EXPECT_EQ(run.ctx.value("readouts.errors.calibration"), 2);
  EXPECT_EQ(run.ctx.value("events.count"), 2);
  EXPECT_EQ(run.pixels(), (std::vector<int32_t>{51, 31}));
}

TEST(CaenCalibration, BadCalibrationsAreRefusedWithKeyPathAndValue) {
  auto expectRefused = [](const nlohmann::json &cal, const std::string &what) {
    const std::string e = refusal(cal);
    EXPECT_NE(e.find("cal.json"), std::string::npos) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  auto cal = calibration(4, {0, 0, 0, 0});
  cal["Calibration"]["groups"] = 31;
  expectRefused(cal, "Calibration.groups = 31: expected one group per tube: 32");
  cal = calibration(4, {0, 0, 0, 0});
  cal["Calibration"]["Parameters"].erase(31);
  expectRefused(cal, "Calibration.Parameters = ");
  cal = calibration(4, {0, 0, 0, 0});
  cal["Calibration"]["Parameters"][3]["intervals"][1] = {0.1, 0.2}; // before [0, 0.25] ends
  expectRefused(cal, "Calibration.Parameters[3].intervals[1] = [0.1,0.2]: intervals must ascend");
  cal = calibration(4, {0, 0, 0, 0});
  cal["Calibration"]["Parameters"][3]["intervals"][2] = {0.75, 0.5};
  expectRefused(cal, "Calibration.Parameters[3].intervals[2] = [0.75,0.5]: expected [lo, hi]");
  cal = calibration(4, {0, 0, 0, 0});
  cal["Calibration"]["Parameters"][0]["intervals"][3] = {0.75, 1.5};
  expectRefused(cal, "Calibration.Parameters[0].intervals[3] = [0.75,1.5]");
  cal = calibration(4, {0, 0, 0, 0});
  cal["Calibration"]["Parameters"][2]["polynomials"][0] = {1, 2, 3};
  expectRefused(cal, "Calibration.Parameters[2].polynomials[0] = [1,2,3]: expected 4 coefficients");
  cal = calibration(4, {0, 0, 0, 0});
  cal["Calibration"]["Parameters"][2]["polynomials"][1][3] = "x";
  expectRefused(cal, "Calibration.Parameters[2].polynomials[1][3] = \"x\"");
  cal = calibration(4, {0, 0, 0, 0});
  cal["Calibration"]["Parameters"][5]["groupindex"] = 6;
  expectRefused(cal, "Calibration.Parameters[5].groupindex = 6: expected 5");
  cal = calibration(4, {0, 0, 0, 0});
  cal["Calibration"]["instrument"] = "loki";
  expectRefused(cal, "Calibration.instrument = \"loki\"");
  cal = calibration(4, {0, 0, 0, 0});
  cal["Calibration"].erase("groupsize");
  expectRefused(cal, "missing key 'groupsize'");
  expectRefused(nlohmann::json::array(), "expected an object with key 'Calibration'");
}

TEST(CaenCalibration, TheModuleRefusesABadOneNamingTheFile) {
  auto cal = calibration(4, {0, 0, 0, 0});
  cal["Calibration"]["Parameters"][2]["polynomials"][0] = {1, 2, 3};
  FakeModuleContext ctx(baseConfig(), "x.json");
  ctx.setCalibration(cal, "bad-cal.json");
  try {
    CaenModule module(ctx);
    FAIL() << "accepted";
  } catch (const sdk::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("bad-cal.json: calibration Calibration.Parameters[2]"
                                         ".polynomials[0]"),
              std::string::npos)
        << e.what();
  }
}

TEST(CaenCalibration, AFileThatIsNotJsonIsRefusedNamingIt) {
  const std::string path = ::testing::TempDir() + "/not-json-calibration.json";
  std::ofstream(path) << "{\"Calibration\": [1, 2,";
  try {
    loadCalibration(path);
    FAIL() << "accepted";
  } catch (const sdk::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find(path + ": not valid JSON"), std::string::npos)
        << e.what();
  }
  std::remove(path.c_str());
  EXPECT_TRUE(loadCalibration("").is_null());
}

} // namespace
} // namespace efu::caen
