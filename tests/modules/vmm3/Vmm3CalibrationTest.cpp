// SPDX-License-Identifier: BSD-2-Clause
// vmm3: the ESS VMM3 hybrid calibration: identity, the ESS arithmetic (src/common/readout/vmm3/
// test/VMM3CalibrationTest.cpp of ess-dmsc/event-formation-unit 8b399165, and the calibration
// of src/modules/freia/test/FreiaInstrumentTest.cpp), every refusal, the hybrids a file leaves
// out, the inverse readoutgen uses, and a calibration through the module.
#include "modules/vmm3/Vmm3Calibration.h"
#include "modules/vmm3/Vmm3Module.h"
#include "tests/modules/vmm3/Vmm3TestSupport.h"
#include "tests/support/FakeModuleContext.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace efu::vmm3 {
namespace {

using Channel = Vmm3Calibration::Channel;
using test::shipped;
using test::shippedCalibration;

Vmm3Config freiaConfig() {
  return parseVmm3Config(shipped("freia.json"), "freia.json");
}

/// The error the calibration `cal` gets against freia.json; "" when taken.
std::string calibrationError(const nlohmann::json &cal) {
  try {
    const Vmm3Calibration c(cal, "cal.json", freiaConfig(), "freia.json");
  } catch (const sdk::ConfigError &e) {
    return e.what();
  }
  return "";
}

TEST(Vmm3Calibration, IdentityWithoutAFile) {
  // VMM3CalibrationTest.cpp Constructor: ADC 0, 42, 1023 unchanged, 1024 and 65535 → 1023;
  // TDC 0 → 1.5 x 22.72 ns, TDC 255 → 1.5 x 22.72 - 60 ns.
  const Vmm3Config config = freiaConfig();
  const Vmm3Calibration cal(config);
  EXPECT_TRUE(cal.uncovered().empty());
  for (size_t h = 0; h < config.hybrids.size(); ++h) {
    for (uint8_t vmm = 0; vmm < 16; ++vmm) {
      for (uint8_t ch = 0; ch < 64; ++ch) {
        const Channel &c = cal.channel(h, vmm, ch);
        ASSERT_EQ(c.adcOffset, 0.0);
        ASSERT_EQ(c.adcSlope, 1.0);
        ASSERT_EQ(c.tdcOffset, 0.0);
        ASSERT_EQ(c.tdcSlope, 1.0);
      }
    }
  }
  const Channel identity;
  for (uint16_t raw = 0; raw <= 1023; ++raw) {
    ASSERT_EQ(Vmm3Calibration::adc(identity, raw), raw);
  }
  EXPECT_EQ(Vmm3Calibration::adc(identity, 1024), 1023);
  EXPECT_EQ(Vmm3Calibration::adc(identity, 65535), 1023);
  // 1000 ns + 34.08 → 1034; + 34.08 - 60 → 974.08 → 974; TDC 128: 1000 + 3.96 → 1003.
  EXPECT_EQ(Vmm3Calibration::timeNs(identity, 1000, 0), 1034U);
  EXPECT_EQ(Vmm3Calibration::timeNs(identity, 1000, 255), 974U);
  EXPECT_EQ(Vmm3Calibration::timeNs(identity, 1000, 128), 1003U);
  // In today's epoch the sum is rounded to the double's 256-ns grid.
  EXPECT_EQ(Vmm3Calibration::timeNs(identity, 1'700'000'000'000'011'356, 0),
            1'700'000'000'000'011'264U);
}

TEST(Vmm3Calibration, EssArithmetic) {
  struct AdcCase {
    const char *what;
    Channel c;
    uint16_t raw, corrected;
  };
  const std::vector<AdcCase> adcCases{
      // VMM3CalibrationTest.cpp ZeroCal: slope 0 → 0.
      {"zero", {0, 0, 0, 0}, 42, 0},
      {"zero 1023", {0, 0, 0, 0}, 1023, 0},
      // ADCClampNegative: slope -1 → 0 everywhere.
      {"negative slope", {0, -1, 0, -1}, 42, 0},
      {"negative slope max", {0, -1, 0, -1}, 65535, 0},
      // ADCClampPositive: offset -1, slope 2000 → 1023 everywhere.
      {"huge slope 0", {-1, 2000, 0, -1}, 0, 1023},
      {"huge slope 1024", {-1, 2000, 0, -1}, 1024, 1023},
      // FreiaInstrumentTest.cpp's file, vmm0 channel 0: offset 50, slope 5.
      {"ess 50/5 of 0x100", {50, 5, 0, 1}, 0x100, 1023},
      {"ess 50/5 of 100", {50, 5, 0, 1}, 100, 250},
      {"ess 50/5 of 50", {50, 5, 0, 1}, 50, 0},
      {"ess 50/5 of 40", {50, 5, 0, 1}, 40, 0},
      {"ess 50/5 of 254", {50, 5, 0, 1}, 254, 1020},
      // Hand-picked: offset 10.5, slope 1.5: truncation, and the clamp on both sides.
      {"100", {10.5, 1.5, 0, 1}, 100, 134},  // 134.25
      {"692", {10.5, 1.5, 0, 1}, 692, 1022}, // 1022.25
      {"693", {10.5, 1.5, 0, 1}, 693, 1023}, // 1023.75
      {"700", {10.5, 1.5, 0, 1}, 700, 1023}, // 1034.25
      {"11", {10.5, 1.5, 0, 1}, 11, 0},      // 0.75
      {"10", {10.5, 1.5, 0, 1}, 10, 0},      // -0.75
      {"0", {10.5, 1.5, 0, 1}, 0, 0},        // -15.75
      // A negative offset raises small values.
      {"offset -3.2", {-3.2, 0.5, 0, 1}, 1, 2}, // 2.1
  };
  for (const AdcCase &a : adcCases) {
    EXPECT_EQ(Vmm3Calibration::adc(a.c, a.raw), a.corrected) << a.what;
  }
  struct TdcCase {
    const char *what;
    Channel c;
    uint64_t ns;
    uint8_t tdc;
    uint64_t time;
  };
  const std::vector<TdcCase> tdcCases{
      // ZeroCal: no correction at all.
      {"zero tdc 0", {0, 0, 0, 0}, 1000, 0, 1000},
      {"zero tdc 255", {0, 0, 0, 0}, 1000, 255, 1000},
      // Offset 10, slope 2: (34.08 - 10) x 2 = 48.16; (34.08 - 60 - 10) x 2 = -71.84.
      {"10/2 tdc 0", {0, 1, 10, 2}, 1000, 0, 1048},
      {"10/2 tdc 255", {0, 1, 10, 2}, 1000, 255, 928},
      // Negative offset -100: + 134.08.
      {"-100/1", {0, 1, -100, 1}, 1000, 0, 1134},
      // ADCClampPositive's TDC: offset 0, slope -1: -34.08 → 965.92 → 965.
      {"slope -1", {0, 1, 0, -1}, 1000, 0, 965},
  };
  for (const TdcCase &t : tdcCases) {
    EXPECT_EQ(Vmm3Calibration::timeNs(t.c, t.ns, t.tdc), t.time) << t.what;
  }
}

// A readout at time 0 whose TDC correction is negative (the model gives 34.08 - 60 x 255 / 255
// = -25.92 ns at TDC 255) lies before the epoch: the ESS EFU's uint64_t conversion wraps on
// x86-64, and efu gives the same value without undefined behaviour (found by fuzz_vmm3).
TEST(Vmm3Calibration, ATimeBeforeTheEpochWrapsAsTheEssConversionDoes) {
  const Vmm3Calibration::Channel identity;
  EXPECT_EQ(Vmm3Calibration::timeNs(identity, 0, 255), uint64_t{0} - 25);
  EXPECT_EQ(Vmm3Calibration::timeNs(identity, 25, 255), uint64_t{0});   // -0.92 truncates to 0
  EXPECT_EQ(Vmm3Calibration::timeNs(identity, 100, 255), uint64_t{74}); // 74.08
}

// identityTimeNs() is the module's path for identity channels: one rounding of ns to a double
// from 2^60 to 2^62 ns, the ESS double arithmetic elsewhere. Against the literal formula, for every
// TDC value and 1024 consecutive ns (every residue of the double's step there, 256 to 1024 ns, ties
// included): across each power of two from 2^60 to 2^63, at random times in between, and below
// 2^60.
TEST(Vmm3Calibration, IdentityTimeIsTheDoubleFormulaBitForBit) {
  const auto literal = [](uint64_t ns, uint8_t tdc) {
    const double t = static_cast<double>(ns) + (Vmm3Calibration::kTdcModelNs[tdc] - 0.0) * 1.0;
    if (t >= 0x1p64) {
      return ~uint64_t{0}; // saturated: a double of 2^64 is no uint64_t
    }
    return t < 0 ? static_cast<uint64_t>(static_cast<int64_t>(t)) : static_cast<uint64_t>(t);
  };
  std::vector<uint64_t> bases{0, (uint64_t{1} << 59) - 512, 1'700'000'000'000'011'000,
                              ~uint64_t{0} - 1024};
  for (const int e : {60, 61, 62, 63}) {
    bases.push_back((uint64_t{1} << e) - 512);
  }
  std::mt19937_64 rng(23);
  for (int i = 0; i < 40; ++i) {
    bases.push_back((uint64_t{1} << 60) + rng() % (uint64_t{7} << 60));
  }
  int64_t checked = 0;
  for (const uint64_t base : bases) {
    for (uint64_t ns = base; ns < base + 1024; ++ns) {
      for (int tdc = 0; tdc < 256; ++tdc) {
        const auto t = static_cast<uint8_t>(tdc);
        if (Vmm3Calibration::identityTimeNs(ns, t) != literal(ns, t)) {
          FAIL() << "ns " << ns << " tdc " << tdc << ": " << Vmm3Calibration::identityTimeNs(ns, t)
                 << " != " << literal(ns, t);
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, static_cast<int64_t>(bases.size()) * 1024 * 256);
}

TEST(Vmm3Calibration, OnlyVmmsWithACorrectionKeepATable) {
  nlohmann::json cal = shippedCalibration("calib.json");
  cal["Calibrations"][5]["VMMHybridCalibration"]["vmm1"]["tdc_slope"][7] = 0.75;
  cal["Calibrations"][6]["VMMHybridCalibration"]["vmm0"]["adc_offset"][0] = -0.0; // identity
  const Vmm3Calibration c(cal, "cal.json", freiaConfig(), "freia.json");
  for (size_t h = 0; h < 32; ++h) {
    for (uint8_t vmm = 0; vmm < 2; ++vmm) {
      EXPECT_EQ(c.vmm(h, vmm) != nullptr, h == 5 && vmm == 1) << h << " " << int{vmm};
    }
  }
  ASSERT_NE(c.vmm(5, 3), nullptr);
  EXPECT_EQ(c.vmm(5, 3)[7].tdcSlope, 0.75);
  EXPECT_EQ(c.vmm(5, 3)[6].tdcSlope, 1.0);
  EXPECT_EQ(&c.channel(5, 1, 7), &c.vmm(5, 3)[7]);
}

TEST(Vmm3Calibration, TheShippedFilesAreIdentityForTheirConfigs) {
  const Vmm3Config freia = freiaConfig();
  const Vmm3Calibration cal(shippedCalibration("calib.json"), "calib.json", freia, "freia.json");
  EXPECT_TRUE(cal.uncovered().empty());
  const Vmm3Config estia = parseVmm3Config(shipped("estia_config.json"), "estia_config.json");
  const Vmm3Calibration e(shippedCalibration("estia_calib.json"), "estia_calib.json", estia,
                          "estia_config.json");
  // estia_calib.json has the ids ...00 to ...31; estia_config.json goes to ...47.
  ASSERT_EQ(e.uncovered().size(), 16U);
  EXPECT_EQ(e.uncovered()[0], "Config[32].HybridId = \"E5533333222222221111111100000032\"");
  EXPECT_EQ(e.uncovered()[15], "Config[47].HybridId = \"E5533333222222221111111100000047\"");
  for (size_t h = 0; h < estia.hybrids.size(); ++h) {
    const Channel &c = e.channel(h, 1, 17);
    EXPECT_EQ(c.adcSlope, 1.0);
    EXPECT_EQ(c.tdcOffset, 0.0);
  }
  // AMOR's ids are not in calib.json: refused, naming both files.
  const Vmm3Config amor = parseVmm3Config(shipped("amor.json"), "amor.json");
  try {
    const Vmm3Calibration a(shippedCalibration("calib.json"), "calib.json", amor, "amor.json");
    FAIL() << "calib.json taken for amor.json";
  } catch (const sdk::ConfigError &err) {
    const std::string m = err.what();
    EXPECT_NE(m.find("calib.json: calibration Calibrations[0].VMMHybridCalibration.HybridId = "
                     "\"E5533333222222221111111100000000\""),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("amor.json"), std::string::npos) << m;
  }
}

TEST(Vmm3Calibration, ValuesGoToTheirHybridVmmAndChannel) {
  nlohmann::json cal = shippedCalibration("calib.json");
  // Calibrations[5] is ...05 = Config[5] (ring 1 FEN 0 hybrid 1); change vmm1 channel 7.
  auto &v = cal["Calibrations"][5]["VMMHybridCalibration"]["vmm1"];
  v["adc_offset"][7] = 1.25;
  v["adc_slope"][7] = 2.5;
  v["tdc_offset"][7] = -3.5;
  v["tdc_slope"][7] = 0.75;
  // Entries in another order than the config's: matched by id.
  std::swap(cal["Calibrations"][0], cal["Calibrations"][31]);
  const Vmm3Config config = freiaConfig();
  const Vmm3Calibration c(cal, "cal.json", config, "freia.json");
  for (const uint8_t vmm : {3, 5, 15}) { // every odd VMM uses vmm1
    const Channel &got = c.channel(5, vmm, 7);
    EXPECT_EQ(got.adcOffset, 1.25);
    EXPECT_EQ(got.adcSlope, 2.5);
    EXPECT_EQ(got.tdcOffset, -3.5);
    EXPECT_EQ(got.tdcSlope, 0.75);
  }
  EXPECT_EQ(c.channel(5, 2, 7).adcSlope, 1.0); // vmm0
  EXPECT_EQ(c.channel(5, 3, 6).adcSlope, 1.0);
  EXPECT_EQ(c.channel(4, 3, 7).adcSlope, 1.0);
  EXPECT_TRUE(c.uncovered().empty());
}

TEST(Vmm3Calibration, EveryRefusalNamesFileKeyAndValue) {
  using J = nlohmann::json;
  struct Refusal {
    const char *what;
    std::function<void(J &)> change;
    std::vector<std::string> says;
  };
  const std::string e0 = "Calibrations[0].VMMHybridCalibration";
  const std::vector<Refusal> refusals{
      {"Detector Frigg",
       [](J &c) { c["Detector"] = "Frigg"; },
       {"calibration Detector = \"Frigg\""}},
      {"Detector missing", [](J &c) { c.erase("Detector"); }, {"missing key 'Detector'"}},
      {"Detector a number", [](J &c) { c["Detector"] = 1; }, {"Detector = 1"}},
      {"Version 2", [](J &c) { c["Version"] = 2; }, {"Version = 2", "expected 1"}},
      {"Version missing", [](J &c) { c.erase("Version"); }, {"missing key 'Version'"}},
      {"Version a string", [](J &c) { c["Version"] = "1"; }, {"Version = \"1\""}},
      {"Comment missing", [](J &c) { c.erase("Comment"); }, {"missing key 'Comment'"}},
      {"Date missing", [](J &c) { c.erase("Date"); }, {"missing key 'Date'"}},
      {"Info missing", [](J &c) { c.erase("Info"); }, {"missing key 'Info'"}},
      {"Calibrations missing",
       [](J &c) { c.erase("Calibrations"); },
       {"missing key 'Calibrations'"}},
      {"Calibrations an object",
       [](J &c) { c["Calibrations"] = J::object(); },
       {"Calibrations = {}"}},
      {"entry without VMMHybridCalibration",
       [](J &c) {
         c["Calibrations"][2] = J{{"VMMHybrid", 1}};
       },
       {"Calibrations[2] = {\"VMMHybrid\":1}", "missing key 'VMMHybridCalibration'"}},
      {"entry not an object", [](J &c) { c["Calibrations"][2] = 3; }, {"Calibrations[2] = 3"}},
      {"CalibrationDate missing",
       [](J &c) { c["Calibrations"][0]["VMMHybridCalibration"].erase("CalibrationDate"); },
       {e0 + " = {", "missing key 'CalibrationDate'"}},
      {"HybridId missing",
       [](J &c) { c["Calibrations"][0]["VMMHybridCalibration"].erase("HybridId"); },
       {e0 + " = {", "missing key 'HybridId'"}},
      {"HybridId unknown",
       [](J &c) {
         c["Calibrations"][0]["VMMHybridCalibration"]["HybridId"] =
             "A5533333222222221111111100000000";
       },
       {e0 + ".HybridId = \"A5533333222222221111111100000000\"", "freia.json"}},
      // The ESS EFU compares ids exactly: other case is another id.
      {"HybridId in lower case",
       [](J &c) {
         c["Calibrations"][0]["VMMHybridCalibration"]["HybridId"] =
             "e5533333222222221111111100000000";
       },
       {e0 + ".HybridId = \"e5533333222222221111111100000000\""}},
      {"HybridId twice",
       [](J &c) {
         c["Calibrations"][3]["VMMHybridCalibration"]["HybridId"] =
             c["Calibrations"][1]["VMMHybridCalibration"]["HybridId"];
       },
       {"Calibrations[3].VMMHybridCalibration.HybridId = \"E5533333222222221111111100000001\"",
        "Calibrations[1] has it too"}},
      {"vmm0 missing",
       [](J &c) { c["Calibrations"][0]["VMMHybridCalibration"].erase("vmm0"); },
       {e0 + " = {", "missing key 'vmm0'"}},
      {"vmm1 missing",
       [](J &c) { c["Calibrations"][4]["VMMHybridCalibration"].erase("vmm1"); },
       {"Calibrations[4].VMMHybridCalibration = {", "missing key 'vmm1'"}},
      {"Settings missing",
       [](J &c) { c["Calibrations"][0]["VMMHybridCalibration"]["vmm1"].erase("Settings"); },
       {e0 + ".vmm1 = {", "missing key 'Settings'"}},
      {"tdc_slope missing",
       [](J &c) { c["Calibrations"][0]["VMMHybridCalibration"]["vmm0"].erase("tdc_slope"); },
       {e0 + ".vmm0 = {", "missing key 'tdc_slope'"}},
      {"adc_offset of 63",
       [](J &c) { c["Calibrations"][0]["VMMHybridCalibration"]["vmm0"]["adc_offset"].erase(0); },
       {e0 + ".vmm0.adc_offset = [", "expected an array of 64"}},
      {"adc_slope of 65",
       [](J &c) {
         c["Calibrations"][0]["VMMHybridCalibration"]["vmm1"]["adc_slope"].push_back(1.0);
       },
       {e0 + ".vmm1.adc_slope = [", "expected an array of 64"}},
      {"tdc_offset not an array",
       [](J &c) { c["Calibrations"][0]["VMMHybridCalibration"]["vmm1"]["tdc_offset"] = 0; },
       {e0 + ".vmm1.tdc_offset = 0", "expected an array of 64"}},
      {"a string value",
       [](J &c) { c["Calibrations"][0]["VMMHybridCalibration"]["vmm1"]["tdc_offset"][3] = "x"; },
       {e0 + ".vmm1.tdc_offset[3] = \"x\"", "expected a finite number"}},
      {"a non-finite value",
       [](J &c) {
         c["Calibrations"][0]["VMMHybridCalibration"]["vmm0"]["adc_slope"][12] =
             std::numeric_limits<double>::infinity();
       },
       {e0 + ".vmm0.adc_slope[12] = null", "expected a finite number"}},
      {"a NaN",
       [](J &c) {
         c["Calibrations"][0]["VMMHybridCalibration"]["vmm0"]["tdc_slope"][63] =
             std::numeric_limits<double>::quiet_NaN();
       },
       {e0 + ".vmm0.tdc_slope[63] = null", "expected a finite number"}},
      // Finite, but each hit time would leave the range of a time (issue 37: a slope of 1e308
      // saturated every time through an undefined conversion).
      {"a slope of 1e308",
       [](J &c) { c["Calibrations"][0]["VMMHybridCalibration"]["vmm0"]["tdc_slope"][5] = 1e308; },
       {e0 + ".vmm0.tdc_slope[5] = 1e+308", "at most 1e+09 ns (1 s)"}},
      {"an offset of -1e9 with slope 1",
       [](J &c) { c["Calibrations"][0]["VMMHybridCalibration"]["vmm1"]["tdc_offset"][7] = -1e9; },
       {e0 + ".vmm1.tdc_slope[7] = ", "with tdc_offset -1e+09"}},
  };
  for (const Refusal &r : refusals) {
    J cal = shippedCalibration("calib.json");
    r.change(cal);
    const std::string error = calibrationError(cal);
    ASSERT_FALSE(error.empty()) << r.what;
    EXPECT_EQ(error.rfind("cal.json: calibration ", 0), 0U) << r.what << ": " << error;
    for (const std::string &s : r.says) {
      EXPECT_NE(error.find(s), std::string::npos) << r.what << ": '" << s << "' in " << error;
    }
  }
  // Not read, so not checked: the values of Comment, Date, Info, CalibrationDate and Settings;
  // keys the format does not have (the ESS test file's "Hybrids", "tdc_ofs_corr").
  J cal = shippedCalibration("calib.json");
  cal["Comment"] = 5;
  cal["Hybrids"] = 32;
  cal["Calibrations"][0]["VMMHybridCalibration"]["CalibrationDate"] = nullptr;
  cal["Calibrations"][0]["VMMHybridCalibration"]["vmm0"]["tdc_ofs_corr"] = {0.0, 1.0};
  EXPECT_EQ(calibrationError(cal), "");
}

TEST(Vmm3Calibration, UncoveredListsTheConfiguredHybridsWithoutAnEntry) {
  nlohmann::json cal = shippedCalibration("calib.json");
  cal["Calibrations"].erase(30);
  cal["Calibrations"].erase(2);
  const Vmm3Calibration c(cal, "cal.json", freiaConfig(), "freia.json");
  EXPECT_EQ(c.uncovered(),
            (std::vector<std::string>{"Config[2].HybridId = \"E5533333222222221111111100000002\"",
                                      "Config[30].HybridId = "
                                      "\"E5533333222222221111111100000030\""}));
  // They keep the identity.
  EXPECT_EQ(c.channel(2, 0, 0).adcSlope, 1.0);
  EXPECT_EQ(c.channel(2, 0, 0).tdcSlope, 1.0);
  // An empty list covers nothing.
  cal["Calibrations"] = nlohmann::json::array();
  EXPECT_EQ(Vmm3Calibration(cal, "cal.json", freiaConfig(), "freia.json").uncovered().size(), 32U);
}

TEST(Vmm3Calibration, RawAdcInvertsAdcWhereverItCan) {
  // For every corrected value: rawAdc finds a raw ADC (0..1023) correcting to it exactly when
  // one exists. Channels of the shipped calib.json, then hand-made ones with positive slopes.
  const Vmm3Calibration shippedCal(shippedCalibration("calib.json"), "calib.json", freiaConfig(),
                                   "freia.json");
  std::vector<Channel> channels{shippedCal.channel(0, 0, 0), shippedCal.channel(7, 1, 33),
                                shippedCal.channel(31, 1, 63)};
  for (const Channel &c : std::vector<Channel>{{10.5, 1.5, 0, 1},
                                               {-3.2, 0.5, 0, 1},
                                               {50, 5, 0, 1},
                                               {0, 0.7, 0, 1},
                                               {-1, 2000, 0, 1},
                                               {100.25, 1.001, 0, 1},
                                               {-20, 3.3, 0, 1}}) {
    channels.push_back(c);
  }
  for (size_t i = 0; i < channels.size(); ++i) {
    const Channel &c = channels[i];
    std::set<uint16_t> reachable;
    for (uint16_t raw = 0; raw <= 1023; ++raw) {
      const uint16_t corrected = Vmm3Calibration::adc(c, raw);
      reachable.insert(corrected);
      const int32_t back = Vmm3Calibration::rawAdc(c, corrected);
      ASSERT_GE(back, 0) << "channel " << i << " raw " << raw;
      ASSERT_LE(back, 1023);
      ASSERT_EQ(Vmm3Calibration::adc(c, static_cast<uint16_t>(back)), corrected)
          << "channel " << i << " raw " << raw;
    }
    for (uint16_t corrected = 0; corrected <= 1023; ++corrected) {
      if (!reachable.contains(corrected)) {
        ASSERT_EQ(Vmm3Calibration::rawAdc(c, corrected), -1)
            << "channel " << i << " corrected " << corrected;
      }
    }
  }
}

// --- Through the module ---------------------------------------------------------------------

class Vmm3CalibratedModule : public ::testing::Test {
protected:
  void create(const nlohmann::json &calibration) {
    ctx_ = std::make_unique<readout::FakeModuleContext>(shipped("freia.json"), "freia.json");
    ctx_->setCalibration(calibration, "cal.json");
    module_ = std::make_unique<Vmm3Module>(*ctx_);
  }
  std::unique_ptr<readout::FakeModuleContext> ctx_;
  std::unique_ptr<Vmm3Module> module_;
};

TEST_F(Vmm3CalibratedModule, TheCalibrationMovesChargesAndTimes) {
  nlohmann::json cal = shippedCalibration("calib.json");
  auto &h0 = cal["Calibrations"][0]["VMMHybridCalibration"];
  // x = 10 (VMM 1 channel 53) weighs 3 x its raw ADC; both hits' TDC correction (34.08 - 10) x
  // 2.
  h0["vmm1"]["adc_slope"][53] = 3.0;
  h0["vmm1"]["tdc_offset"][53] = 10.0;
  h0["vmm1"]["tdc_slope"][53] = 2.0;
  h0["vmm0"]["tdc_offset"][27] = 10.0; // y = 20
  h0["vmm0"]["tdc_slope"][27] = 2.0;
  // y = 21 (channel 26) loses 50 of its ADC.
  h0["vmm0"]["adc_offset"][26] = 50.0;
  create(cal);
  test::Datagram d(readout::kTypeFreia, {1, 0}, {0, 82'763'036});
  // x: 10 (100 → 300), 11 (100): (3000 + 1100) / 400 = 10.25 → 10. y: 20 (100), 21 (150 →
  // 100): 20.5 → 21.
  d.add(test::readout(0, 0, 1, 53, 100, 1, 1000)).add(test::readout(0, 0, 1, 52, 100, 1, 1000));
  d.add(test::readout(0, 0, 0, 27, 100, 1, 1000)).add(test::readout(0, 0, 0, 26, 150, 1, 1000));
  module_->process(d.packet());
  ASSERT_EQ(ctx_->sink.events.size(), 1U);
  // Earliest: channels 53 and 27 at 1000011356 + 48.16 = ...404, the others at ...390; the
  // earliest (...390) is 1003 ticks → 11390.
  EXPECT_EQ(ctx_->sink.events[0], (readout::RecordedEvent{1'000'000'000, 11390, 21 * 64 + 10 + 1}));
  // Now every hit at ...404 (all four channels corrected): nearest tick 1004 → 11402.
  h0["vmm1"]["tdc_offset"][52] = 10.0;
  h0["vmm1"]["tdc_slope"][52] = 2.0;
  h0["vmm0"]["tdc_offset"][26] = 10.0;
  h0["vmm0"]["tdc_slope"][26] = 2.0;
  create(cal);
  module_->process(d.packet());
  ASSERT_EQ(ctx_->sink.events.size(), 1U);
  EXPECT_EQ(ctx_->sink.events[0].tofNs, 11402);
  EXPECT_EQ(ctx_->value("readouts.adc_max"), 0);
  // A slope that saturates counts readouts.adc_max.
  h0["vmm1"]["adc_slope"][53] = 20.0;
  create(cal);
  module_->process(d.packet());
  EXPECT_EQ(ctx_->value("readouts.adc_max"), 1);
}

TEST_F(Vmm3CalibratedModule, TheThresholdIsOnTheRawAdc) {
  // FreiaInstrument.cpp compares the raw OTADC with the threshold before calibrating.
  nlohmann::json f = test::rawShipped("freia.json");
  f["Config"][0]["Thresholds"] = nlohmann::json::parse("[[0], [100]]");
  nlohmann::json cal = shippedCalibration("calib.json");
  cal["Calibrations"][0]["VMMHybridCalibration"]["vmm1"]["adc_slope"][53] = 0.1; // 100 → 10
  ctx_ = std::make_unique<readout::FakeModuleContext>(test::validated(f), "freia.json");
  ctx_->setCalibration(cal, "cal.json");
  module_ = std::make_unique<Vmm3Module>(*ctx_);
  test::Datagram d(readout::kTypeFreia, {1, 0}, {0, 82'763'036});
  d.add(test::readout(0, 0, 1, 53, 100, 1, 1000)).add(test::readout(0, 0, 0, 27, 100, 1, 1000));
  d.add(test::readout(0, 0, 1, 52, 99, 1, 1000)); // x 11, raw 99: dropped
  module_->process(d.packet());
  EXPECT_EQ(ctx_->value("readouts.adc_below_threshold"), 1);
  ASSERT_EQ(ctx_->sink.events.size(), 1U);
  EXPECT_EQ(ctx_->sink.events[0].pixelId, 20 * 64 + 10 + 1);
}

TEST_F(Vmm3CalibratedModule, TheModuleRefusesABadFileNamingIt) {
  nlohmann::json cal = shippedCalibration("calib.json");
  cal["Version"] = 3;
  try {
    create(cal);
    FAIL() << "taken";
  } catch (const sdk::ConfigError &e) {
    EXPECT_EQ(std::string(e.what()), "cal.json: calibration Version = 3: expected 1");
  }
  // A file for another instrument's hybrids.
  cal = shippedCalibration("calib.json");
  cal["Calibrations"][0]["VMMHybridCalibration"]["HybridId"] = "a0800006b882a0803410082006704410";
  try {
    create(cal);
    FAIL() << "taken";
  } catch (const sdk::ConfigError &e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cal.json: calibration Calibrations[0].VMMHybridCalibration.HybridId = "
                     "\"a0800006b882a0803410082006704410\""),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("freia.json"), std::string::npos) << m;
  }
}

} // namespace
} // namespace efu::vmm3
