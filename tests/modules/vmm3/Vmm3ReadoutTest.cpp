// SPDX-License-Identifier: BSD-2-Clause
// VMM3 readout parser boundaries (docs/wire-formats.md §3) and configuration validation.
#include "modules/vmm3/Vmm3Readout.h"
#include "modules/vmm3/Vmm3Config.h"
#include "common/sdk/ModuleConfig.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace efu::vmm3;

namespace {

/// The configuration as the daemon hands it over: validated, defaults filled in.
nlohmann::json validated(const nlohmann::json &j, const std::string &source) {
  return efu::validateModuleConfig("vmm3", kVmm3ConfigKeys, kVmm3ConfigKeyCount, j, source);
}

Vmm3Readout good() {
  Vmm3Readout r{};
  r.fiber = 1;
  r.fen = 2;
  r.length = kReadoutBytes;
  r.timeHigh = 1'700'000'000;
  r.timeLow = 1000;
  r.bc = 10;
  r.otadc = 500;
  r.vmm = 3;
  r.channel = 7;
  return r;
}

ReadoutError parse(const Vmm3Readout &r, size_t remaining = kReadoutBytes) {
  uint8_t bytes[sizeof(Vmm3Readout)];
  std::memcpy(bytes, &r, sizeof(r));
  Vmm3Readout out{};
  return parseReadout(bytes, remaining, out);
}

TEST(Vmm3Readout, ValidReadoutDecodesEveryField) {
  const Vmm3Readout r = good();
  uint8_t bytes[sizeof(Vmm3Readout)];
  std::memcpy(bytes, &r, sizeof(r));
  Vmm3Readout out{};
  ASSERT_EQ(parseReadout(bytes, sizeof(bytes), out), ReadoutError::Ok);
  EXPECT_EQ(out.fiber, 1);
  EXPECT_EQ(out.fen, 2);
  EXPECT_EQ(out.timeHigh, 1'700'000'000U);
  EXPECT_EQ(out.timeLow, 1000U);
  EXPECT_EQ(out.bc, 10);
  EXPECT_EQ(adcOf(out), 500);
  EXPECT_EQ(out.vmm, 3);
  EXPECT_EQ(out.channel, 7);
  // Byte offsets of the wire layout.
  EXPECT_EQ(bytes[19], 7);
  EXPECT_EQ(bytes[18], 3);
  EXPECT_EQ(bytes[2], 20);
}

TEST(Vmm3Readout, TruncatedAndLength) {
  EXPECT_EQ(parse(good(), 19), ReadoutError::Truncated);
  EXPECT_EQ(parse(good(), 0), ReadoutError::Truncated);
  for (uint16_t len : {0, 19, 21, 24, 65535}) {
    Vmm3Readout r = good();
    r.length = len;
    EXPECT_EQ(parse(r), ReadoutError::Length) << len;
  }
  EXPECT_TRUE(stopsDatagram(ReadoutError::Length));
  EXPECT_TRUE(stopsDatagram(ReadoutError::Truncated));
  EXPECT_FALSE(stopsDatagram(ReadoutError::Bc));
}

TEST(Vmm3Readout, FieldBoundaries) {
  struct Case {
    void (*set)(Vmm3Readout &, bool over);
    ReadoutError error;
  };
  const Case cases[] = {
      {[](Vmm3Readout &r, bool over) { r.fiber = over ? 24 : 23; }, ReadoutError::Fiber},
      {[](Vmm3Readout &r, bool over) { r.fen = over ? 24 : 23; }, ReadoutError::Fen},
      {[](Vmm3Readout &r, bool over) { r.timeLow = over ? 88'052'500 : 88'052'499; },
       ReadoutError::TimeLow},
      {[](Vmm3Readout &r, bool over) { r.bc = over ? 4096 : 4095; }, ReadoutError::Bc},
      {[](Vmm3Readout &r, bool over) { r.otadc = over ? 1024 : 1023; }, ReadoutError::Adc},
      {[](Vmm3Readout &r, bool over) { r.otadc = over ? 0x8400 : 0x83FF; }, ReadoutError::Adc},
      {[](Vmm3Readout &r, bool over) { r.vmm = over ? 16 : 15; }, ReadoutError::Vmm},
      {[](Vmm3Readout &r, bool over) { r.channel = over ? 64 : 63; }, ReadoutError::Channel},
  };
  for (const Case &c : cases) {
    Vmm3Readout r = good();
    c.set(r, false);
    EXPECT_EQ(parse(r), ReadoutError::Ok) << readoutErrorName(c.error);
    r = good();
    c.set(r, true);
    EXPECT_EQ(parse(r), c.error) << readoutErrorName(c.error);
  }
}

TEST(Vmm3Readout, OverThresholdBitIsNotPartOfTheAdc) {
  Vmm3Readout r = good();
  r.otadc = 0x8000 | 1023;
  EXPECT_EQ(parse(r), ReadoutError::Ok);
  EXPECT_EQ(adcOf(r), 1023);
}

nlohmann::json minimal() {
  return {{"nx", 256},
          {"ny", 128},
          {"hybrids",
           {{{"fiber", 0}, {"fen", 0}, {"vmm_pair", 0}, {"plane", "x"}, {"strip_offset", 0}},
            {{"fiber", 0}, {"fen", 0}, {"vmm_pair", 1}, {"plane", "x"}, {"strip_offset", 128}},
            {{"fiber", 3}, {"fen", 23}, {"vmm_pair", 7}, {"plane", "y"}, {"strip_offset", 0}}}}};
}

TEST(Vmm3Config, DefaultsAndHybridMap) {
  const Vmm3Config c = parseVmm3Config(validated(minimal(), "t.json"), "t.json");
  EXPECT_EQ(c.detectorType, 0x48);
  EXPECT_EQ(c.nx, 256U);
  EXPECT_EQ(c.adcThreshold, 30);
  EXPECT_FALSE(c.fineTime);
  ASSERT_EQ(c.hybrids.size(), 3U);
  EXPECT_TRUE(c.slot(0, 0, 1).known);
  EXPECT_EQ(c.slot(0, 0, 1).stripOffset, 128);
  EXPECT_EQ(c.slot(3, 23, 7).plane, Plane::Y);
  EXPECT_FALSE(c.slot(0, 0, 2).known);
  EXPECT_FALSE(c.slot(23, 23, 7).known);
}

TEST(Vmm3Config, FineTimeIsExactIntegerArithmetic) {
  nlohmann::json j = minimal();
  j["fine_time"] = true;
  const Vmm3Config c = parseVmm3Config(validated(j, "t.json"), "t.json");
  EXPECT_EQ(c.fineTimeNs(0, 0), 0);
  EXPECT_EQ(c.fineTimeNs(1, 0), 22);       // 22.713 ns per BC
  EXPECT_EQ(c.fineTimeNs(0, 255), 22);     // 255/256 of a BC
  EXPECT_EQ(c.fineTimeNs(4095, 0), 93012); // 4095 * 22.7137
  EXPECT_EQ(c.fineTimeNs(100, 128), 2282); // 100.5 BC
  j["fine_time"] = false;
  EXPECT_EQ(parseVmm3Config(validated(j, "t.json"), "t.json").fineTimeNs(100, 128), 0);
}

void expectError(const nlohmann::json &j, const std::string &needle) {
  try {
    (void)parseVmm3Config(validated(j, "bad.json"), "bad.json");
    FAIL() << "accepted: " << j.dump();
  } catch (const efu::sdk::ConfigError &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("bad.json"), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}

TEST(Vmm3Config, ErrorsNameFileKeyAndValue) {
  nlohmann::json j = minimal();
  j["bogus"] = 1;
  expectError(j, "bogus");
  j = minimal();
  j.erase("nx");
  expectError(j, "'nx'");
  j = minimal();
  j["adc_threshold"] = 1024;
  expectError(j, "'adc_threshold' = 1024");
  j = minimal();
  j["time_gap_ns"] = "100";
  expectError(j, "time_gap_ns");
  j = minimal();
  j["hybrids"][1]["fiber"] = 24;
  expectError(j, "hybrids[1].fiber' = 24");
  j = minimal();
  j["hybrids"][2]["plane"] = "z";
  expectError(j, "hybrids[2].plane' = \"z\"");
  j = minimal();
  j["hybrids"][1]["strip_offset"] = 129; // 129 + 127 >= nx = 256
  expectError(j, "hybrids[1].strip_offset' = 129");
  j = minimal();
  j["hybrids"][1]["strip_offset"] = 64; // overlaps hybrid 0
  expectError(j, "belongs to another hybrid");
  j = minimal();
  j["hybrids"][1]["vmm_pair"] = 0; // same hybrid twice
  expectError(j, "listed twice");
  j = minimal();
  j["hybrids"][0]["extra"] = true;
  expectError(j, "hybrids[0].extra");
  j = minimal();
  j["ny"] = 100; // a y hybrid needs 128 strips
  expectError(j, "hybrids[2]");
  j = minimal();
  j["hybrids"] = nlohmann::json::array();
  expectError(j, "at least one hybrid");
}

TEST(Vmm3Config, ShippedConfigsLoad) {
  for (const char *name : {"freia", "estia", "nmx"}) {
    const Vmm3Config c =
        loadVmm3Config(std::string(EFU_SOURCE_DIR) + "/modules/vmm3/configs/" + name + ".json");
    EXPECT_EQ(c.instrument, name);
    EXPECT_FALSE(c.hybrids.empty());
  }
}

} // namespace
