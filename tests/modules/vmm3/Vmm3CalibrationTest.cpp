// SPDX-License-Identifier: BSD-2-Clause
// vmm3 --calibration: the ESS VMM3 hybrid calibration (per-channel ADC/TDC offset and slope),
// the module applying it, Vmm3Source inverting it (source -> module == truth), and refusals
// naming the file, the key path and the value.
#include "common/readout/EssHeader.h"
#include "common/sdk/ModuleConfig.h"
#include "modules/vmm3/Vmm3Calibration.h"
#include "modules/vmm3/Vmm3Module.h"
#include "modules/vmm3/Vmm3Readout.h"
#include "modules/vmm3/Vmm3Source.h"
#include "tests/support/FakeModuleContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <random>
#include <tuple>
#include <vector>

namespace efu::vmm3 {
namespace {

using readout::FakeModuleContext;

const char *const kIds[] = {"E5533333222222221111111100000000", "E5533333222222221111111100000001",
                            "e5533333222222221111111100000002"}; // case does not matter

/// freia.json (3 hybrids: x on pair 0, y on pairs 1 and 2) with hybrid ids, validated as the
/// daemon validates it.
nlohmann::json freia(bool ids = true) {
  std::ifstream in(std::string(EFU_SOURCE_DIR) + "/modules/vmm3/configs/freia.json");
  nlohmann::json config = nlohmann::json::parse(in);
  for (size_t h = 0; h < 3; ++h) {
    if (ids) {
      config["hybrids"][h]["hybrid_id"] = kIds[h];
    } else {
      config["hybrids"][h].erase("hybrid_id");
    }
  }
  return validateModuleConfig("vmm3", kVmm3ConfigKeys, kVmm3ConfigKeyCount, config, "freia.json");
}

/// Per channel of hybrid h, vmm v, channel c: (adc_offset, adc_slope, tdc_offset, tdc_slope).
using ChannelFn = std::function<std::array<double, 4>(size_t h, size_t v, size_t c)>;

std::array<double, 4> identity(size_t, size_t, size_t) { return {0, 1, 0, 1}; }

/// A calibration file for the three hybrids of freia().
nlohmann::json calibration(const ChannelFn &f = identity) {
  nlohmann::json entries = nlohmann::json::array();
  for (size_t h = 0; h < 3; ++h) {
    nlohmann::json entry{{"HybridId", kIds[h]}, {"CalibrationDate", "2024-01-01"}};
    for (size_t v = 0; v < 2; ++v) {
      nlohmann::json arrays{{"adc_offset", nlohmann::json::array()},
                            {"adc_slope", nlohmann::json::array()},
                            {"tdc_offset", nlohmann::json::array()},
                            {"tdc_slope", nlohmann::json::array()}};
      for (size_t c = 0; c < 64; ++c) {
        const auto p = f(h, v, c);
        arrays["adc_offset"].push_back(p[0]);
        arrays["adc_slope"].push_back(p[1]);
        arrays["tdc_offset"].push_back(p[2]);
        arrays["tdc_slope"].push_back(p[3]);
      }
      entry[v == 0 ? "vmm0" : "vmm1"] = arrays;
    }
    entries.push_back({{"VMMHybridCalibration", entry}});
  }
  return {{"Detector", "Freia"}, {"Version", 1}, {"Comment", "test"}, {"Date", "2024-01-01"},
          {"Info", ""}, {"Calibrations", entries}};
}

/// A non-trivial calibration: every channel its own offsets and slopes.
nlohmann::json uneven() {
  return calibration([](size_t h, size_t v, size_t c) -> std::array<double, 4> {
    const double k = static_cast<double>((h * 128 + v * 64 + c) % 11);
    return {k - 5, 0.85 + 0.03 * k, 8 - 1.1 * k, 0.9 + 0.02 * k};
  });
}

Vmm3Config config() { return parseVmm3Config(freia(), "freia.json"); }

std::string refusal(const nlohmann::json &cal, const nlohmann::json &cfg = freia()) {
  try {
    Vmm3Calibration c(cal, "cal.json", parseVmm3Config(cfg, "freia.json"), "freia.json");
  } catch (const sdk::ConfigError &e) {
    return e.what();
  }
  return "(accepted)";
}

constexpr uint32_t kPulseSec = 1'700'000'000;
constexpr uint32_t kPulseTicks = 1'000'000;

/// A datagram of freia readouts: (plane, strip, adc, tdc), all on the same tick.
std::vector<uint8_t> datagram(const std::vector<std::tuple<char, uint32_t, uint16_t, uint8_t>> &hits,
                              uint32_t seq) {
  std::vector<uint8_t> d(readout::headerBytes(0), 0);
  for (const auto &[plane, strip, adc, tdc] : hits) {
    Vmm3Readout r{};
    r.length = kReadoutBytes;
    r.timeHigh = kPulseSec;
    r.timeLow = kPulseTicks + 100'000;
    r.otadc = adc;
    r.tdc = tdc;
    const uint32_t pair = plane == 'x' ? 0 : 1 + strip / 128;
    r.vmm = static_cast<uint8_t>(2 * pair + (strip % 128) / 64);
    r.channel = static_cast<uint8_t>(strip % 64);
    const auto *p = reinterpret_cast<const uint8_t *>(&r);
    d.insert(d.end(), p, p + sizeof(r));
  }
  readout::HeaderFields f;
  f.detectorType = readout::kTypeFreia;
  f.pulse = {kPulseSec, kPulseTicks};
  f.prevPulse = {kPulseSec - 1, 0};
  f.totalLength = static_cast<uint16_t>(d.size());
  f.seqNum = seq;
  readout::writeHeader(d, f);
  return d;
}

/// The module over freia() with `cal` (null = none).
struct ModuleRun {
  FakeModuleContext ctx{freia(), "freia.json"};
  std::unique_ptr<Vmm3Module> module;
  uint32_t seq = 0;
  explicit ModuleRun(const nlohmann::json &cal) {
    if (!cal.is_null()) {
      ctx.setCalibration(cal, "cal.json");
    }
    module = std::make_unique<Vmm3Module>(ctx);
  }
  void send(const std::vector<uint8_t> &d) {
    module->process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
  }
  void send(const std::vector<std::tuple<char, uint32_t, uint16_t, uint8_t>> &hits) {
    send(datagram(hits, seq++));
  }
  std::vector<std::tuple<int64_t, int64_t, int32_t>> events() {
    module->flush();
    std::vector<std::tuple<int64_t, int64_t, int32_t>> out;
    for (const auto &e : ctx.sink.events) {
      out.emplace_back(e.pulseTimeNs, e.tofNs, e.pixelId);
    }
    return out;
  }
};

TEST(Vmm3Calibration, IdentityChangesNoValue) {
  const Vmm3Calibration cal(calibration(), "cal.json", config(), "freia.json");
  const auto &c = cal.channel(2, 5, 63);
  for (uint16_t raw = 0; raw <= kMaxAdc; ++raw) {
    uint16_t got = 0;
    ASSERT_TRUE(Vmm3Calibration::adc(c, raw, got));
    ASSERT_EQ(got, raw);
    ASSERT_EQ(Vmm3Calibration::rawAdc(c, raw), raw);
  }
  for (int tdc = 0; tdc <= 255; ++tdc) {
    ASSERT_EQ(cal.timeCorrectionNs(c, static_cast<uint8_t>(tdc)), 0) << tdc;
  }
  EXPECT_TRUE(cal.unused().empty());
}

TEST(Vmm3Calibration, OffsetAndSlopeMoveAdcAndTimeAsComputedByHand) {
  auto file = calibration();
  auto &vmm1 = file["Calibrations"][1]["VMMHybridCalibration"]["vmm1"];
  vmm1["adc_offset"][12] = 10;
  vmm1["adc_slope"][12] = 1.5;
  vmm1["tdc_offset"][12] = 5;
  vmm1["tdc_slope"][12] = 2;
  const Vmm3Calibration cal(file, "cal.json", config(), "freia.json");
  const auto &c = cal.channel(1, 3, 12); // hybrid 1 (pair 1), vmm 3 = its odd VMM
  uint16_t adc = 0;
  ASSERT_TRUE(Vmm3Calibration::adc(c, 110, adc)); // (110 - 10) * 1.5 = 150
  EXPECT_EQ(adc, 150);
  ASSERT_TRUE(Vmm3Calibration::adc(c, 11, adc)); // 1.5
  EXPECT_EQ(adc, 2);                              // halves away from 0
  ASSERT_TRUE(Vmm3Calibration::adc(c, 692, adc)); // 1023
  EXPECT_EQ(adc, 1023);
  EXPECT_FALSE(Vmm3Calibration::adc(c, 693, adc)); // 1024.5
  EXPECT_FALSE(Vmm3Calibration::adc(c, 9, adc));   // -1.5
  EXPECT_EQ(Vmm3Calibration::rawAdc(c, 150), 110);
  EXPECT_EQ(Vmm3Calibration::rawAdc(c, 151), -1); // steps of 1.5: 150, 152 (151.5), 153
  // One TDC count at 44 026 250 Hz = 1e9 / (44026250 * 256) = 0.0887244 ns:
  // TDC 0: (0 - 5) * 2 - 0 = -10; TDC 100: (8.87244 - 5) * 2 - 8.87244 = -1.13 -> -1;
  // TDC 255: (22.62472 - 5) * 2 - 22.62472 = 12.62 -> 13.
  EXPECT_EQ(cal.timeCorrectionNs(c, 0), -10);
  EXPECT_EQ(cal.timeCorrectionNs(c, 100), -1);
  EXPECT_EQ(cal.timeCorrectionNs(c, 255), 13);
  // the same channel of the even VMM is untouched
  EXPECT_EQ(cal.timeCorrectionNs(cal.channel(1, 2, 12), 255), 0);
}

TEST(Vmm3Calibration, ModuleWithIdentityGivesTheSameEventsAndCounters) {
  ModuleRun plain(nullptr), identityRun(calibration());
  std::mt19937 rng(7);
  for (uint32_t d = 0; d < 50; ++d) {
    std::vector<std::tuple<char, uint32_t, uint16_t, uint8_t>> hits;
    for (int i = 0; i < 40; ++i) {
      hits.emplace_back(rng() % 2 ? 'x' : 'y', rng() % 128, static_cast<uint16_t>(rng() % 1024),
                        static_cast<uint8_t>(rng() % 256));
    }
    plain.send(hits);
    identityRun.send(hits);
  }
  const auto events = plain.events();
  EXPECT_FALSE(events.empty());
  EXPECT_EQ(events, identityRun.events());
  EXPECT_EQ(plain.ctx.snapshot(), identityRun.ctx.snapshot());
}

TEST(Vmm3Calibration, ModuleUsesCorrectedChargeAndTime) {
  // Every channel's time moves by +7 ns (tdc_offset -7, slope 1, TDC 0); x strip 10's
  // charge x 1.5; y strip 200 (pair 2, vmm 5, channel 8) raw 25 below the threshold 30
  // becomes 50; y strip 201 raw 40 becomes 20 (below: counted).
  auto file = calibration([](size_t, size_t, size_t) -> std::array<double, 4> {
    return {0, 1, -7, 1};
  });
  file["Calibrations"][0]["VMMHybridCalibration"]["vmm0"]["adc_slope"][10] = 1.5;
  file["Calibrations"][2]["VMMHybridCalibration"]["vmm1"]["adc_slope"][8] = 2;
  file["Calibrations"][2]["VMMHybridCalibration"]["vmm1"]["adc_slope"][9] = 0.5;
  const std::vector<std::tuple<char, uint32_t, uint16_t, uint8_t>> hits = {
      {'x', 10, 100, 0}, {'x', 11, 100, 0}, {'y', 200, 25, 0}, {'y', 201, 40, 0}};
  ModuleRun plain(nullptr), calibrated(file);
  plain.send(hits);
  calibrated.send(hits);
  const auto before = plain.events();
  const auto after = calibrated.events();
  ASSERT_EQ(before.size(), 1U);
  ASSERT_EQ(after.size(), 1U);
  // uncalibrated: x centre (10 + 11) / 2 = 10.5 -> 11, y only strip 201 (25 is below)
  EXPECT_EQ(std::get<2>(before[0]), 201 * 128 + 11 + 1);
  // calibrated: x (150 * 10 + 100 * 11) / 250 = 10.4 -> 10, y only strip 200 (20 is below)
  EXPECT_EQ(std::get<2>(after[0]), 200 * 128 + 10 + 1);
  EXPECT_EQ(std::get<1>(after[0]), std::get<1>(before[0]) + 7);
  EXPECT_EQ(plain.ctx.value("hits.rejected.threshold"), 1);
  EXPECT_EQ(calibrated.ctx.value("hits.rejected.threshold"), 1);
  EXPECT_EQ(calibrated.ctx.value("readouts.errors.calibration"), 0);
}

TEST(Vmm3Calibration, CorrectedAdcOutOfRangeIsCountedAndDropped) {
  auto file = calibration();
  file["Calibrations"][0]["VMMHybridCalibration"]["vmm0"]["adc_offset"][3] = 50;
  file["Calibrations"][0]["VMMHybridCalibration"]["vmm0"]["adc_slope"][4] = 2;
  ModuleRun run(file);
  // strip 3: 40 - 50 < 0; strip 4: 600 * 2 > 1023; strip 5: fine
  run.send({{'x', 3, 40, 0}, {'x', 4, 600, 0}, {'x', 5, 600, 0}, {'x', 3, 100, 0}});
  run.module->flush();
  EXPECT_EQ(run.ctx.value("readouts.errors.calibration"), 2);
  EXPECT_EQ(run.ctx.value("readouts.count"), 4);
  EXPECT_EQ(run.ctx.value("hits.count"), 2);
}

TEST(Vmm3Calibration, BadCalibrationsAreRefusedWithKeyPathAndValue) {
  auto expectRefused = [](const nlohmann::json &cal, const std::string &what,
                          const nlohmann::json &cfg = freia()) {
    const std::string e = refusal(cal, cfg);
    EXPECT_NE(e.find("cal.json: "), std::string::npos) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  const std::string vmm1 = "Calibrations[1].VMMHybridCalibration.vmm1";
  auto cal = calibration();
  cal["Version"] = 2;
  expectRefused(cal, "calibration Version = 2: expected 1");
  cal = calibration();
  cal["Detector"] = "nmx";
  expectRefused(cal, "calibration Detector = \"nmx\": the configuration's instrument is 'freia'");
  cal = calibration();
  cal.erase("Calibrations");
  expectRefused(cal, "missing key 'Calibrations'");
  cal = calibration();
  cal["Calibrations"][1]["VMMHybridCalibration"]["vmm1"]["adc_slope"].erase(63);
  expectRefused(cal, "calibration " + vmm1 + ".adc_slope = [1.0,1.0,");
  expectRefused(cal, "expected an array of 64");
  cal = calibration();
  cal["Calibrations"][1]["VMMHybridCalibration"]["vmm1"]["adc_slope"][12] = 0;
  expectRefused(cal, vmm1 + ".adc_slope[12] = 0: a slope must be > 0");
  cal = calibration();
  cal["Calibrations"][1]["VMMHybridCalibration"]["vmm1"]["tdc_slope"][0] = -1.5;
  expectRefused(cal, vmm1 + ".tdc_slope[0] = -1.5: a slope must be > 0");
  cal = calibration();
  cal["Calibrations"][1]["VMMHybridCalibration"]["vmm1"]["tdc_offset"][3] = "x";
  expectRefused(cal, vmm1 + ".tdc_offset[3] = \"x\": expected a finite number");
  cal = calibration();
  cal["Calibrations"][1]["VMMHybridCalibration"]["vmm1"]["tdc_offset"][5] = 2000;
  expectRefused(cal, vmm1 + ".tdc_offset[5] = 2000: with tdc_slope[5] = 1 it moves the time");
  cal = calibration();
  cal["Calibrations"][1]["VMMHybridCalibration"].erase("vmm1");
  expectRefused(cal, "Calibrations[1].VMMHybridCalibration = ");
  expectRefused(cal, "missing key 'vmm1'");
  cal = calibration();
  cal["Calibrations"][2]["VMMHybridCalibration"]["HybridId"] = "E55xyz";
  expectRefused(cal, "Calibrations[2].VMMHybridCalibration.HybridId = \"E55xyz\": expected 32 hex "
                     "digits");
  cal = calibration();
  cal["Calibrations"][2]["VMMHybridCalibration"]["HybridId"] = kIds[0];
  expectRefused(cal, "Calibrations[2].VMMHybridCalibration.HybridId = \"" + std::string(kIds[0]) +
                         "\": Calibrations[0] has it too");
  cal = calibration();
  cal["Calibrations"].erase(1);
  expectRefused(cal, "no VMMHybridCalibration for hybrids[1].hybrid_id = "
                     "\"E5533333222222221111111100000001\" of freia.json");
  auto cfg = freia();
  cfg["hybrids"][2].erase("hybrid_id");
  expectRefused(calibration(), "hybrids[2] (fiber 0 fen 0 vmm_pair 2) of freia.json has no "
                               "hybrid_id",
                cfg);
  expectRefused(nlohmann::json::array(),
                "calibration (top level) = []: expected an object with key 'Detector'");
}

TEST(Vmm3Calibration, AnEntryForAnotherHybridIsKeptAsUnused) {
  auto cal = calibration();
  auto extra = cal["Calibrations"][0];
  extra["VMMHybridCalibration"]["HybridId"] = "E55000000000000000000000000000FF";
  cal["Calibrations"].push_back(extra);
  const Vmm3Calibration c(cal, "cal.json", config(), "freia.json");
  ASSERT_EQ(c.unused().size(), 1U);
  EXPECT_EQ(c.unused()[0], "Calibrations[3].VMMHybridCalibration.HybridId = "
                           "\"E55000000000000000000000000000FF\"");
}

TEST(Vmm3Calibration, HybridIdsInTheConfigAreChecked) {
  auto refusedConfig = [](const nlohmann::json &cfg) {
    try {
      parseVmm3Config(cfg, "freia.json");
    } catch (const sdk::ConfigError &e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  auto cfg = freia();
  cfg["hybrids"][1]["hybrid_id"] = "E55";
  EXPECT_EQ(refusedConfig(cfg), "freia.json: key 'hybrids[1].hybrid_id' = \"E55\" must be a "
                                "string of 32 hex digits");
  cfg["hybrids"][1]["hybrid_id"] = 5;
  EXPECT_NE(refusedConfig(cfg).find("'hybrids[1].hybrid_id' = 5 must be"), std::string::npos);
  cfg = freia();
  cfg["hybrids"][2]["hybrid_id"] = "e5533333222222221111111100000000"; // hybrids[0]'s, other case
  EXPECT_EQ(refusedConfig(cfg), "freia.json: key 'hybrids[2].hybrid_id' = "
                                "\"E5533333222222221111111100000000\" is hybrids[0]'s too");
  // without a calibration the ids are optional
  EXPECT_EQ(parseVmm3Config(freia(false), "freia.json").hybrids[0].hybridId, "");
}

TEST(Vmm3Calibration, TheModuleAndTheSourceRefuseABadOneNamingTheFile) {
  auto cal = calibration();
  cal["Calibrations"][0]["VMMHybridCalibration"]["vmm0"]["adc_slope"][7] = 0;
  FakeModuleContext ctx(freia(), "freia.json");
  ctx.setCalibration(cal, "bad-cal.json");
  const std::string want =
      "bad-cal.json: calibration Calibrations[0].VMMHybridCalibration.vmm0.adc_slope[7] = 0";
  try {
    Vmm3Module module(ctx);
    FAIL() << "accepted";
  } catch (const sdk::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
  try {
    Vmm3Source source(freia(), "freia.json", 1, cal, "bad-cal.json");
    FAIL() << "accepted";
  } catch (const sdk::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

TEST(Vmm3Calibration, TheShippedSampleIsTheIdentityForFreiaJson) {
  const std::string dir = std::string(EFU_SOURCE_DIR) + "/modules/vmm3/";
  const Vmm3Config freiaJson = loadVmm3Config(dir + "configs/freia.json");
  const Vmm3Calibration cal(loadCalibration(dir + "calibrations/freia-identity.json"),
                            "freia-identity.json", freiaJson, "freia.json");
  EXPECT_TRUE(cal.unused().empty());
  for (uint16_t h = 0; h < 3; ++h) {
    for (uint8_t ch = 0; ch < 64; ch += 9) {
      const auto &c = cal.channel(h, ch % 2, ch);
      EXPECT_EQ(c.adcOffset, 0);
      EXPECT_EQ(c.adcSlope, 1);
      EXPECT_EQ(c.tdcOffset, 0);
      EXPECT_EQ(c.tdcSlope, 1);
    }
  }
}

/// Collects the source's truth.
struct TruthList final : sdk::TruthSink {
  void add(int64_t pulseTimeNs, int64_t tofNs, int32_t pixelId) override {
    events.emplace_back(pulseTimeNs, tofNs, pixelId);
  }
  std::vector<std::tuple<int64_t, int64_t, int32_t>> events;
};

// readoutgen's source with a non-trivial calibration writes raw values that the calibrated
// module turns back into exactly the drawn events (neutrons 20 us apart, away from the edges,
// where the uncalibrated source is exact too).
TEST(Vmm3Calibration, SourceInverseRoundTripsThroughTheModule) {
  const auto cal = uneven();
  Vmm3Source source(freia(), "freia.json", 42, cal, "cal.json");
  ModuleRun calibrated(cal), plain(nullptr);
  TruthList truth;
  std::mt19937 rng(3);
  const readout::EssTime pulse{kPulseSec, kPulseTicks};
  const int64_t pulseNs = readout::ticksToNs(pulse.high, pulse.low);
  std::vector<uint8_t> d;
  uint64_t index = 0;
  for (uint32_t seq = 0; seq < 200; ++seq) {
    d.assign(readout::headerBytes(0), 0);
    for (int i = 0; i < 20; ++i, ++index) {
      sdk::Neutron n;
      n.x = 3 + rng() % 122;
      n.y = 3 + rng() % 250;
      n.pulse = pulse;
      n.pulseTimeNs = pulseNs;
      n.eventTime = readout::nsToTicks(pulseNs + 100'000 + static_cast<int64_t>(index) * 20'000);
      n.eventTimeNs = readout::ticksToNs(n.eventTime.high, n.eventTime.low);
      n.index = index;
      const size_t at = d.size();
      d.resize(at + source.maxEventBytes());
      d.resize(at + source.encodeEvent(n, std::span<uint8_t>(d.data() + at, source.maxEventBytes()),
                                       truth));
    }
    readout::HeaderFields f;
    f.detectorType = readout::kTypeFreia;
    f.pulse = pulse;
    f.prevPulse = {kPulseSec - 1, 0};
    f.totalLength = static_cast<uint16_t>(d.size());
    f.seqNum = seq;
    readout::writeHeader(d, f);
    calibrated.send(d);
    plain.send(d);
  }
  // only a few neutrons (charges or times the calibration cannot reach) are left out
  EXPECT_GE(truth.events.size(), 3990U);
  auto got = calibrated.events();
  auto want = truth.events;
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_TRUE(got == want) << got.size() << " events, " << want.size() << " in the truth";
  EXPECT_EQ(calibrated.ctx.value("readouts.errors.calibration"), 0);
  EXPECT_EQ(calibrated.ctx.value("hits.late"), 0);
  // the calibration matters: the uncalibrated module gets many events wrong
  auto uncorrected = plain.events();
  std::sort(uncorrected.begin(), uncorrected.end());
  size_t same = 0;
  for (const auto &e : uncorrected) {
    same += std::binary_search(want.begin(), want.end(), e) ? 1 : 0;
  }
  EXPECT_LT(same, want.size() / 2);
}

} // namespace
} // namespace efu::vmm3
