// SPDX-License-Identifier: BSD-2-Clause
// vmm3: the readout checks, the shipped ESS files and every refusal of a configuration, and the
// ESS Multi-Blade geometry (coordinates, planes, pixels). Expected values marked "ESS" are the
// ESS EFU's own test expectations (ess-dmsc/event-formation-unit 8b399165), each table naming
// the file it comes from, turned into tables against our functions and the shipped ESS files.
#include "common/readout/Vmm3Readout.h"
#include "modules/vmm3/Vmm3Config.h"
#include "modules/vmm3/Vmm3Geometry.h"
#include "tests/modules/vmm3/Vmm3TestSupport.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace efu::vmm3 {
namespace {

using test::configError;
using test::rawShipped;
using test::shipped;

Vmm3Readout valid() {
  return test::readout(0, 0, 0, 16, 100, 1, 1);
}

// --- checkReadout -------------------------------------------------------------------------------

TEST(Vmm3Readout, EveryFieldAtItsBoundary) {
  struct Case {
    const char *what;
    std::function<void(Vmm3Readout &)> set;
    ReadoutError expected;
  };
  const std::vector<Case> cases{
      {"fiber 23", [](Vmm3Readout &r) { r.fiber = 23; }, ReadoutError::Ok},
      {"fiber 24", [](Vmm3Readout &r) { r.fiber = 24; }, ReadoutError::Fiber},
      {"fiber 255", [](Vmm3Readout &r) { r.fiber = 255; }, ReadoutError::Fiber},
      {"fen 23", [](Vmm3Readout &r) { r.fen = 23; }, ReadoutError::Ok},
      {"fen 24", [](Vmm3Readout &r) { r.fen = 24; }, ReadoutError::Fen},
      {"fen 255", [](Vmm3Readout &r) { r.fen = 255; }, ReadoutError::Fen},
      {"length 19", [](Vmm3Readout &r) { r.length = 19; }, ReadoutError::DataLength},
      {"length 21", [](Vmm3Readout &r) { r.length = 21; }, ReadoutError::DataLength},
      {"length 0", [](Vmm3Readout &r) { r.length = 0; }, ReadoutError::DataLength},
      {"length 0xffff", [](Vmm3Readout &r) { r.length = 0xFFFF; }, ReadoutError::DataLength},
      {"time low 0", [](Vmm3Readout &r) { r.timeLow = 0; }, ReadoutError::Ok},
      {"time low 88052499", [](Vmm3Readout &r) { r.timeLow = 88'052'499; }, ReadoutError::Ok},
      {"time low 88052500", [](Vmm3Readout &r) { r.timeLow = 88'052'500; }, ReadoutError::TimeFrac},
      {"time low max", [](Vmm3Readout &r) { r.timeLow = 0xFFFFFFFF; }, ReadoutError::TimeFrac},
      {"time high max", [](Vmm3Readout &r) { r.timeHigh = 0xFFFFFFFF; }, ReadoutError::Ok},
      {"bc 4095", [](Vmm3Readout &r) { r.bc = 4095; }, ReadoutError::Ok},
      {"bc 4096", [](Vmm3Readout &r) { r.bc = 4096; }, ReadoutError::Bc},
      {"bc 0xffff", [](Vmm3Readout &r) { r.bc = 0xFFFF; }, ReadoutError::Bc},
      {"adc 0", [](Vmm3Readout &r) { r.otadc = 0; }, ReadoutError::Ok},
      {"adc 1023", [](Vmm3Readout &r) { r.otadc = 1023; }, ReadoutError::Ok},
      {"adc 1023 + OT", [](Vmm3Readout &r) { r.otadc = 0x83FF; }, ReadoutError::Ok},
      {"OT alone", [](Vmm3Readout &r) { r.otadc = 0x8000; }, ReadoutError::Ok},
      {"adc 1024", [](Vmm3Readout &r) { r.otadc = 1024; }, ReadoutError::Adc},
      {"adc 1024 + OT", [](Vmm3Readout &r) { r.otadc = 0x8400; }, ReadoutError::Adc},
      {"adc bit 14", [](Vmm3Readout &r) { r.otadc = 0x4000; }, ReadoutError::Adc},
      {"adc 0x7fff", [](Vmm3Readout &r) { r.otadc = 0x7FFF; }, ReadoutError::Adc},
      {"adc 0xffff", [](Vmm3Readout &r) { r.otadc = 0xFFFF; }, ReadoutError::Adc},
      {"geo 0xff", [](Vmm3Readout &r) { r.geo = 0xFF; }, ReadoutError::Ok},
      {"tdc 255", [](Vmm3Readout &r) { r.tdc = 255; }, ReadoutError::Ok},
      {"vmm 15", [](Vmm3Readout &r) { r.vmm = 15; }, ReadoutError::Ok},
      {"vmm 16", [](Vmm3Readout &r) { r.vmm = 16; }, ReadoutError::Vmm},
      {"vmm 255", [](Vmm3Readout &r) { r.vmm = 255; }, ReadoutError::Vmm},
      {"channel 0", [](Vmm3Readout &r) { r.channel = 0; }, ReadoutError::Ok},
      {"channel 63", [](Vmm3Readout &r) { r.channel = 63; }, ReadoutError::Ok},
      {"channel 64", [](Vmm3Readout &r) { r.channel = 64; }, ReadoutError::Channel},
      {"channel 255", [](Vmm3Readout &r) { r.channel = 255; }, ReadoutError::Channel},
  };
  EXPECT_EQ(checkReadout(valid()), ReadoutError::Ok);
  for (const Case &c : cases) {
    Vmm3Readout r = valid();
    c.set(r);
    EXPECT_EQ(checkReadout(r), c.expected) << c.what;
  }
}

TEST(Vmm3Readout, ErrorsAreFoundInTheEssOrder) {
  // Every field bad: the first in the ESS parser's order (VMM3Parser.cpp: fiber, FEN, length,
  // time low, BC, ADC, VMM, channel) is reported; repairing it reveals the next.
  Vmm3Readout r{};
  r.fiber = 24;
  r.fen = 24;
  r.length = 21;
  r.timeLow = 88'052'500;
  r.bc = 4096;
  r.otadc = 1024;
  r.vmm = 16;
  r.channel = 64;
  const std::vector<std::pair<ReadoutError, std::function<void()>>> steps{
      {ReadoutError::Fiber, [&] { r.fiber = 0; }},
      {ReadoutError::Fen, [&] { r.fen = 0; }},
      {ReadoutError::DataLength, [&] { r.length = 20; }},
      {ReadoutError::TimeFrac, [&] { r.timeLow = 0; }},
      {ReadoutError::Bc, [&] { r.bc = 0; }},
      {ReadoutError::Adc, [&] { r.otadc = 0; }},
      {ReadoutError::Vmm, [&] { r.vmm = 0; }},
      {ReadoutError::Channel, [&] { r.channel = 0; }},
  };
  for (const auto &[expected, repair] : steps) {
    EXPECT_EQ(checkReadout(r), expected) << readoutErrorName(expected);
    repair();
  }
  EXPECT_EQ(checkReadout(r), ReadoutError::Ok);
}

TEST(Vmm3Readout, ErrorNamesAreTheEssCounterSuffixes) {
  const std::vector<std::pair<ReadoutError, std::string>> names{
      {ReadoutError::Ok, "ok"},
      {ReadoutError::Fiber, "fiber"},
      {ReadoutError::Fen, "fen"},
      {ReadoutError::DataLength, "datalen"},
      {ReadoutError::TimeFrac, "timefrac"},
      {ReadoutError::Bc, "bc"},
      {ReadoutError::Adc, "adc"},
      {ReadoutError::Vmm, "vmm"},
      {ReadoutError::Channel, "channel"}};
  for (const auto &[e, name] : names) {
    EXPECT_EQ(readoutErrorName(e), name);
  }
  EXPECT_STREQ(readoutErrorName(ReadoutError::Count_), "?");
}

TEST(Vmm3Readout, AdcIsTheLowTenBits) {
  Vmm3Readout r = valid();
  for (const auto &[otadc, adc] : std::vector<std::pair<uint16_t, uint16_t>>{
           {0, 0}, {1023, 1023}, {0x8000, 0}, {0x83FF, 1023}, {0x8123, 0x123}}) {
    r.otadc = otadc;
    EXPECT_EQ(adcOf(r), adc) << otadc;
  }
}

/// The readouts of the ESS parser tests (src/common/readout/vmm3/test/VMM3ParserTestData.h) as
/// bytes, each with the result VMM3ParserTest.cpp's counters imply for it.
struct EssBytes {
  const char *dataset;
  std::array<uint8_t, 20> bytes;
  ReadoutError expected;
};

const std::vector<EssBytes> &essParserReadouts() {
  using E = ReadoutError;
  static const std::vector<EssBytes> table{
      // VMMFiberError: fiber 23 passes, fiber 24 is ErrorFiber (Readouts 2, ErrorFiber 1).
      {"fiber 23", {0x17, 0, 0x14, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, E::Ok},
      {"fiber 24", {0x18, 1, 0x14, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, E::Fiber},
      // VMMFENError: FEN 24 is ErrorFEN, FEN 23 passes.
      {"fen 24", {0x0B, 0x18, 0x14, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, E::Fen},
      {"fen 23", {0x0A, 0x17, 0x14, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, E::Ok},
      // VMMDataLengthError: length 21.
      {"length 20", {1, 0, 0x14, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, E::Ok},
      {"length 21", {2, 1, 0x15, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, E::DataLength},
      // VMMTimeLowError: 0 and 88052499 pass, 88052500 and 0xffffffff fail (ErrorTimeFrac 2).
      {"time low 0", {1, 0, 0x14, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, E::Ok},
      {"time low max",
       {1, 1, 0x14, 0, 1, 0, 0, 0, 0x13, 0x93, 0x3F, 0x05, 0, 0, 0, 1, 0, 0, 0, 0},
       E::Ok},
      {"time low max + 1",
       {2, 2, 0x14, 0, 1, 0, 0, 0, 0x14, 0x93, 0x3F, 0x05, 0, 0, 0, 1, 0, 0, 0, 0},
       E::TimeFrac},
      {"time low 0xffffffff",
       {3, 3, 0x14, 0, 1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 1, 0, 0, 0, 0},
       E::TimeFrac},
      // VMMBCError: BC 0 and 0xfff pass, 0x1000 and 0xffff fail (ErrorBC 2).
      {"bc 0", {1, 0, 0x14, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, E::Ok},
      {"bc 0xfff", {0, 0, 0x14, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0xFF, 0x0F, 0, 1, 0, 0, 0, 0}, E::Ok},
      {"bc 0x1000", {1, 1, 0x14, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0x10, 0, 1, 0, 0, 0, 0}, E::Bc},
      {"bc 0xffff", {1, 2, 0x14, 0, 1, 0, 0, 0, 3, 0, 0, 0, 0xFF, 0xFF, 0, 1, 0, 0, 0, 0}, E::Bc},
      // VMMADCError: ADC 0 and OT + 0x3ff pass, OT + 0x400 and 0xffff fail (ErrorADC 2).
      {"adc 0", {0, 0, 0x14, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, E::Ok},
      {"adc OT 0x3ff",
       {1, 1, 0x14, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0xFF, 0x83, 0, 0, 0, 0},
       E::Ok},
      {"adc OT 0x400",
       {2, 2, 0x14, 0, 1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0x00, 0x84, 0, 0, 0, 0},
       E::Adc},
      {"adc 0xffff", {3, 3, 0x14, 0, 1, 0, 0, 0, 3, 0, 0, 0, 3, 0, 0xFF, 0xFF, 0, 0, 0, 0}, E::Adc},
      // VMMVMMError: VMM 0 and 15 pass, 16 and 255 fail (ErrorVMM 2).
      {"vmm 15", {1, 1, 0x14, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x0F, 0}, E::Ok},
      {"vmm 16", {2, 2, 0x14, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0}, E::Vmm},
      {"vmm 255", {3, 3, 0x14, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0}, E::Vmm},
      // VMMChannelError: channel 0 and 63 pass, 64 and 255 fail (ErrorChannel 2).
      {"channel 63", {1, 1, 0x14, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x3F}, E::Ok},
      {"channel 64",
       {1, 2, 0x14, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0x40},
       E::Channel},
      {"channel 255",
       {1, 3, 0x14, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0xFF},
       E::Channel},
      // VMMCalib1: GEO 0x80 (a calibration readout) is valid.
      {"geo 0x80", {1, 0, 0x14, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0x80, 0, 0, 0}, E::Ok},
  };
  return table;
}

TEST(Vmm3Readout, TheEssParserTestReadouts) {
  for (const EssBytes &b : essParserReadouts()) {
    Vmm3Readout r;
    std::memcpy(&r, b.bytes.data(), sizeof(r));
    EXPECT_EQ(checkReadout(r), b.expected) << b.dataset;
  }
}

TEST(Vmm3Readout, TheWireLayoutOfOneEssReadout) {
  // FreiaInstrumentTest.cpp's GoodEvent second readout: fiber 5, FEN 0, length 20, time (0, 17),
  // OTADC 0x100, GEO 0, TDC 0, VMM 1, channel 16; plus a BC and a TDC to place those bytes.
  const std::array<uint8_t, 20> bytes{0x05, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11, 0x00,
                                      0x00, 0x00, 0x34, 0x02, 0x00, 0x81, 0x80, 0x7F, 0x01, 0x10};
  Vmm3Readout r;
  std::memcpy(&r, bytes.data(), sizeof(r));
  EXPECT_EQ(r.fiber, 5);
  EXPECT_EQ(r.fen, 0);
  EXPECT_EQ(r.length, 20);
  EXPECT_EQ(r.timeHigh, 0U);
  EXPECT_EQ(r.timeLow, 17U);
  EXPECT_EQ(r.bc, 0x234);
  EXPECT_EQ(r.otadc, 0x8100);
  EXPECT_EQ(adcOf(r), 0x100);
  EXPECT_EQ(r.geo, 0x80);
  EXPECT_EQ(r.tdc, 0x7F);
  EXPECT_EQ(r.vmm, 1);
  EXPECT_EQ(r.channel, 16);
  EXPECT_EQ(checkReadout(r), ReadoutError::Ok);
}

// --- The shipped ESS files
// ------------------------------------------------------------------------

TEST(Vmm3Config, TheShippedEssFilesLoad) {
  struct File {
    const char *name;
    Layout layout;
    const char *geometry;
    uint32_t width, height;
    size_t hybrids;
    int64_t maxPulseTimeNs;
    uint8_t maxGapWire, maxGapStrip;
    uint8_t writtenType;
    std::vector<uint8_t> accepted, refused;
  };
  const std::vector<File> files{
      {"freia.json",
       Layout::Freia,
       "Freia",
       64,
       1024,
       32,
       71428570,
       0,
       0,
       0x48,
       {0x48},
       {0x49, 0x4C, 0x44}},
      {"amor.json",
       Layout::Amor,
       "AMOR",
       64,
       448,
       14,
       2071428570,
       1,
       1,
       0x48,
       {0x48, 0x49},
       {0x4C, 0x44}},
      {"tblmb.json",
       Layout::Amor,
       "AMOR",
       64,
       448,
       14,
       2071428570,
       1,
       1,
       0x48,
       {0x48, 0x49},
       {0x4C, 0x44}},
      {"estia_config.json",
       Layout::Estia,
       "Estia",
       1536,
       128,
       48,
       71428570,
       0,
       0,
       0x4C,
       {0x4C},
       {0x48, 0x49}},
  };
  for (const File &f : files) {
    const Vmm3Config c = parseVmm3Config(shipped(f.name), f.name);
    EXPECT_EQ(c.layout, f.layout) << f.name;
    EXPECT_EQ(c.geometryName, f.geometry) << f.name;
    EXPECT_EQ(c.width(), f.width) << f.name;
    EXPECT_EQ(c.height(), f.height) << f.name;
    EXPECT_EQ(c.hybrids.size(), f.hybrids) << f.name;
    EXPECT_EQ(c.maxPulseTimeNs, f.maxPulseTimeNs) << f.name;
    EXPECT_EQ(c.maxGapWire, f.maxGapWire) << f.name;
    EXPECT_EQ(c.maxGapStrip, f.maxGapStrip) << f.name;
    // Not in the files: the ESS defaults (ConfigTest.cpp: 500, 500, no split, 0.8, 1.2).
    EXPECT_EQ(c.matchingTimeGapNs, 500) << f.name;
    EXPECT_EQ(c.clusteringTimeGapNs, 500) << f.name;
    EXPECT_FALSE(c.splitMultiEvents) << f.name;
    EXPECT_FLOAT_EQ(c.coefficientLow, 0.8f) << f.name;
    EXPECT_FLOAT_EQ(c.coefficientHigh, 1.2f) << f.name;
    EXPECT_EQ(c.detectorType(), f.writtenType) << f.name;
    for (const uint8_t t : f.accepted) {
      EXPECT_TRUE(c.detectorTypes().contains(t)) << f.name << " " << int{t};
    }
    for (const uint8_t t : f.refused) {
      EXPECT_FALSE(c.detectorTypes().contains(t)) << f.name << " " << int{t};
    }
    // Every entry is in its slot, with the file's 32-character id and zero thresholds.
    for (size_t i = 0; i < c.hybrids.size(); ++i) {
      const Hybrid &h = c.hybrids[i];
      EXPECT_EQ(c.slot(h.ring, h.fen, h.hybrid), static_cast<int16_t>(i)) << f.name << " " << i;
      EXPECT_EQ(h.hybridId.size(), 32U) << f.name << " " << i;
      EXPECT_EQ(h.threshold[0], 0) << f.name;
      EXPECT_EQ(h.threshold[1], 0) << f.name;
    }
    // loadVmm3Config (efu-dump's and readoutgen's path) gives the same.
    const Vmm3Config loaded = loadVmm3Config(test::sourceDir() + "/modules/vmm3/configs/" + f.name);
    EXPECT_EQ(loaded.hybrids.size(), c.hybrids.size()) << f.name;
    EXPECT_EQ(loaded.slots, c.slots) << f.name;
  }
}

TEST(Vmm3Config, FreiaHasTheIcdHybrids) {
  // ConfigTest.cpp FullInstrument: the ICD's (ring, FEN, hybrid) list, 32 hybrids, 65536
  // pixels.
  const std::vector<std::tuple<uint8_t, uint8_t, uint8_t>> icd{
      {0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1}, {1, 0, 0},  {1, 0, 1},  {1, 1, 0},  {1, 1, 1},
      {2, 0, 0}, {2, 0, 1}, {2, 1, 0}, {2, 1, 1}, {3, 0, 0},  {3, 0, 1},  {4, 0, 0},  {4, 0, 1},
      {5, 0, 0}, {5, 0, 1}, {6, 0, 0}, {6, 0, 1}, {7, 0, 0},  {7, 0, 1},  {8, 0, 0},  {8, 0, 1},
      {9, 0, 0}, {9, 0, 1}, {9, 1, 0}, {9, 1, 1}, {10, 0, 0}, {10, 0, 1}, {10, 1, 0}, {10, 1, 1}};
  const Vmm3Config c = parseVmm3Config(shipped("freia.json"), "freia.json");
  EXPECT_EQ(c.hybrids.size(), 32U);
  EXPECT_EQ(c.width() * c.height(), 65536U);
  for (size_t i = 0; i < icd.size(); ++i) {
    const auto [ring, fen, hybrid] = icd[i];
    EXPECT_GE(c.slot(ring, fen, hybrid), 0) << i;
  }
  // ConfigTest.cpp UninitialisedHybrids: ring 1, FEN 0, hybrid 0 is configured but e.g. ring 3,
  // FEN 1 is not.
  EXPECT_LT(c.slot(3, 1, 0), 0);
  size_t configured = 0;
  for (const int16_t s : c.slots) {
    configured += s >= 0 ? 1 : 0;
  }
  EXPECT_EQ(configured, 32U);
}

TEST(Vmm3Config, EssOffsetsOfEachCassette) {
  // Config.cpp applyConfig: FREIA and AMOR: x offset 0, y offset 32 x cassette; ESTIA: x offset
  // 32 x (cassette % 48), y offset 64 x (cassette / 48).
  for (const char *name : {"freia.json", "amor.json", "tblmb.json", "estia_config.json"}) {
    const Vmm3Config c = parseVmm3Config(shipped(name), name);
    for (const Hybrid &h : c.hybrids) {
      if (c.layout == Layout::Estia) {
        EXPECT_EQ(h.xOffset, 32 * (h.cassette % 48)) << name << " " << int{h.cassette};
        EXPECT_EQ(h.yOffset, 64 * (h.cassette / 48)) << name << " " << int{h.cassette};
      } else {
        EXPECT_EQ(h.xOffset, 0) << name;
        EXPECT_EQ(h.yOffset, 32 * h.cassette) << name << " " << int{h.cassette};
      }
    }
  }
  // A few by hand, from the files.
  const Vmm3Config estia = parseVmm3Config(shipped("estia_config.json"), "estia_config.json");
  EXPECT_EQ(estia.hybrids[0].cassette, 48); // ring 0 FEN 0 hybrid 0
  EXPECT_EQ(estia.hybrids[0].xOffset, 0);
  EXPECT_EQ(estia.hybrids[0].yOffset, 64);
  EXPECT_EQ(estia.hybrids[47].cassette, 95); // ring 9 FEN 0 hybrid 2
  EXPECT_EQ(estia.hybrids[47].xOffset, 1504);
  EXPECT_EQ(estia.hybrids[47].yOffset, 64);
  const Vmm3Config amor = parseVmm3Config(shipped("amor.json"), "amor.json");
  const int16_t last = amor.slot(0, 0, 0); // cassette 13
  ASSERT_GE(last, 0);
  EXPECT_EQ(amor.hybrids[static_cast<size_t>(last)].yOffset, 416);
  const Vmm3Config freia = parseVmm3Config(shipped("freia.json"), "freia.json");
  const int16_t ring2 = freia.slot(2, 0, 0); // cassette 8
  ASSERT_GE(ring2, 0);
  EXPECT_EQ(freia.hybrids[static_cast<size_t>(ring2)].yOffset, 256);
}

TEST(Vmm3Config, OptionalParametersOfTheEssFile) {
  // ConfigTest.cpp: MaxGapWire / MaxGapStrip 129, SplitMultiEvents true, coefficients 0.42,
  // MaxMatchingTimeGap / MaxClusteringTimeGap 42 are taken; absent keys keep the defaults.
  nlohmann::json f = rawShipped("freia.json");
  f["MaxGapWire"] = 129;
  f["MaxGapStrip"] = 129;
  f["SplitMultiEvents"] = true;
  f["SplitMultiEventsCoefficientLow"] = 0.42;
  f["SplitMultiEventsCoefficientHigh"] = 0.42;
  f["MaxMatchingTimeGap"] = 42;
  f["MaxClusteringTimeGap"] = 42;
  const Vmm3Config c = parseVmm3Config(test::validated(f), "freia.json");
  EXPECT_EQ(c.maxGapWire, 129);
  EXPECT_EQ(c.maxGapStrip, 129);
  EXPECT_TRUE(c.splitMultiEvents);
  EXPECT_FLOAT_EQ(c.coefficientLow, 0.42f);
  EXPECT_FLOAT_EQ(c.coefficientHigh, 0.42f);
  EXPECT_EQ(c.matchingTimeGapNs, 42);
  EXPECT_EQ(c.clusteringTimeGapNs, 42);

  nlohmann::json bare = rawShipped("freia.json");
  for (const char *key :
       {"MaxGapWire", "MaxGapStrip", "MaxPulseTimeNS", "WireChOffset", "History"}) {
    bare.erase(key);
  }
  const Vmm3Config d = parseVmm3Config(test::validated(bare), "freia.json");
  EXPECT_EQ(d.maxGapWire, 0);
  EXPECT_EQ(d.maxGapStrip, 0);
  EXPECT_EQ(d.maxPulseTimeNs, 357142855);
  EXPECT_EQ(d.matchingTimeGapNs, 500);
  EXPECT_EQ(d.clusteringTimeGapNs, 500);
  // The largest gaps.
  f["MaxGapWire"] = 255;
  f["MaxGapStrip"] = 255;
  EXPECT_EQ(configError(f), "");
}

TEST(Vmm3Config, GeometryNames) {
  // FreiaInstrument.cpp createGeometry: AMOR and Freia ignoring case (FreiaInstrumentTest.cpp
  // CreateCaseInsensitiveAmorGeometry), ESTIA only as "Estia" (its offsets are placed only for
  // that spelling), anything else refused (CreateInvalid*Geometry: "InvalidGeometry").
  const std::vector<std::pair<std::string, int>> names{{"Freia", 0},
                                                       {"FREIA", 0},
                                                       {"freia", 0},
                                                       {"AMOR", 1},
                                                       {"amor", 1},
                                                       {"Amor", 1},
                                                       {"Estia", 2},
                                                       {"ESTIA", -1},
                                                       {"estia", -1},
                                                       {"EStia", -1},
                                                       {"TBLMB", -1},
                                                       {"tblmb", -1},
                                                       {"InvalidGeometry", -1},
                                                       {"NMX", -1},
                                                       {"", -1}};
  for (const auto &[name, layout] : names) {
    nlohmann::json f = rawShipped("freia.json");
    f["InstrumentGeometry"] = name;
    f["Config"].erase(f["Config"].begin() + 14, f["Config"].end()); // cassettes AMOR has too
    const std::string error = configError(f);
    if (layout < 0) {
      EXPECT_NE(error.find("freia.json"), std::string::npos) << name << ": " << error;
      EXPECT_NE(error.find("InstrumentGeometry = \"" + name + "\""), std::string::npos)
          << name << ": " << error;
    } else {
      EXPECT_EQ(error, "") << name;
      EXPECT_EQ(static_cast<int>(parseVmm3Config(test::validated(f), "f.json").layout), layout)
          << name;
    }
  }
  nlohmann::json f = rawShipped("freia.json");
  f["InstrumentGeometry"] = "ESTIA";
  EXPECT_NE(configError(f).find("write it \"Estia\""), std::string::npos) << configError(f);
  // The ESS EFU's old TBLMB file (tblmb_old.json) said InstrumentGeometry "TBLMB"; the file
  // shipped for TBLMB says AMOR. An old-style file is refused.
  nlohmann::json old = rawShipped("tblmb.json");
  old["InstrumentGeometry"] = "TBLMB";
  const std::string error = configError(old, "tblmb_old.json");
  EXPECT_NE(error.find("tblmb_old.json: InstrumentGeometry = \"TBLMB\""), std::string::npos)
      << error;
}

// --- Every refusal names the file, the key path and the value
// -------------------------------------

struct Refusal {
  const char *what;
  std::function<void(nlohmann::json &)> change;
  std::vector<std::string> says; ///< substrings of the message (beyond the file name)
};

void expectRefusals(const char *file, const std::vector<Refusal> &refusals) {
  for (const Refusal &r : refusals) {
    nlohmann::json f = rawShipped(file);
    r.change(f);
    const std::string error = configError(f, file);
    ASSERT_FALSE(error.empty()) << r.what;
    EXPECT_EQ(error.rfind(std::string(file) + ": ", 0), 0U) << r.what << ": " << error;
    for (const std::string &s : r.says) {
      EXPECT_NE(error.find(s), std::string::npos) << r.what << ": '" << s << "' in " << error;
    }
  }
}

TEST(Vmm3Config, EveryRefusalNamesFileKeyAndValue) {
  using J = nlohmann::json;
  expectRefusals(
      "freia.json",
      {
          // ConfigTest.cpp InvalidDetector ("Frigg") and NoDetector.
          {"Detector Frigg", [](J &f) { f["Detector"] = "Frigg"; }, {"Detector = \"Frigg\""}},
          {"Detector freia", [](J &f) { f["Detector"] = "freia"; }, {"Detector = \"freia\""}},
          {"Detector missing", [](J &f) { f.erase("Detector"); }, {"required key 'Detector'"}},
          {"Detector a number",
           [](J &f) { f["Detector"] = 7; },
           {"key 'Detector' must be string, got 7"}},
          // ConfigTest.cpp BadVersion.
          {"Version 2", [](J &f) { f["Version"] = 2; }, {"key 'Version' = 2"}},
          {"Version 0", [](J &f) { f["Version"] = 0; }, {"key 'Version' = 0"}},
          {"Version missing", [](J &f) { f.erase("Version"); }, {"required key 'Version'"}},
          {"Comment missing", [](J &f) { f.erase("Comment"); }, {"required key 'Comment'"}},
          {"Date missing", [](J &f) { f.erase("Date"); }, {"required key 'Date'"}},
          {"Info missing", [](J &f) { f.erase("Info"); }, {"required key 'Info'"}},
          {"InstrumentGeometry missing",
           [](J &f) { f.erase("InstrumentGeometry"); },
           {"required key 'InstrumentGeometry'"}},
          {"Config missing", [](J &f) { f.erase("Config"); }, {"required key 'Config'"}},
          {"Config empty", [](J &f) { f["Config"] = J::array(); }, {"Config = []"}},
          {"Config an object",
           [](J &f) { f["Config"] = J::object(); },
           {"key 'Config' must be array, got {}"}},
          {"entry not an object", [](J &f) { f["Config"][3] = 17; }, {"Config[3] = 17"}},
          // ConfigTest.cpp InvalidConfig: Ring renamed Ringo.
          {"entry key Ringo",
           [](J &f) {
             f["Config"][4]["Ringo"] = f["Config"][4]["Ring"];
             f["Config"][4].erase("Ring");
           },
           {"Config[4].Ringo"}},
          {"entry key missing",
           [](J &f) { f["Config"][2].erase("FEN"); },
           {"Config[2]", "missing key 'FEN'"}},
          // ConfigTest.cpp InvalidRing: 12.
          {"Ring 12", [](J &f) { f["Config"][4]["Ring"] = 12; }, {"Config[4].Ring = 12"}},
          {"Ring 11", [](J &f) { f["Config"][4]["Ring"] = 11; }, {"Config[4].Ring = 11"}},
          {"Ring -1", [](J &f) { f["Config"][4]["Ring"] = -1; }, {"Config[4].Ring = -1"}},
          {"Ring a string", [](J &f) { f["Config"][4]["Ring"] = "0"; }, {"Config[4].Ring = \"0\""}},
          {"FEN 14", [](J &f) { f["Config"][5]["FEN"] = 14; }, {"Config[5].FEN = 14"}},
          {"Hybrid 11", [](J &f) { f["Config"][6]["Hybrid"] = 11; }, {"Config[6].Hybrid = 11"}},
          {"CassetteNumber 32",
           [](J &f) { f["Config"][7]["CassetteNumber"] = 32; },
           {"Config[7].CassetteNumber = 32"}},
          {"CassetteNumber -1",
           [](J &f) { f["Config"][7]["CassetteNumber"] = -1; },
           {"Config[7].CassetteNumber = -1"}},
          {"HybridId 31 characters",
           [](J &f) { f["Config"][8]["HybridId"] = "E553333322222222111111110000000"; },
           {"Config[8].HybridId = \"E553333322222222111111110000000\"", "32"}},
          {"HybridId 33 characters",
           [](J &f) { f["Config"][8]["HybridId"] = "E55333332222222211111111000000000"; },
           {"Config[8].HybridId = \"E55333332222222211111111000000000\""}},
          {"HybridId empty",
           [](J &f) { f["Config"][8]["HybridId"] = ""; },
           {"Config[8].HybridId = \"\""}},
          {"HybridId a number",
           [](J &f) { f["Config"][8]["HybridId"] = 5; },
           {"Config[8].HybridId = 5"}},
          // VMM3ConfigTest.cpp ConfigFileDuplicateHybrid: Config[3] takes Config[0]'s id.
          {"HybridId twice",
           [](J &f) { f["Config"][3]["HybridId"] = f["Config"][0]["HybridId"]; },
           {"Config[3].HybridId = \"E5533333222222221111111100000000\"", "Config[0]"}},
          // ConfigTest.cpp Duplicate: Config[3] takes Config[0]'s ring, FEN and hybrid.
          {"Ring/FEN/Hybrid twice",
           [](J &f) {
             f["Config"][3]["Ring"] = 0;
             f["Config"][3]["FEN"] = 0;
             f["Config"][3]["Hybrid"] = 0;
           },
           {"Config[3] = ", "Ring 0 FEN 0 Hybrid 0", "Config[0]"}},
          // ConfigTest.cpp BadThresholdArraySize: [[0, 42], [0]].
          {"Thresholds [[0,42],[0]]",
           [](J &f) { f["Config"][0]["Thresholds"][0].push_back(42); },
           {"Config[0].Thresholds[0] = [0,42]"}},
          {"Thresholds [[0]]",
           [](J &f) { f["Config"][0]["Thresholds"] = J::parse("[[0]]"); },
           {"Config[0].Thresholds = [[0]]"}},
          {"Thresholds [[0],[0],[0]]",
           [](J &f) { f["Config"][0]["Thresholds"] = J::parse("[[0],[0],[0]]"); },
           {"Config[0].Thresholds = [[0],[0],[0]]"}},
          {"Thresholds [0,0]",
           [](J &f) { f["Config"][0]["Thresholds"] = J::parse("[0,0]"); },
           {"Config[0].Thresholds[0] = 0"}},
          {"Thresholds [[],[0]]",
           [](J &f) { f["Config"][0]["Thresholds"] = J::parse("[[],[0]]"); },
           {"Config[0].Thresholds[0] = []"}},
          {"Thresholds [[0],[1.5]]",
           [](J &f) { f["Config"][0]["Thresholds"] = J::parse("[[0],[1.5]]"); },
           {"Config[0].Thresholds[1][0] = 1.5"}},
          {"Thresholds missing",
           [](J &f) { f["Config"][0].erase("Thresholds"); },
           {"Config[0] = {", "missing key 'Thresholds'"}},
          {"WireChOffset 15", [](J &f) { f["WireChOffset"] = 15; }, {"key 'WireChOffset' = 15"}},
          {"WireChOffset 17", [](J &f) { f["WireChOffset"] = 17; }, {"key 'WireChOffset' = 17"}},
          {"WireChOffset 0", [](J &f) { f["WireChOffset"] = 0; }, {"key 'WireChOffset' = 0"}},
          {"MaxGapWire 256", [](J &f) { f["MaxGapWire"] = 256; }, {"key 'MaxGapWire' = 256"}},
          {"MaxGapStrip 256", [](J &f) { f["MaxGapStrip"] = 256; }, {"key 'MaxGapStrip' = 256"}},
          {"MaxGapWire -1", [](J &f) { f["MaxGapWire"] = -1; }, {"key 'MaxGapWire' = -1"}},
          {"MaxMatchingTimeGap 65536",
           [](J &f) { f["MaxMatchingTimeGap"] = 65536; },
           {"key 'MaxMatchingTimeGap' = 65536"}},
          {"MaxPulseTimeNS -1",
           [](J &f) { f["MaxPulseTimeNS"] = -1; },
           {"key 'MaxPulseTimeNS' = -1"}},
          {"unknown top-level key",
           [](J &f) { f["MaxGapWires"] = 1; },
           {"unknown key 'MaxGapWires'"}},
          {"unknown top-level key (other case)",
           [](J &f) { f["detector"] = "Freia"; },
           {"unknown key 'detector'"}},
      });
  // The limits that depend on the geometry: CassetteNumber 13 is AMOR's last, 95 ESTIA's.
  expectRefusals("amor.json", {{"AMOR cassette 14",
                                [](nlohmann::json &f) { f["Config"][0]["CassetteNumber"] = 14; },
                                {"Config[0].CassetteNumber = 14"}}});
  expectRefusals("estia_config.json",
                 {{"ESTIA cassette 96",
                   [](nlohmann::json &f) { f["Config"][0]["CassetteNumber"] = 96; },
                   {"Config[0].CassetteNumber = 96"}}});
}

TEST(Vmm3Config, TheLimitsThemselvesAreTaken) {
  using J = nlohmann::json;
  const std::vector<std::pair<const char *, std::function<void(J &)>>> taken{
      {"Ring 10 FEN 13 Hybrid 10",
       [](J &f) {
         f["Config"][0]["Ring"] = 10;
         f["Config"][0]["FEN"] = 13;
         f["Config"][0]["Hybrid"] = 10;
       }},
      {"CassetteNumber 31 twice", [](J &f) { f["Config"][0]["CassetteNumber"] = 31; }},
      {"negative threshold", [](J &f) { f["Config"][0]["Thresholds"] = J::parse("[[-5],[0]]"); }},
      {"threshold above the ADC",
       [](J &f) { f["Config"][0]["Thresholds"] = J::parse("[[0],[40000]]"); }},
      {"HybridId of 32 anything", [](J &f) { f["Config"][0]["HybridId"] = std::string(32, ' '); }},
      {"VersionStr", [](J &f) { f["VersionStr"] = "v1"; }},
  };
  for (const auto &[what, change] : taken) {
    J f = rawShipped("freia.json");
    change(f);
    EXPECT_EQ(configError(f), "") << what;
  }
  J f = rawShipped("freia.json");
  f["Config"][0]["Thresholds"] = J::parse("[[-5],[40000]]");
  const Vmm3Config c = parseVmm3Config(test::validated(f), "freia.json");
  EXPECT_EQ(c.hybrids[0].threshold[0], -5);
  EXPECT_EQ(c.hybrids[0].threshold[1], 40000);
  // Two entries may name one cassette (the ESS EFU does not check it): both are mapped.
  J g = rawShipped("freia.json");
  g["Config"][1]["CassetteNumber"] = 0;
  const Vmm3Config d = parseVmm3Config(test::validated(g), "freia.json");
  EXPECT_EQ(d.hybrids[1].yOffset, 0);
}

// --- Geometry
// -------------------------------------------------------------------------------------

TEST(Vmm3Geometry, PlanesOfEachLayout) {
  // GeometryTest.cpp FreiaMapping / AMORMappings / EstiaMapping / TBLMBMapping: x on VMM 1 for
  // Freia and Estia, on VMM 0 for AMOR (and TBLMB); every even VMM like 0, every odd like 1
  // (FreiaGeometryTest.cpp BoundaryTests: VMMs 254 and 255).
  Vmm3Config c;
  for (const auto &[layout, xOdd, xWire] :
       std::vector<std::tuple<Layout, bool, bool>>{{Layout::Freia, true, false},
                                                   {Layout::Amor, false, false},
                                                   {Layout::Estia, true, true}}) {
    c.layout = layout;
    for (int vmm = 0; vmm < 256; ++vmm) {
      const bool odd = (vmm & 1) != 0;
      EXPECT_EQ(c.isX(static_cast<uint8_t>(vmm)), odd == xOdd) << int(layout) << " " << vmm;
      EXPECT_EQ(c.isWire(static_cast<uint8_t>(vmm)), (odd == xOdd) == xWire)
          << int(layout) << " " << vmm;
    }
  }
}

TEST(Vmm3Geometry, ValidChannels) {
  for (int ch = 0; ch < 256; ++ch) {
    EXPECT_EQ(validChannel(true, static_cast<uint8_t>(ch)), ch >= 16 && ch <= 47) << ch;
    EXPECT_EQ(validChannel(false, static_cast<uint8_t>(ch)), ch <= 63) << ch;
  }
}

TEST(Vmm3Geometry, EssCoordinatesOfEachLayout) {
  // FreiaGeometryTest.cpp Coordinates: VMM 1 (x, strips) channel c → 63 - c; VMM 0 (y, wires)
  // → 47 - c. AmorGeometryTest.cpp Coordinates: VMM 0 (x) → 63 - c; VMM 1 (y) → y offset + 47 -
  // c for every y offset 0, 32, ..., 992. EstiaGeometryTest.cpp Coordinates: VMM 1 (x, wires)
  // → c - 16; VMM 0 (y, strips) → 63 - c.
  Vmm3Config c;
  auto coord = [&c](uint8_t vmm, uint16_t offset, uint8_t ch) {
    return coordinateOf(c.layout, c.isWire(vmm), offset, ch);
  };
  c.layout = Layout::Freia;
  for (uint8_t ch = 0; ch < 64; ++ch) {
    EXPECT_TRUE(c.isX(1));
    EXPECT_EQ(coord(1, 0, ch), 63U - ch) << int{ch};
  }
  for (uint8_t ch = 16; ch < 48; ++ch) {
    EXPECT_FALSE(c.isX(0));
    EXPECT_EQ(coord(0, 0, ch), 47U - ch) << int{ch};
  }
  c.layout = Layout::Amor;
  for (uint8_t ch = 0; ch < 64; ++ch) {
    EXPECT_TRUE(c.isX(0));
    EXPECT_EQ(coord(0, 0, ch), 63U - ch) << int{ch};
  }
  for (uint8_t ch = 16; ch < 47; ++ch) {
    for (uint16_t offset = 0; offset < 1024; offset += 32) {
      EXPECT_FALSE(c.isX(1));
      EXPECT_EQ(coord(1, offset, ch), 47U - ch + offset) << int{ch} << " " << offset;
    }
  }
  c.layout = Layout::Estia;
  for (uint8_t ch = 16; ch < 48; ++ch) {
    EXPECT_TRUE(c.isX(1));
    EXPECT_EQ(coord(1, 0, ch), ch - 16U) << int{ch};
  }
  for (uint8_t ch = 0; ch < 64; ++ch) {
    EXPECT_FALSE(c.isX(0));
    EXPECT_EQ(coord(0, 0, ch), 63U - ch) << int{ch};
  }
  // The BoundaryTests' in-range cases: VMM 255 / 254 channel 32 at offset 0; a strip at offset
  // 65000 channel 32 → 65031; a Freia wire at offset 65526 channel 47 → 65526. (Their overflow
  // cases, beyond 65535, need offsets no ESS file can give: the largest is ESTIA's 1504.)
  c.layout = Layout::Freia;
  EXPECT_EQ(coord(255, 0, 32), 31U);
  EXPECT_EQ(coord(254, 0, 32), 15U);
  EXPECT_EQ(coord(1, 65000, 32), 65031U);
  EXPECT_EQ(coord(0, 65526, 47), 65526U);
  c.layout = Layout::Amor;
  EXPECT_EQ(coord(254, 0, 32), 31U);
  EXPECT_EQ(coord(255, 0, 32), 15U);
  c.layout = Layout::Estia;
  EXPECT_EQ(coord(255, 0, 32), 16U);
  EXPECT_EQ(coord(254, 0, 32), 31U);
  EXPECT_EQ(coord(0, 65000, 32), 65031U);
}

TEST(Vmm3Geometry, ChannelOfInvertsCoordinateOfEverywhere) {
  for (const Layout layout : {Layout::Freia, Layout::Amor, Layout::Estia}) {
    for (const bool wire : {false, true}) {
      for (const uint16_t offset : {0, 32, 64, 416, 992, 1504}) {
        std::set<uint32_t> seen;
        for (int ch = 0; ch < 64; ++ch) {
          if (!validChannel(wire, static_cast<uint8_t>(ch))) {
            continue;
          }
          const uint32_t x = coordinateOf(layout, wire, offset, static_cast<uint8_t>(ch));
          EXPECT_TRUE(seen.insert(x).second) << "two channels at " << x;
          EXPECT_GE(x, offset);
          EXPECT_LT(x, offset + (wire ? 32U : 64U));
          EXPECT_EQ(channelOf(layout, wire, offset, x), ch)
              << int(layout) << " " << wire << " " << offset;
        }
        EXPECT_EQ(seen.size(), wire ? 32U : 64U);
        // Outside the cassette: no channel.
        if (offset > 0) {
          EXPECT_EQ(channelOf(layout, wire, offset, offset - 1U), -1);
        }
        EXPECT_EQ(channelOf(layout, wire, offset, offset + (wire ? 32U : 64U)), -1);
        EXPECT_EQ(channelOf(layout, wire, offset, 0xFFFFFFFFU), -1);
      }
    }
  }
}

TEST(Vmm3Geometry, EssPixelCorners) {
  // GeometryTest.cpp FreiaPixels / AMORPixels / EstiaPixels: (0, 0) → 1, (nx - 1, 0) → nx,
  // (0, ny - 1) → nx (ny - 1) + 1, (nx - 1, ny - 1) → nx ny; x = nx or y = ny → 0.
  Vmm3Config c;
  for (const auto &[layout, nx, ny] : std::vector<std::tuple<Layout, uint32_t, uint32_t>>{
           {Layout::Freia, 64, 1024}, {Layout::Amor, 64, 448}, {Layout::Estia, 1536, 128}}) {
    c.layout = layout;
    EXPECT_EQ(c.width(), nx);
    EXPECT_EQ(c.height(), ny);
    EXPECT_EQ(c.pixel(0, 0), 1U);
    EXPECT_EQ(c.pixel(nx - 1, 0), nx);
    EXPECT_EQ(c.pixel(0, ny - 1), nx * (ny - 1) + 1);
    EXPECT_EQ(c.pixel(nx - 1, ny - 1), nx * ny);
    EXPECT_EQ(c.pixel(nx, 0), 0U);
    EXPECT_EQ(c.pixel(0, ny), 0U);
    EXPECT_EQ(c.pixel(nx, ny), 0U);
    EXPECT_EQ(c.pixel(0xFFFFFFFF, 0), 0U);
    // Every pixel id once (row-major, 1-based).
    uint32_t expected = 1;
    for (uint32_t y = 0; y < ny; ++y) {
      for (uint32_t x = 0; x < nx; ++x) {
        ASSERT_EQ(c.pixel(x, y), expected++) << x << " " << y;
      }
    }
  }
}

TEST(Vmm3Geometry, EssPixelsOfReadouts) {
  // A readout's coordinate with the other plane's, as the ESS EFU places them.
  // FreiaInstrumentTest.cpp GoodEvent: ring 2, FEN 0 (cassette 8 of freia.json), y wire
  // channel 16 → y = 256 + 31 = 287; x strip channel 16 → 47: pixel 287 x 64 + 47 + 1.
  const Vmm3Config freia = parseVmm3Config(shipped("freia.json"), "freia.json");
  const Hybrid &h8 = freia.hybrids[static_cast<size_t>(freia.slot(2, 0, 0))];
  const uint32_t x = coordinateOf(freia.layout, freia.isWire(1), h8.xOffset, 16);
  const uint32_t y = coordinateOf(freia.layout, freia.isWire(0), h8.yOffset, 16);
  EXPECT_EQ(x, 47U);
  EXPECT_EQ(y, 287U);
  EXPECT_EQ(freia.pixel(x, y), 18416U);
  // The corners of the shipped geometries through real channels.
  struct Corner {
    const char *file;
    uint8_t ring, fen, hybrid, xVmm, xCh, yVmm, yCh;
    uint32_t pixel;
  };
  for (const Corner &k : std::vector<Corner>{
           // Freia cassette 0 (0/0/0): x strip 63 → 0, y wire 47 → 0.
           {"freia.json", 0, 0, 0, 1, 63, 0, 47, 1},
           // Freia cassette 31 (10/1/1): x strip 0 → 63, y wire 16 → 992 + 31 = 1023.
           {"freia.json", 10, 1, 1, 3, 0, 2, 16, 1023 * 64 + 63 + 1},
           // AMOR cassette 13 (0/0/0): x on VMM 0, y on VMM 1: y wire 16 → 416 + 31 = 447.
           {"amor.json", 0, 0, 0, 0, 0, 1, 16, 447 * 64 + 63 + 1},
           // AMOR cassette 0 (2/0/3): VMMs 6 and 7.
           {"amor.json", 2, 0, 3, 6, 63, 7, 47, 1},
           // ESTIA cassette 48 (0/0/0): x wire 16 → 0, y strip 63 → 64.
           {"estia_config.json", 0, 0, 0, 1, 16, 0, 63, 64 * 1536 + 1},
           // ESTIA cassette 95 (9/0/2): x wire 47 → 1504 + 31 = 1535, y strip 0 → 127.
           {"estia_config.json", 9, 0, 2, 5, 47, 4, 0, 127 * 1536 + 1535 + 1},
       }) {
    const Vmm3Config c = parseVmm3Config(shipped(k.file), k.file);
    const int16_t slot = c.slot(k.ring, k.fen, k.hybrid);
    ASSERT_GE(slot, 0) << k.file;
    const Hybrid &h = c.hybrids[static_cast<size_t>(slot)];
    ASSERT_TRUE(c.isX(k.xVmm)) << k.file;
    ASSERT_FALSE(c.isX(k.yVmm)) << k.file;
    const uint32_t cx = coordinateOf(c.layout, c.isWire(k.xVmm), h.xOffset, k.xCh);
    const uint32_t cy = coordinateOf(c.layout, c.isWire(k.yVmm), h.yOffset, k.yCh);
    EXPECT_EQ(c.pixel(cx, cy), k.pixel) << k.file << " " << cx << " " << cy;
  }
}

TEST(Vmm3Geometry, EveryConfiguredChannelLiesInsideTheImage) {
  // Why geometry.pixel_errors cannot count with an accepted file: every cassette number the
  // parser takes puts all its channels inside the ESS image, and a cluster centre lies between
  // its hits. (The ESS EFU's PixelError test builds a cluster at x = 2000 by hand.)
  for (const char *name : {"freia.json", "amor.json", "tblmb.json", "estia_config.json"}) {
    nlohmann::json f = rawShipped(name);
    const Vmm3Config shippedConfig = parseVmm3Config(test::validated(f), name);
    // Every cassette number the layout allows, not only the file's.
    const int last = shippedConfig.layout == Layout::Freia  ? 31
                     : shippedConfig.layout == Layout::Amor ? 13
                                                            : 95;
    f["Config"] = nlohmann::json::array();
    for (int cassette = 0; cassette <= last; ++cassette) {
      f["Config"].push_back({{"CassetteNumber", cassette},
                             {"Ring", cassette % 11},
                             {"FEN", cassette / 11},
                             {"Hybrid", 0},
                             {"HybridId", fmt::format("{:032}", cassette)},
                             {"Thresholds", {{0}, {0}}}});
    }
    const Vmm3Config c = parseVmm3Config(test::validated(f), name);
    for (const Hybrid &h : c.hybrids) {
      for (uint8_t vmm = 0; vmm < 2; ++vmm) {
        const bool wire = c.isWire(vmm);
        for (uint8_t ch = 0; ch < 64; ++ch) {
          if (!validChannel(wire, ch)) {
            continue;
          }
          const uint32_t coord =
              coordinateOf(c.layout, wire, c.isX(vmm) ? h.xOffset : h.yOffset, ch);
          EXPECT_LT(coord, c.isX(vmm) ? c.width() : c.height())
              << name << " cassette " << int{h.cassette};
        }
      }
    }
  }
}

TEST(Vmm3Geometry, CassetteOfEveryChannelIsItsOwn) {
  for (const char *name : {"freia.json", "amor.json", "tblmb.json", "estia_config.json"}) {
    const Vmm3Config c = parseVmm3Config(shipped(name), name);
    for (const Hybrid &h : c.hybrids) {
      const uint8_t xVmm = c.isX(0) ? 0 : 1;
      const uint8_t yVmm = 1 - xVmm;
      for (uint8_t xc = 0; xc < 64; ++xc) {
        if (!validChannel(c.isWire(xVmm), xc)) {
          continue;
        }
        for (uint8_t yc = 0; yc < 64; ++yc) {
          if (!validChannel(c.isWire(yVmm), yc)) {
            continue;
          }
          const uint32_t x = coordinateOf(c.layout, c.isWire(xVmm), h.xOffset, xc);
          const uint32_t y = coordinateOf(c.layout, c.isWire(yVmm), h.yOffset, yc);
          ASSERT_EQ(cassetteOf(c, x, y), h.cassette) << name << " " << x << " " << y;
        }
      }
    }
  }
  // By hand: ESTIA (1535, 127) is cassette 95, (0, 0) cassette 0, (32, 64) cassette 49.
  Vmm3Config e;
  e.layout = Layout::Estia;
  EXPECT_EQ(cassetteOf(e, 1535, 127), 95U);
  EXPECT_EQ(cassetteOf(e, 0, 0), 0U);
  EXPECT_EQ(cassetteOf(e, 32, 64), 49U);
  Vmm3Config f;
  f.layout = Layout::Freia;
  EXPECT_EQ(cassetteOf(f, 63, 1023), 31U);
  EXPECT_EQ(cassetteOf(f, 0, 32), 1U);
}

TEST(Vmm3Geometry, CentreCoordinate) {
  // Rounded half away from zero (the ESS EFU's std::round), and 0 for a weightless centre.
  const std::vector<std::pair<double, uint16_t>> cases{
      {0.0, 0},       {0.49, 0},        {0.5, 1},  {1.5, 2},  {2.5, 3},     {286.5, 287},
      {1535.4, 1535}, {65535.0, 65535}, {-0.2, 0}, {-3.0, 0}, {70000.0, 0}, {std::nan(""), 0}};
  for (const auto &[centre, coord] : cases) {
    EXPECT_EQ(centreCoordinate(centre), coord) << centre;
  }
}

} // namespace
} // namespace efu::vmm3
