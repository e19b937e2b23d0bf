// SPDX-License-Identifier: BSD-2-Clause
// The cbm module: the 20-byte readout field by field (the ESS EFU's ParserTest.cpp data), every
// refusal of the parser, the geometry and the configuration, the histogram arithmetic (hand
// computed, and the ESS DA00HistogramSerializerTest.cpp cases under CBM's rules), the module
// in-process, and readoutgen's source against the module.
#include "common/readout/EssHeader.h"
#include "common/sdk/ModuleConfig.h"
#include "common/serialize/Da00.h"
#include "modules/cbm/CbmConfig.h"
#include "modules/cbm/CbmHistogram.h"
#include "modules/cbm/CbmModule.h"
#include "modules/cbm/CbmReadout.h"
#include "modules/cbm/CbmSource.h"
#include "tests/support/FakeModuleContext.h"
#include "tests/support/SourceDatagrams.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace efu::cbm {
namespace {

using readout::FakeModuleContext;
using readout::RecordedEvent;

const std::string kConfigs = std::string(EFU_SOURCE_DIR) + "/modules/cbm/configs/";
const std::string kEss = std::string(EFU_SOURCE_DIR) + "/tests/modules/cbm/ess/";

nlohmann::json validated(const nlohmann::json &config, const std::string &source = "t.json") {
  return validateModuleConfig("cbm", kCbmConfigKeys, kCbmConfigKeyCount, config, source);
}

nlohmann::json fileConfig(const std::string &path) {
  return validated(readConfigFile(path), path);
}

CbmReadout fromBytes(const std::vector<uint8_t> &bytes, size_t index = 0) {
  CbmReadout r;
  std::memcpy(&r, bytes.data() + index * kReadoutBytes, kReadoutBytes);
  return r;
}

// ---- the readout, field by field (ESS ParserTest.cpp data) ----------------------------------

// SADCTestData of the ESS ParserTest.cpp: the IBM payload's ADC and count.
const std::vector<uint8_t> kSadc{
    0x16, 0x00, 0x14, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00,
    0x00, 0x00, 0x02, 0x00, 0x01, 0x00, 0xFF, 0xFF, 0xFF, 0x00, // ADC 16777215, count 0
    0x16, 0x00, 0x14, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00,
    0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x10, 0x01, 0xA3, 0x4A}; // ADC 10682640, count 74

TEST(CbmReadout, FieldsAsTheEssParserTestReadsThem) {
  const CbmReadout a = fromBytes(kSadc, 0);
  EXPECT_EQ(a.fiber, 22);
  EXPECT_EQ(a.fen, 0);
  EXPECT_EQ(a.length, 20);
  EXPECT_EQ(a.timeHigh, 1U);
  EXPECT_EQ(a.timeLow, 1U);
  EXPECT_EQ(a.type, 2);
  EXPECT_EQ(a.channel, 0);
  EXPECT_EQ(a.adc, 0x0001);
  EXPECT_EQ(a.nadc(), 16777215U);
  EXPECT_EQ(a.mcaSum(), 0);
  const CbmReadout b = fromBytes(kSadc, 1);
  EXPECT_EQ(b.nadc(), 10682640U);
  EXPECT_EQ(b.mcaSum(), 74);
  // Good2DData: x = 0x00FF, y = 0x01FF.
  const CbmReadout c = fromBytes({0x16, 0x00, 0x14, 0x00, 1,    0,    0,    0,    1,    0,
                                  0,    0,    0x02, 0x00, 0x01, 0x00, 0xFF, 0x00, 0xFF, 0x01});
  EXPECT_EQ(c.x(), 255);
  EXPECT_EQ(c.y(), 511);
  // setNadc saturates at 24 bits (the ESS generator's setNADC).
  CbmReadout d{};
  d.setNadc(16777500, 3);
  EXPECT_EQ(d.nadc(), 0xFFFFFFU);
  d.setNadc(16776500, 3);
  EXPECT_EQ(d.nadc(), 16776500U);
  EXPECT_EQ(d.mcaSum(), 3);
}

TEST(CbmReadout, EveryParserRefusalInTheEssOrder) {
  CbmReadout ok{};
  ok.fiber = 22;
  ok.length = 20;
  ok.timeLow = readout::kMaxTicksLow; // DataBadFracTime's first readout: the largest legal
  ok.type = 1;
  EXPECT_EQ(checkReadout(ok), ReadoutError::Ok);
  struct Case {
    const char *what;
    void (*mutate)(CbmReadout &);
    ReadoutError expected;
  };
  const Case cases[] = {
      {"fiber 24", [](CbmReadout &r) { r.fiber = 24; }, ReadoutError::Fiber},
      {"FEN 34 (BadFENData)", [](CbmReadout &r) { r.fen = 34; }, ReadoutError::Fen},
      {"FEN 24", [](CbmReadout &r) { r.fen = 24; }, ReadoutError::Fen},
      {"length 21 (DataBadSize)", [](CbmReadout &r) { r.length = 21; }, ReadoutError::DataLength},
      {"length 19 (DataBadSize)", [](CbmReadout &r) { r.length = 19; }, ReadoutError::DataLength},
      {"time low 88052500 (DataBadFracTime)",
       [](CbmReadout &r) { r.timeLow = readout::kMaxTicksLow + 1; }, ReadoutError::TimeFrac},
      {"type 0 (DataBadType)", [](CbmReadout &r) { r.type = 0; }, ReadoutError::Type},
      {"type 4 (DataBadType)", [](CbmReadout &r) { r.type = 4; }, ReadoutError::Type},
      {"fiber and FEN: fiber first",
       [](CbmReadout &r) {
         r.fiber = 30;
         r.fen = 30;
       },
       ReadoutError::Fiber},
      {"length and type: length first",
       [](CbmReadout &r) {
         r.length = 0;
         r.type = 9;
       },
       ReadoutError::DataLength},
  };
  for (const Case &c : cases) {
    CbmReadout r = ok;
    c.mutate(r);
    EXPECT_EQ(checkReadout(r), c.expected) << c.what;
  }
}

// ---- configuration ---------------------------------------------------------------------------

TEST(CbmConfig, TheEssFilesLoadUnchanged) {
  const CbmConfig c = loadCbmConfig(kConfigs + "cbmtest.json");
  ASSERT_EQ(c.monitors.size(), 8U);
  EXPECT_EQ(c.maxTofNs, 1410065408); // 10000000000 read into 32 bits, as the ESS EFU does
  EXPECT_TRUE(c.maxTofWrapped);
  EXPECT_EQ(c.maxPulseTimeDiffNs, 1000000000);
  EXPECT_EQ(c.monitorRing, 11);
  EXPECT_EQ(c.maxRing, 11);
  EXPECT_EQ(c.maxFenId, 2);
  EXPECT_TRUE(c.normalizeIbm);
  // (FEN, Channel, Type, Source, Schema, PixelOffset, Width, Height, MaxTofBin, BinCount)
  using Row = std::tuple<int, int, MonitorType, std::string, Schema, int, int, int, int, int>;
  const Row rows[] = {
      {0, 0, MonitorType::Event0D, "cbm1", Schema::Ev44, 0, 0, 0, 0, 0},
      {0, 1, MonitorType::Event0D, "cbm2", Schema::Ev44, 1, 0, 0, 0, 0},
      {1, 0, MonitorType::Event0D, "cbm3", Schema::Ev44, 3, 0, 0, 0, 0},
      {1, 1, MonitorType::Ibm, "cbm4", Schema::Da00, 0, 0, 0, 10000, 100},
      {1, 2, MonitorType::Ibm, "cbm5", Schema::Da00, 0, 0, 0, 10000, 100},
      {2, 1, MonitorType::Ibm, "cbm6", Schema::Da00, 0, 0, 0, 10000, 100},
      {2, 0, MonitorType::Event2D, "cbm7", Schema::Ev44, 1024, 512, 512, 0, 0},
      {2, 2, MonitorType::Event2D, "cbm8", Schema::Ev44, 0, 512, 512, 0, 0},
  };
  for (size_t i = 0; i < std::size(rows); ++i) {
    const Monitor &m = c.monitors[i];
    const auto &[fen, ch, type, source, schema, offset, w, h, maxTof, bins] = rows[i];
    EXPECT_EQ(m.fen, fen) << i;
    EXPECT_EQ(m.channel, ch) << i;
    EXPECT_EQ(m.type, type) << i;
    EXPECT_EQ(m.source, source) << i;
    EXPECT_EQ(m.schema, schema) << i;
    EXPECT_EQ(m.pixelOffset, offset) << i;
    EXPECT_EQ(m.width, w) << i;
    EXPECT_EQ(m.height, h) << i;
    EXPECT_EQ(m.maxTofBin, maxTof) << i;
    EXPECT_EQ(m.binCount, bins) << i;
    EXPECT_EQ(m.aggregatedFrames, 1) << i;
    EXPECT_EQ(m.aggregation, Aggregation::Sum) << i;
    EXPECT_EQ(c.slot(m.fen, m.channel), static_cast<int16_t>(i));
  }
  EXPECT_EQ(c.slot(0, 2), -1);
  // The other shipped files, and the ESS test files (CbmBaseTest's and ConfigTest's).
  EXPECT_EQ(loadCbmConfig(kConfigs + "cbm2Dtest.json").monitors.at(0).width, 512);
  const CbmConfig ibm = loadCbmConfig(kConfigs + "ibmtest.json");
  EXPECT_EQ(ibm.monitors.at(0).binWidth(), 139508); // 71428572 / 512, integer ns
  const CbmConfig utgaard = loadCbmConfig(kConfigs + "utgaard_ibm_test.json");
  EXPECT_EQ(utgaard.monitors.at(0).schema, Schema::Ev44); // an IBM as events
  EXPECT_EQ(utgaard.monitorRing, 0);
  EXPECT_EQ(loadCbmConfig(kEss + "cbm_base_test.json").monitors.size(), 9U);
  const CbmConfig t = loadCbmConfig(kEss + "cbm_config_test.json");
  EXPECT_EQ(t.monitors.size(), 3U);
  EXPECT_EQ(t.maxTofNs, 1000000000);
  EXPECT_EQ(t.monitorRing, 11); // the default
}

void expectRefused(const nlohmann::json &config, const std::string &message) {
  try {
    (void)parseCbmConfig(validated(config), "t.json");
    ADD_FAILURE() << "accepted: " << config.dump() << " (expected: " << message << ")";
  } catch (const sdk::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
        << e.what() << "\nexpected: " << message;
  }
}

nlohmann::json baseConfig(nlohmann::json entry) {
  return {{"Detector", "CBM"}, {"MaxFENId", 2}, {"Topology", nlohmann::json::array({entry})}};
}

TEST(CbmConfig, EveryRefusalNamesFileKeyAndValue) {
  const nlohmann::json zeroD = {{"FEN", 0},      {"Channel", 0},     {"Type", "EVENT_0D"},
                                {"Source", "a"}, {"Schema", "ev44"}, {"PixelOffset", 0}};
  const nlohmann::json twoD = {{"FEN", 0},      {"Channel", 0},     {"Type", "EVENT_2D"},
                               {"Source", "a"}, {"Schema", "ev44"}, {"Width", 4},
                               {"Height", 4}};
  const nlohmann::json ibm = {{"FEN", 0},      {"Channel", 0},     {"Type", "IBM"},
                              {"Source", "a"}, {"Schema", "da00"}, {"MaxTofBin", 100},
                              {"BinCount", 10}};
  auto with = [](nlohmann::json e, const char *key, nlohmann::json v) {
    e[key] = std::move(v);
    return e;
  };
  auto without = [](nlohmann::json e, const char *key) {
    e.erase(key);
    return e;
  };
  nlohmann::json c = baseConfig(zeroD);
  c["Detector"] = "LOKI";
  expectRefused(c, "t.json: Detector = \"LOKI\": the ESS beam monitor files say \"CBM\"");
  c = baseConfig(zeroD);
  c["Topology"] = nlohmann::json::array();
  expectRefused(c, "t.json: Topology = []: no monitors");
  expectRefused(baseConfig(42), "t.json: Topology[0] = 42: expected an object");
  expectRefused(baseConfig(with(zeroD, "Colour", 1)),
                "t.json: Topology[0].Colour = 1: unknown key");
  expectRefused(baseConfig(without(zeroD, "FEN")), "t.json: Topology[0] = ");
  expectRefused(baseConfig(with(zeroD, "FEN", 3)),
                "t.json: Topology[0].FEN = 3: expected an integer in [0, 2]");
  expectRefused(baseConfig(with(zeroD, "Channel", 256)), "t.json: Topology[0].Channel = 256");
  expectRefused(baseConfig(with(zeroD, "Type", "EVENT_1D")),
                "t.json: Topology[0].Type = \"EVENT_1D\": expected EVENT_0D, EVENT_2D or IBM");
  expectRefused(baseConfig(with(zeroD, "Source", "")), "t.json: Topology[0].Source = \"\"");
  // The ESS EFU needs a Schema on every entry: its amor_onsite_ibm.json is refused (below).
  expectRefused(baseConfig(without(zeroD, "Schema")),
                "t.json: Topology[0] = {\"Channel\":0,\"FEN\":0,\"PixelOffset\":0,\"Source\":\"a\","
                "\"Type\":\"EVENT_0D\"}: missing key 'Schema'");
  expectRefused(baseConfig(with(zeroD, "Schema", "hs01")),
                "t.json: Topology[0].Schema = \"hs01\": expected ev44 or da00");
  expectRefused(baseConfig(with(zeroD, "Schema", "da00")),
                "t.json: Topology[0].Schema = \"da00\": an EVENT_0D monitor has no histogram bins");
  expectRefused(baseConfig(without(zeroD, "PixelOffset")),
                "a EVENT_0D monitor needs 'PixelOffset'");
  expectRefused(baseConfig(without(twoD, "Width")), "a EVENT_2D monitor needs 'Width'");
  expectRefused(baseConfig(without(twoD, "Height")), "a EVENT_2D monitor needs 'Height'");
  expectRefused(baseConfig(with(twoD, "Width", 65536)),
                "t.json: Topology[0].Width = 65536: expected 0..65535");
  expectRefused(baseConfig(with(twoD, "Height", -1)),
                "t.json: Topology[0].Height = -1: expected 0..65535");
  expectRefused(baseConfig(with(twoD, "Schema", "da00")),
                "t.json: Topology[0].Schema = \"da00\": an EVENT_2D monitor publishes events");
  expectRefused(baseConfig(with(twoD, "PixelOffset", -1)),
                "t.json: Topology[0].PixelOffset = -1: expected 0 or more");
  expectRefused(baseConfig(without(ibm, "MaxTofBin")), "a IBM monitor needs 'MaxTofBin'");
  expectRefused(baseConfig(without(ibm, "BinCount")), "a IBM monitor needs 'BinCount'");
  expectRefused(baseConfig(with(ibm, "BinCount", 0)),
                "t.json: Topology[0].BinCount = 0: expected 1 or more");
  expectRefused(baseConfig(with(ibm, "MaxTofBin", 9)),
                "t.json: Topology[0].MaxTofBin = 9: must be at least BinCount (10)");
  expectRefused(baseConfig(with(ibm, "AggregationMode", 2)),
                "t.json: Topology[0].AggregationMode = 2: expected 0 (sum) or 1 (average)");
  expectRefused(baseConfig(with(ibm, "AggregatedFrames", 0)),
                "t.json: Topology[0].AggregatedFrames = 0: expected 1..255");
  expectRefused(baseConfig(with(ibm, "AggregatedFrames", 256)),
                "t.json: Topology[0].AggregatedFrames = 256: expected 1..255");
  c = baseConfig(zeroD);
  c["Topology"].push_back(with(zeroD, "Source", "b"));
  expectRefused(c, "t.json: Topology[1] = ");
  expectRefused(c, "FEN 0 Channel 0 is Topology[0] already");
  c = baseConfig(ibm);
  c["Topology"].push_back(with(zeroD, "Channel", 1));
  expectRefused(c, "t.json: Topology[1].Source = \"a\": Topology[0] has this source too");
  // Two event monitors may share a source (one ev44 stream).
  c = baseConfig(zeroD);
  c["Topology"].push_back(with(zeroD, "Channel", 1));
  EXPECT_EQ(parseCbmConfig(validated(c), "t.json").monitors.size(), 2U);
}

TEST(CbmConfig, TheFilesTheEssEfuRefusesAreRefused) {
  try {
    (void)loadCbmConfig(kEss + "amor_onsite_ibm.json");
    ADD_FAILURE() << "amor_onsite_ibm.json accepted";
  } catch (const sdk::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("amor_onsite_ibm.json: Topology[0] = "), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("missing key 'Schema'"), std::string::npos) << e.what();
  }
  try {
    (void)loadCbmConfig(kEss + "utgaard_ttl_test.json");
    ADD_FAILURE() << "utgaard_ttl_test.json accepted";
  } catch (const sdk::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("utgaard_ttl_test.json: Topology[1].Schema = \"da00\""),
              std::string::npos)
        << e.what();
  }
}

// ---- the histogram ---------------------------------------------------------------------------

Monitor ibmMonitor(int32_t maxTofBin, int32_t bins, uint8_t frames = 1,
                   Aggregation a = Aggregation::Sum) {
  Monitor m;
  m.type = MonitorType::Ibm;
  m.schema = Schema::Da00;
  m.source = "h";
  m.maxTofBin = maxTofBin;
  m.binCount = bins;
  m.aggregatedFrames = frames;
  m.aggregation = a;
  return m;
}

template <class T> std::vector<T> dataOf(const sdk::DataVariable &v) {
  std::vector<T> out(v.data.size() / sizeof(T));
  std::memcpy(out.data(), v.data.data(), v.data.size());
  return out;
}

TEST(CbmHistogram, EdgesBinsAndDropsByHand) {
  // 71428572 / 512 = 139508.93: edges every 139508 ns, the last at 71428096 (ibmtest.json).
  TofHistogram wide(ibmMonitor(71428572, 512));
  EXPECT_EQ(wide.edges().size(), 513U);
  EXPECT_EQ(wide.edges()[1], 139508);
  EXPECT_EQ(wide.edges()[512], 71428096);
  EXPECT_EQ(wide.add(71428095, 1), TofHistogram::Added::Binned);  // bin 511
  EXPECT_EQ(wide.add(71428096, 1), TofHistogram::Added::OverMax); // bin 512: dropped
  EXPECT_EQ(wide.add(-1, 1), TofHistogram::Added::BeforeOffset);

  TofHistogram h(ibmMonitor(10000, 100)); // cbmtest.json's: 100 bins of 100 ns
  h.advance(1000);
  EXPECT_EQ(h.add(0, 5), TofHistogram::Added::Binned);     // bin 0
  EXPECT_EQ(h.add(99, 7), TofHistogram::Added::Binned);    // bin 0
  EXPECT_EQ(h.add(100, 11), TofHistogram::Added::Binned);  // bin 1
  EXPECT_EQ(h.add(9999, 13), TofHistogram::Added::Binned); // bin 99
  EXPECT_EQ(h.add(10000, 17), TofHistogram::Added::OverMax);
  EXPECT_FALSE(h.completes(1000)); // the same pulse
  EXPECT_TRUE(h.completes(2000));
  ASSERT_TRUE(h.take());
  const auto v = h.variables();
  EXPECT_EQ(v[0].name, "frame_time");
  EXPECT_EQ(v[0].unit, "ns");
  EXPECT_EQ(v[0].shape[0], 101);
  EXPECT_EQ(v[0].type, sdk::DataType::Int32);
  EXPECT_EQ(dataOf<int32_t>(v[0])[100], 10000);
  EXPECT_EQ(v[1].name, "signal");
  EXPECT_EQ(v[1].unit, "A");
  EXPECT_EQ(v[1].axes[0], "frame_time");
  const auto signal = dataOf<int32_t>(v[1]);
  ASSERT_EQ(signal.size(), 100U);
  EXPECT_EQ(signal[0], 12);
  EXPECT_EQ(signal[1], 11);
  EXPECT_EQ(signal[99], 13);
  EXPECT_EQ(std::count(signal.begin(), signal.end(), 0), 97);
  EXPECT_EQ(v[2].name, "reference_time");
  EXPECT_EQ(v[2].axes[0], "reference_time");
  EXPECT_EQ(dataOf<int32_t>(v[2]), std::vector<int32_t>{0});
  EXPECT_EQ(v[3].name, "frame_total");
  EXPECT_EQ(v[3].unit, "counts");
  EXPECT_EQ(v[3].type, sdk::DataType::UInt64);
  EXPECT_EQ(dataOf<uint64_t>(v[3]), std::vector<uint64_t>{36}); // binned values only
  EXPECT_EQ(h.timestampNs(), 1000);
  h.advance(2000);
  EXPECT_FALSE(h.take()) << "emptied by the previous take(): nothing to publish";
}

TEST(CbmHistogram, EssIntegerBinning) {
  // DA00HistogramSerializerTest.cpp TestIntegerBinning: period 20, 2 bins, entries
  // (3, 0), (8, 1), (12, 1) → signal {1, 1}, reference_time {0}, frame_total {2}.
  TofHistogram h(ibmMonitor(20, 2));
  h.advance(10'000'000'000);
  for (const auto &[t, v] : std::map<int, int>{{3, 0}, {8, 1}, {12, 1}}) {
    h.add(t, v);
  }
  ASSERT_TRUE(h.take());
  const auto v = h.variables();
  EXPECT_EQ(dataOf<int32_t>(v[1]), (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(dataOf<int32_t>(v[2]), std::vector<int32_t>{0});
  EXPECT_EQ(dataOf<uint64_t>(v[3]), std::vector<uint64_t>{2});
}

/// DA00HistogramSerializerTest.cpp TestBufferAggregatedPulsesCalls / TestBufferAveraged...:
/// 10 bins of 100 ns, 10 frames per message; per pulse (300, 10), (800, 9), (1200, 8), pulses
/// 9994 ns apart (the ESS test's ESSTime steps). Under CBM's Drop strategy 1200 is dropped
/// (the ESS test uses LastBin, which the CBM module never does).
struct AggregationCase {
  Aggregation mode;
  std::vector<int32_t> signal;
};
class CbmHistogramAggregation : public ::testing::TestWithParam<AggregationCase> {};

TEST_P(CbmHistogramAggregation, TenFramesPerMessage) {
  TofHistogram h(ibmMonitor(1000, 10, 10, GetParam().mode));
  int64_t pulse = 0;
  h.advance(pulse);
  int published = 0;
  for (int i = 0; i < 10; ++i) {
    for (const auto &[t, v] : std::map<int, int>{{300, 10}, {800, 9}, {1200, 8}}) {
      h.add(t, v);
    }
    pulse += 9994;
    if (h.completes(pulse)) {
      ASSERT_TRUE(h.take());
      ++published;
      const auto v = h.variables();
      EXPECT_EQ(dataOf<int32_t>(v[1]), GetParam().signal);
      EXPECT_EQ(dataOf<int32_t>(v[2]), (std::vector<int32_t>{0, 9994, 19988, 29982, 39976, 49970,
                                                             59964, 69958, 79952, 89946}));
      EXPECT_EQ(dataOf<uint64_t>(v[3]), std::vector<uint64_t>(10, 19));
      EXPECT_EQ(h.timestampNs(), 9 * 9994);
    }
    h.advance(pulse);
    EXPECT_EQ(published, i == 9 ? 1 : 0) << i;
  }
  // The next message starts afresh; its first frame's offset continues from the run's start.
  h.add(700, 10);
  for (int i = 0; i < 10; ++i) {
    pulse += 9994;
    if (h.completes(pulse)) {
      ASSERT_TRUE(h.take());
      const auto v = h.variables();
      std::vector<int32_t> signal(10, 0);
      signal[7] = 10;
      EXPECT_EQ(dataOf<int32_t>(v[1]), signal);
      EXPECT_EQ(dataOf<int32_t>(v[2])[0], 10 * 9994);
      EXPECT_EQ(dataOf<uint64_t>(v[3])[0], 10U);
      ++published;
    }
    h.advance(pulse);
  }
  EXPECT_EQ(published, 2);
}

INSTANTIATE_TEST_SUITE_P(
    Ess, CbmHistogramAggregation,
    ::testing::Values(AggregationCase{Aggregation::Sum, {0, 0, 0, 100, 0, 0, 0, 0, 90, 0}},
                      AggregationCase{Aggregation::Average, {0, 0, 0, 10, 0, 0, 0, 0, 9, 0}}));

TEST(CbmHistogram, AverageIsTheIntegerMeanAndReferenceTimeWrapsAsInt32) {
  TofHistogram h(ibmMonitor(100, 1, 1, Aggregation::Average));
  h.advance(0);
  h.add(5, 10);
  h.add(6, 11);
  h.add(7, 11);
  ASSERT_TRUE(h.take());
  EXPECT_EQ(dataOf<int32_t>(h.variables()[1]), std::vector<int32_t>{10}); // 32 / 3
  // reference_time accumulates pulse gaps as int32: 3 s after the first pulse it has wrapped.
  h.advance(1'500'000'000);
  h.advance(3'000'000'000);
  h.add(1, 1);
  ASSERT_TRUE(h.take());
  EXPECT_EQ(dataOf<int32_t>(h.variables()[2]),
            std::vector<int32_t>{static_cast<int32_t>(3'000'000'000LL - 4'294'967'296LL)});
}

// The start-time check's size (issue 37 item 3) is an upper bound of what the builder writes,
// at most 16 bytes above it, for every residue of the bin count, the frames and the source
// name's length modulo 8 (what the flatbuffer's padding depends on) and for large histograms.
TEST(CbmHistogram, MessageBytesBoundTheSerialisedMessage) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<int32_t> binCounts{512, 4099};
  std::vector<int> frameCounts{127, 255};
  std::vector<size_t> sourceLengths{64, 255, 1000};
  for (int i = 1; i <= 17; ++i) {
    binCounts.push_back(i);
    frameCounts.push_back(i);
    sourceLengths.push_back(static_cast<size_t>(i));
  }
  // Two large ones, with every residue of the frames and the source name.
  for (const int32_t bins : {127'044, 200'001}) {
    for (int r = 1; r <= 8; ++r) {
      Monitor m = ibmMonitor(bins, bins, static_cast<uint8_t>(r));
      m.source = std::string(static_cast<size_t>(r), 's');
      const TofHistogram h(m);
      const auto variables = h.variables();
      const uint64_t real = serialize::buildDa00(fbb, m.source, 0, variables).size();
      ASSERT_GE(TofHistogram::messageBytes(m), real) << bins << " " << r;
      ASSERT_LE(TofHistogram::messageBytes(m), real + 16) << bins << " " << r;
    }
  }
  for (const int32_t bins : binCounts) {
    for (const int frames : frameCounts) {
      for (const size_t length : sourceLengths) {
        Monitor m = ibmMonitor(bins * 3, bins, static_cast<uint8_t>(frames));
        m.source = std::string(length, 's');
        const TofHistogram h(m);
        const auto variables = h.variables();
        const uint64_t real =
            serialize::buildDa00(fbb, m.source, h.timestampNs(), variables).size();
        ASSERT_GE(TofHistogram::messageBytes(m), real) << bins << " " << frames << " " << length;
        ASSERT_LE(TofHistogram::messageBytes(m), real + 16)
            << bins << " " << frames << " " << length;
        EXPECT_EQ(TofHistogram::memoryBytes(m),
                  16U * static_cast<uint64_t>(bins) + 4 + 12U * static_cast<uint64_t>(frames));
      }
    }
  }
}

// ---- the module ------------------------------------------------------------------------------

/// Datagrams of CBM readouts for one pulse.
struct Datagram {
  std::vector<uint8_t> bytes;
  Datagram(readout::EssTime pulse, readout::EssTime prev, uint32_t seq = 0) {
    bytes.resize(30);
    readout::HeaderFields f;
    f.detectorType = readout::kTypeCbm;
    f.pulse = pulse;
    f.prevPulse = prev;
    f.seqNum = seq;
    readout::writeHeader(bytes, f);
  }
  Datagram &add(const CbmReadout &r) {
    const size_t at = bytes.size();
    bytes.resize(at + kReadoutBytes);
    std::memcpy(bytes.data() + at, &r, kReadoutBytes);
    return *this;
  }
  sdk::Packet packet() {
    const auto size = static_cast<uint16_t>(bytes.size());
    std::memcpy(bytes.data() + 6, &size, 2);
    return sdk::Packet{bytes.data(), static_cast<uint32_t>(bytes.size()), 0, 0};
  }
};

CbmReadout readoutOf(uint8_t fen, uint8_t channel, uint8_t type, readout::EssTime t,
                     uint8_t fiber = 22) {
  CbmReadout r{};
  r.fiber = fiber;
  r.fen = fen;
  r.length = 20;
  r.timeHigh = t.high;
  r.timeLow = t.low;
  r.type = type;
  r.channel = channel;
  return r;
}

class CbmModuleTest : public ::testing::Test {
protected:
  void SetUp() override {
    ctx_ =
        std::make_unique<FakeModuleContext>(fileConfig(kConfigs + "cbmtest.json"), "cbmtest.json");
    module_ = std::make_unique<CbmModule>(*ctx_);
  }
  std::unique_ptr<FakeModuleContext> ctx_;
  std::unique_ptr<CbmModule> module_;
  const readout::EssTime pulse_{1000, 0};
  const readout::EssTime prev_{999, 80'000'000};
  const int64_t pulseNs_ = 1000LL * 1'000'000'000;
  readout::EssTime at(uint32_t ticks) const { return {pulse_.high, pulse_.low + ticks}; }
};

TEST_F(CbmModuleTest, EventsPerSourceWithTheEssPixels) {
  Datagram d(pulse_, prev_);
  d.add(readoutOf(0, 0, 1, at(100))); // cbm1: pixel 0 (PixelOffset 0: a pixel error)
  d.add(readoutOf(0, 1, 1, at(200))); // cbm2: pixel 1
  d.add(readoutOf(1, 0, 1, at(300))); // cbm3: pixel 3
  CbmReadout r7 = readoutOf(2, 0, 2, at(400));
  r7.setPosition(5, 2); // cbm7: 2 * 512 + 5 + 1 + 1024
  d.add(r7);
  CbmReadout r8 = readoutOf(2, 2, 2, at(500), 23); // fiber 23: ring 11 too
  r8.setPosition(511, 511);                        // cbm8: 511 * 512 + 511 + 1
  d.add(r8);
  module_->process(d.packet());
  const auto ev = [&](uint32_t ticks, int32_t pixel) {
    return RecordedEvent{pulseNs_, static_cast<int32_t>(readout::ticksToNs(1000, ticks) - pulseNs_),
                         pixel};
  };
  EXPECT_EQ(ctx_->sources["cbm1"].events, std::vector<RecordedEvent>{ev(100, 0)});
  EXPECT_EQ(ctx_->sources["cbm2"].events, std::vector<RecordedEvent>{ev(200, 1)});
  EXPECT_EQ(ctx_->sources["cbm3"].events, std::vector<RecordedEvent>{ev(300, 3)});
  EXPECT_EQ(ctx_->sources["cbm7"].events,
            std::vector<RecordedEvent>{ev(400, 2 * 512 + 5 + 1 + 1024)});
  EXPECT_EQ(ctx_->sources["cbm8"].events, std::vector<RecordedEvent>{ev(500, 511 * 512 + 512)});
  EXPECT_TRUE(ctx_->sink.events.empty());
  EXPECT_EQ(ctx_->value("parser.readout.count"), 5);
  EXPECT_EQ(ctx_->value("parser.readout.0d"), 3);
  EXPECT_EQ(ctx_->value("parser.readout.2d"), 2);
  EXPECT_EQ(ctx_->value("parser.readout.ibm"), 0);
  EXPECT_EQ(ctx_->value("readouts.processed"), 5);
  EXPECT_EQ(ctx_->value("events.event0d"), 3);
  EXPECT_EQ(ctx_->value("events.event2d"), 2);
  EXPECT_EQ(ctx_->value("events.count"), 5);
  EXPECT_EQ(ctx_->value("geometry.pixel_errors"), 1);
  EXPECT_EQ(ctx_->value("geometry.validation_errors"), 0);
  EXPECT_EQ(ctx_->value("events.timestamp.tof.count"), 5);
}

TEST_F(CbmModuleTest, IbmReadoutsBecomeOneHistogramPerPulse) {
  Datagram d(pulse_, prev_);
  CbmReadout a = readoutOf(1, 1, 3, at(1));    // cbm4; tof 11 ns: bin 0
  a.setNadc(1000, 4);                          // normalised: 250
  CbmReadout b = readoutOf(1, 1, 3, at(10));   // tof 113 ns: bin 1
  b.setNadc(77, 0);                            // count 0: not divided
  CbmReadout c = readoutOf(1, 1, 3, at(1000)); // tof 11356 ns: beyond 100 bins of 100 ns
  c.setNadc(5, 1);
  CbmReadout e = readoutOf(2, 1, 3, at(2)); // cbm6; tof 22 ns: bin 0
  e.setNadc(9, 2);                          // 4
  d.add(a).add(b).add(c).add(e);
  module_->process(d.packet());
  EXPECT_TRUE(ctx_->arrays["cbm4"].arrays.empty()) << "published when the next pulse comes";
  // The entry past the last bin is no event (issue 37 item 4: it was counted as one).
  EXPECT_EQ(ctx_->value("events.ibm"), 3);
  EXPECT_EQ(ctx_->value("events.count"), 3);
  EXPECT_EQ(ctx_->value("events.ibm_npos_sum"), 250 + 77 + 4);
  EXPECT_EQ(ctx_->value("serialize.cbm4.tof_over_max_dropped"), 1);
  EXPECT_EQ(ctx_->value("readouts.processed"), 4) << "= events + dropped entries";
  // A heartbeat of the next pulse closes the frame of every histogram with entries.
  Datagram next({1000, 6'289'464}, pulse_, 1);
  module_->process(next.packet());
  EXPECT_EQ(ctx_->value("parser.readout.errors.no_data"), 1);
  ASSERT_EQ(ctx_->arrays["cbm4"].arrays.size(), 1U);
  const auto &h = ctx_->arrays["cbm4"].arrays[0];
  EXPECT_EQ(h.timestampNs, pulseNs_);
  ASSERT_EQ(h.variables.size(), 4U);
  EXPECT_EQ(h.variables[0].name, "frame_time");
  EXPECT_EQ(h.variables[1].name, "signal");
  EXPECT_EQ(h.variables[2].name, "reference_time");
  EXPECT_EQ(h.variables[3].name, "frame_total");
  const auto signal = h.at("signal").as<int32_t>();
  EXPECT_EQ(signal[0], 250);
  EXPECT_EQ(signal[1], 77);
  EXPECT_EQ(h.at("frame_total").as<uint64_t>(), std::vector<uint64_t>{327});
  EXPECT_EQ(h.at("reference_time").as<int32_t>(), std::vector<int32_t>{0});
  ASSERT_EQ(ctx_->arrays["cbm6"].arrays.size(), 1U);
  EXPECT_EQ(ctx_->arrays["cbm6"].arrays[0].at("signal").as<int32_t>()[0], 4);
  EXPECT_TRUE(ctx_->arrays["cbm5"].arrays.empty()) << "an empty histogram is not published";
  EXPECT_EQ(ctx_->value("serialize.cbm5.produce_called"), 1);
  EXPECT_EQ(ctx_->value("serialize.cbm5.produce_triggered_reftime"), 1);
  EXPECT_EQ(ctx_->value("serialize.cbm5.histograms"), 0);
  EXPECT_EQ(ctx_->value("serialize.cbm4.histograms"), 1);
  // At shutdown the current pulse's histogram is published as the next pulse would.
  Datagram third({1000, 6'289'464}, pulse_, 2);
  CbmReadout f = readoutOf(1, 1, 3, {1000, 6'289'465});
  f.setNadc(3, 1);
  third.add(f);
  module_->process(third.packet());
  module_->flush();
  ASSERT_EQ(ctx_->arrays["cbm4"].arrays.size(), 2U);
  EXPECT_EQ(ctx_->arrays["cbm4"].arrays[1].timestampNs, readout::ticksToNs(1000, 6'289'464));
  EXPECT_EQ(
      ctx_->arrays["cbm4"].arrays[1].at("reference_time").as<int32_t>(),
      std::vector<int32_t>{static_cast<int32_t>(readout::ticksToNs(1000, 6'289'464) - pulseNs_)});
}

TEST_F(CbmModuleTest, EveryRefusalIsCountedOnce) {
  Datagram d(pulse_, prev_);
  d.add(readoutOf(0, 0, 1, at(1), 24)); // parser: fiber
  d.add(readoutOf(24, 0, 1, at(1)));    // parser: FEN
  CbmReadout len = readoutOf(0, 0, 1, at(1));
  len.length = 21;
  d.add(len);                                                   // parser: datalen
  d.add(readoutOf(0, 0, 1, {1000, readout::kMaxTicksLow + 1})); // parser: timefrac
  d.add(readoutOf(0, 0, 4, at(1)));                             // parser: type
  d.add(readoutOf(0, 0, 1, at(1), 20));                         // ring 10: monitor ring mismatch
  d.add(readoutOf(3, 0, 1, at(1)));                             // FEN 3 > MaxFENId 2
  d.add(readoutOf(0, 2, 1, at(1)));                             // (0, 2): no topology
  d.add(readoutOf(0, 0, 3, at(1))); // IBM on a 0D channel: type mismatch
  CbmReadout x = readoutOf(2, 0, 2, at(1));
  x.setPosition(512, 0);
  d.add(x); // xpos
  CbmReadout y = readoutOf(2, 0, 2, at(1));
  y.setPosition(0, 512);
  d.add(y);                                     // ypos
  d.add(readoutOf(0, 1, 1, {999, 0}));          // before the previous pulse: prevtof.negative
  d.add(readoutOf(0, 1, 1, {1002, 0}));         // 2 s after the pulse > MaxTOFNS 1.41 s: tof.high
  d.add(readoutOf(0, 1, 1, {999, 80'000'001})); // before the pulse: from the previous one
  module_->process(d.packet());
  for (const char *name :
       {"parser.readout.errors.fiber", "parser.readout.errors.fen", "parser.readout.errors.datalen",
        "parser.readout.errors.timefrac", "parser.readout.errors.type",
        "geometry.monitor_ring_mismatch_errors", "geometry.fen_errors", "geometry.topology_errors",
        "geometry.type_mismatch_errors", "geometry.xpos_errors", "geometry.ypos_errors",
        "events.timestamp.prevtof.negative", "events.timestamp.tof.high",
        "events.timestamp.prevtof.count"}) {
    EXPECT_EQ(ctx_->value(name), 1) << name;
  }
  EXPECT_EQ(ctx_->value("geometry.ring_errors"), 0);
  EXPECT_EQ(ctx_->value("geometry.validation_errors"), 6);
  EXPECT_EQ(ctx_->value("parser.readout.count"), 14);
  EXPECT_EQ(ctx_->value("readouts.processed"), 1);
  // The previous-pulse event is published with the previous pulse as its reference.
  ASSERT_EQ(ctx_->sources["cbm2"].events.size(), 1U);
  EXPECT_EQ(ctx_->sources["cbm2"].events[0].pulseTimeNs, readout::ticksToNs(999, 80'000'000));
  // Whole-payload refusals and the header's.
  Datagram odd(pulse_, prev_, 1);
  odd.bytes.resize(odd.bytes.size() + 19);
  module_->process(odd.packet());
  EXPECT_EQ(ctx_->value("parser.readout.errors.size"), 1);
  Datagram wrongType(pulse_, prev_, 2);
  wrongType.bytes[5] = readout::kTypeLoki;
  module_->process(wrongType.packet());
  EXPECT_EQ(ctx_->value("parser.essheader.errors.type"), 1);
  Datagram gap({1002, 0}, {1000, 0}, 3); // 2 s > MaxPulseTimeDiffNS 1 s
  module_->process(gap.packet());
  EXPECT_EQ(ctx_->value("parser.essheader.errors.timehigh"), 1);
}

// The module's tables (type, (fiber, FEN), Topology targets) against the functions they stand
// for: random readouts over every field's range, judged one by one by checkReadout(),
// checkGeometry(), pixel2D() and ibmValue(), give the same events per source and the same
// counters. Two files: the ESS test file, and one with MaxRing below the largest ring, a ring
// other than 11, IBM on ev44 and no normalising.
nlohmann::json tablesConfig(int which) {
  if (which == 0) {
    return fileConfig(kConfigs + "cbmtest.json");
  }
  return validated(nlohmann::json::parse(R"({
    "Detector": "CBM", "MaxFENId": 3, "MonitorRing": 4, "MaxRing": 6,
    "NormalizeIBMReadouts": false,
    "Topology": [
      {"FEN": 0, "Channel": 0, "Type": "EVENT_2D", "Source": "a", "Schema": "ev44",
       "PixelOffset": 5, "Width": 16, "Height": 8},
      {"FEN": 1, "Channel": 3, "Type": "IBM", "Source": "b", "Schema": "ev44",
       "MaxTofBin": 10000, "BinCount": 100},
      {"FEN": 3, "Channel": 0, "Type": "EVENT_0D", "Source": "c", "Schema": "ev44",
       "PixelOffset": 0},
      {"FEN": 2, "Channel": 2, "Type": "IBM", "Source": "d", "Schema": "da00",
       "MaxTofBin": 10000, "BinCount": 100}]})"));
}

TEST(CbmModule, RandomReadoutsAgreeWithTheReadoutAndGeometryFunctions) {
  for (int which = 0; which < 2; ++which) {
    SCOPED_TRACE(which == 0 ? "cbmtest.json" : "MaxRing 6, MonitorRing 4");
    const nlohmann::json json = tablesConfig(which);
    const CbmConfig config = parseCbmConfig(json, "t.json");
    FakeModuleContext ctx(json, "t.json");
    CbmModule module(ctx);
    const readout::EssTime pulse{1000, 0};
    const int64_t pulseNs = readout::ticksToNs(1000, 0);
    std::mt19937 rng(20261205 + which);
    const auto pick = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
    std::map<std::string, std::vector<RecordedEvent>> want;
    std::map<std::string, int64_t> counts;
    for (uint32_t seq = 0; seq < 40; ++seq) {
      Datagram d(pulse, {999, 80'000'000}, seq);
      for (int i = 0; i < 300; ++i) {
        // Mostly near the configured values, so that every check both passes and fails.
        const auto fiber = static_cast<uint8_t>(pick(2) ? 2 * config.monitorRing + pick(2)
                                                        : pick(kMaxFiber + 1));
        const auto fen = static_cast<uint8_t>(pick(2) ? pick(config.maxFenId + 2)
                                                      : pick(kMaxFen + 1));
        const auto channel = static_cast<uint8_t>(pick(4));
        const auto type = static_cast<uint8_t>(pick(8) == 0 ? pick(256) : 1 + pick(3));
        const uint32_t ticks = pick(100); // well within every histogram's range
        CbmReadout r = readoutOf(fen, channel, type, {pulse.high, ticks}, fiber);
        if (type == static_cast<uint8_t>(MonitorType::Ibm)) {
          r.setNadc(pick(1U << 24), static_cast<uint8_t>(pick(4) == 0 ? 0 : pick(256)));
        } else {
          r.setPosition(static_cast<uint16_t>(pick(pick(4) != 0 ? 20 : 600)),
                        static_cast<uint16_t>(pick(pick(4) != 0 ? 10 : 600)));
        }
        d.add(r);
        if (checkReadout(r) != ReadoutError::Ok) {
          ++counts["parser.readout.errors.type"]; // the only parser refusal drawn here
          continue;
        }
        int16_t slot = -1;
        const GeometryError e = checkGeometry(config, r, slot);
        if (e != GeometryError::Count_) {
          ++counts[geometryErrorCounter(e)];
          ++counts["geometry.validation_errors"];
          continue;
        }
        const Monitor &m = config.monitors[static_cast<size_t>(slot)];
        const auto tof = static_cast<int32_t>(readout::ticksToNs(pulse.high, ticks) - pulseNs);
        if (m.type == MonitorType::Ibm) {
          ++counts["events.ibm"];
          counts["events.ibm_npos_sum"] += ibmValue(r, config.normalizeIbm);
          if (m.schema == Schema::Da00) {
            continue; // into the pulse's histogram
          }
        }
        int32_t pixel = m.pixelOffset;
        if (m.type == MonitorType::Event2D) {
          pixel = static_cast<int32_t>(pixel2D(m, r.x(), r.y()));
        } else if (m.type == MonitorType::Ibm) {
          pixel = static_cast<int32_t>(ibmValue(r, config.normalizeIbm));
        } else if (pixel == 0) {
          ++counts["geometry.pixel_errors"];
        }
        want[m.source].push_back(RecordedEvent{pulseNs, tof, pixel});
      }
      module.process(d.packet());
    }
    for (const char *name :
         {"parser.readout.errors.type", "geometry.ring_errors",
          "geometry.monitor_ring_mismatch_errors", "geometry.fen_errors",
          "geometry.topology_errors", "geometry.type_mismatch_errors", "geometry.xpos_errors",
          "geometry.ypos_errors", "geometry.validation_errors", "geometry.pixel_errors",
          "events.ibm", "events.ibm_npos_sum"}) {
      EXPECT_EQ(ctx.value(name), counts[name]) << name;
    }
    EXPECT_GT(counts["geometry.validation_errors"], 1000) << "the draw exercises the checks";
    for (const Monitor &m : config.monitors) {
      EXPECT_EQ(ctx.sources[m.source].events, want[m.source]) << m.source;
      if (m.schema == Schema::Ev44) {
        EXPECT_GT(want[m.source].size(), 5U) << m.source << ": events drawn";
      }
    }
  }
}

TEST(CbmModule, RingAboveMaxRingAndIbmAsEvents) {
  nlohmann::json c = {{"Detector", "CBM"},
                      {"MaxFENId", 0},
                      {"MonitorRing", 1},
                      {"MaxRing", 1},
                      {"NormalizeIBMReadouts", false},
                      {"Topology",
                       {{{"FEN", 0},
                         {"Channel", 0},
                         {"Type", "IBM"},
                         {"Source", "i"},
                         {"Schema", "ev44"},
                         {"MaxTofBin", 10},
                         {"BinCount", 1}},
                        {{"FEN", 0},
                         {"Channel", 1},
                         {"Type", "EVENT_0D"},
                         {"Source", "z"},
                         {"Schema", "ev44"},
                         {"PixelOffset", 7}}}}};
  FakeModuleContext ctx(validated(c), "t.json");
  CbmModule m(ctx);
  Datagram d({10, 0}, {9, 80'000'000});
  d.add(readoutOf(0, 0, 3, {10, 0}, 4)); // ring 2 > MaxRing 1
  CbmReadout ibm = readoutOf(0, 0, 3, {10, 1}, 2);
  ibm.setNadc(1000, 4); // not normalised: 1000
  d.add(ibm);
  d.add(readoutOf(0, 1, 1, {10, 2}, 3));
  d.add(readoutOf(0, 1, 1, {10, 3}, 3));
  m.process(d.packet());
  EXPECT_EQ(ctx.value("geometry.ring_errors"), 1);
  ASSERT_EQ(ctx.sources["i"].events.size(), 1U);
  EXPECT_EQ(ctx.sources["i"].events[0].pixelId, 1000) << "an IBM as ev44: the value as pixel";
  EXPECT_EQ(ctx.sources["z"].events.size(), 2U);
  EXPECT_EQ(ctx.value("geometry.pixel_errors"), 0);
}

/// A CBM file with an EVENT_0D monitor at Topology[0] and IBMs on da00 at Topology[1...] with
/// these bin counts (MaxTofBin 2^31 - 1), sources "big", "big1", ...
nlohmann::json ibmConfig(const std::vector<int64_t> &binCounts) {
  nlohmann::json c = {{"Detector", "CBM"},
                      {"MaxFENId", 0},
                      {"Topology",
                       {{{"FEN", 0},
                         {"Channel", 0},
                         {"Type", "EVENT_0D"},
                         {"Source", "z"},
                         {"Schema", "ev44"},
                         {"PixelOffset", 7}}}}};
  for (size_t i = 0; i < binCounts.size(); ++i) {
    c["Topology"].push_back({{"FEN", 0},
                             {"Channel", i + 1},
                             {"Type", "IBM"},
                             {"Source", i == 0 ? "big" : "big" + std::to_string(i)},
                             {"Schema", "da00"},
                             {"MaxTofBin", 2147483647},
                             {"BinCount", binCounts[i]}});
  }
  return c;
}

/// The ConfigError's text constructing the module with `ctx` gives ("" when it is accepted).
std::string refusal(FakeModuleContext &ctx) {
  try {
    const CbmModule m(ctx);
  } catch (const sdk::ConfigError &e) {
    return e.what();
  }
  return {};
}

// Issue 37 item 3: a histogram whose da00 message the producer cannot take is refused at start,
// naming the file, the entry's BinCount, the message's size, the limit and the most bins that
// fit; the most bins that fit are accepted and their message is within the limit. 2^31 - 1 bins
// (34 GB) are refused the same way, without allocating.
TEST(CbmModule, AHistogramLargerThanAMessageMayBeIsRefusedAtStart) {
  FakeModuleContext big(validated(ibmConfig({200'000})), "ibm.json");
  EXPECT_EQ(refusal(big),
            "ibm.json: Topology[1].BinCount = 200000: its da00 message would take up to 1600507 "
            "bytes, more than the 1016860 a message may have (the Kafka producer's "
            "message.max.bytes in effect, less its record overhead); at most 127044 bins fit "
            "with this Source and AggregatedFrames 1");
  FakeModuleContext most(validated(ibmConfig({127'044})), "ibm.json");
  EXPECT_EQ(refusal(most), "");
  FakeModuleContext oneMore(validated(ibmConfig({127'045})), "ibm.json");
  const std::string oneMoreRefused = refusal(oneMore);
  EXPECT_NE(oneMoreRefused.find("Topology[1].BinCount = 127045: its da00 message would take up "
                                "to 1016867 bytes, more than the 1016860"),
            std::string::npos)
      << oneMoreRefused;
  Monitor fits = ibmMonitor(2147483647, 127'044);
  fits.source = "big";
  const TofHistogram h(fits);
  const auto variables = h.variables();
  flatbuffers::FlatBufferBuilder fbb;
  EXPECT_LE(serialize::buildDa00(fbb, "big", 0, variables).size(), 1'016'860U);

  // The sink's own limit counts: a smaller one refuses what the default takes.
  FakeModuleContext small(validated(ibmConfig({512})), "ibm.json");
  small.arrays["big"].maxBytes = 4000;
  const std::string smallRefused = refusal(small);
  EXPECT_NE(smallRefused.find("ibm.json: Topology[1].BinCount = 512: its da00 message would take "
                              "up to 4603 bytes, more than the 4000 a message may have"),
            std::string::npos)
      << smallRefused;
  EXPECT_NE(smallRefused.find("at most 436 bins fit"), std::string::npos) << smallRefused;

  FakeModuleContext huge(validated(ibmConfig({2147483647})), "ibm.json");
  const std::string hugeRefused = refusal(huge);
  EXPECT_NE(hugeRefused.find("ibm.json: Topology[1].BinCount = 2147483647: its da00 message "
                             "would take up to 17179869683 bytes"),
            std::string::npos)
      << hugeRefused;
}

// Whatever the producer takes, the histograms' memory is bounded: 1 GiB over all monitors.
TEST(CbmModule, HistogramsOfMoreThanAGibibyteTogetherAreRefused) {
  nlohmann::json c = ibmConfig({40'000'000, 40'000'000}); // 640 MB each
  FakeModuleContext ctx(validated(c), "ibm.json");
  ctx.arrays["big"].maxBytes = 1'000'000'000;
  ctx.arrays["big1"].maxBytes = 1'000'000'000;
  EXPECT_EQ(refusal(ctx), "ibm.json: Topology[2].BinCount = 40000000: the histograms would hold "
                          "1280000032 bytes with this one (16 per bin), more than the 1073741824 "
                          "(1 GiB) allowed over all monitors");
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define EFU_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define EFU_TEST_SANITIZED 1
#endif
#endif

/// In a child process: limits the address space to 64 MB above what is mapped now, constructs
/// the module with `ctx`, writes the refusal to stderr and exits 0.
[[noreturn]] void refusalUnderAnAddressSpaceLimit(FakeModuleContext &ctx) {
  std::ifstream status("/proc/self/status");
  uint64_t vmKb = 0;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) {
      vmKb = std::stoull(line.substr(7));
    }
  }
  const rlim_t limit = (vmKb + 64 * 1024) * 1024;
  const rlimit r{limit, limit};
  setrlimit(RLIMIT_AS, &r);
  std::fprintf(stderr, "%s\n", refusal(ctx).c_str());
  std::exit(0);
}

// A histogram within every bound that the machine still cannot hold is a ConfigError naming the
// entry, never a bare std::bad_alloc: 500 MB (125 MB per array) with 64 MB of address space left.
TEST(CbmModule, AHistogramTheMachineCannotHoldIsAConfigError) {
#ifdef EFU_TEST_SANITIZED
  GTEST_SKIP() << "a sanitizer's shadow memory does not live under an address-space limit";
#else
  FakeModuleContext ctx(validated(ibmConfig({31'250'000})), "ibm.json");
  ctx.arrays["big"].maxBytes = 1'000'000'000;
  EXPECT_EXIT(refusalUnderAnAddressSpaceLimit(ctx), ::testing::ExitedWithCode(0),
              "ibm.json: Topology\\[1\\].BinCount = 31250000: no memory for its histogram "
              "\\(500000016 bytes\\)");
#endif
}

// Issue 37 item 3: a histogram the producer refuses is not published: serialize.<s>.histograms
// counts what the producer took, histograms_refused the rest.
TEST_F(CbmModuleTest, AHistogramTheProducerRefusesIsNotCountedAsPublished) {
  ctx_->arrays["cbm4"].refuse = true;
  Datagram d(pulse_, prev_);
  CbmReadout a = readoutOf(1, 1, 3, at(1));
  a.setNadc(1000, 4);
  d.add(a);
  module_->process(d.packet());
  Datagram next({1000, 6'289'464}, pulse_, 1);
  next.add(a);
  module_->process(next.packet());
  EXPECT_EQ(ctx_->arrays["cbm4"].refused, 1U);
  EXPECT_EQ(ctx_->value("serialize.cbm4.produce_called"), 1);
  EXPECT_EQ(ctx_->value("serialize.cbm4.histograms"), 0);
  EXPECT_EQ(ctx_->value("serialize.cbm4.histograms_refused"), 1);
  ctx_->arrays["cbm4"].refuse = false;
  module_->flush();
  EXPECT_EQ(ctx_->arrays["cbm4"].count, 1U);
  EXPECT_EQ(ctx_->value("serialize.cbm4.histograms"), 1);
  EXPECT_EQ(ctx_->value("serialize.cbm4.histograms_refused"), 1);
}

// ---- readoutgen's source against the module --------------------------------------------------

struct TruthList final : sdk::TruthSink {
  void add(int64_t, int64_t, int32_t) override { ADD_FAILURE() << "cbm names its outputs"; }
  void addFrom(std::string_view source, int64_t pulse, int64_t tof, int32_t v) override {
    events.emplace_back(std::string(source), pulse, tof, v);
  }
  std::vector<std::tuple<std::string, int64_t, int64_t, int32_t>> events;
};

/// Every (stepX, stepY)-th image position through the source into the module, in datagrams of
/// 400 readouts of one pulse, the truth into `truth`.
void feedImage(CbmSource &source, CbmModule &module, TruthList &truth, uint32_t stepY,
               uint32_t stepX) {
  const readout::EssTime pulse{2000, 0};
  readout::test::DatagramPacker packer(source, truth, 30 + 400 * kReadoutBytes);
  packer.setPulse(pulse, {1999, 0});
  uint64_t index = 0;
  for (uint32_t y = 0; y < source.imageHeight(); y += stepY) {
    for (uint32_t x = 0; x < source.imageWidth(); x += stepX) {
      const int64_t tofNs = static_cast<int64_t>(index % 800) * 11;
      packer.add(readout::test::neutronAt(x, y, pulse, tofNs, index++));
      if (!packer.hasRoom()) {
        module.process(readout::test::packetOf(packer.take()));
      }
    }
  }
  module.process(readout::test::packetOf(packer.take()));
}

TEST(CbmSource, EveryImagePositionBecomesItsMonitorsTruth) {
  const nlohmann::json config = fileConfig(kConfigs + "cbmtest.json");
  CbmSource source(config, "cbmtest.json", 1);
  ASSERT_EQ(source.imageWidth(), 512U);
  ASSERT_EQ(source.imageHeight(), 8U * 512);
  FakeModuleContext ctx(config, "cbmtest.json");
  CbmModule module(ctx);
  TruthList truth;
  feedImage(source, module, truth, 37, 101);
  module.flush();
  // Events: exactly the truth of each event source.
  std::map<std::string, std::multiset<std::tuple<int64_t, int64_t, int32_t>>> want, got;
  std::map<std::string, std::vector<int64_t>> histogramTruth;
  const CbmConfig c = parseCbmConfig(config, "cbmtest.json");
  for (const auto &[src, p, t, v] : truth.events) {
    bool histogram = false;
    for (const Monitor &m : c.monitors) {
      if (m.source == src && m.schema == Schema::Da00) {
        histogram = true;
        auto &bins = histogramTruth[src];
        bins.resize(static_cast<size_t>(m.binCount));
        const int64_t bin = t / m.binWidth();
        if (bin < m.binCount) {
          bins[static_cast<size_t>(bin)] += v;
        }
      }
    }
    if (!histogram) {
      want[src].insert({p, t, v});
    }
  }
  for (const auto &[src, sink] : ctx.sources) {
    for (const RecordedEvent &e : sink.events) {
      got[src].insert({e.pulseTimeNs, e.tofNs, e.pixelId});
    }
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(want.size(), 5U);
  ASSERT_EQ(histogramTruth.size(), 3U);
  for (const auto &[src, bins] : histogramTruth) {
    ASSERT_EQ(ctx.arrays[src].arrays.size(), 1U) << src;
    const auto signal = ctx.arrays[src].arrays[0].at("signal").as<int32_t>();
    EXPECT_EQ(std::vector<int64_t>(signal.begin(), signal.end()), bins) << src;
  }
  EXPECT_EQ(ctx.value("geometry.validation_errors"), 0);
  EXPECT_EQ(ctx.value("parser.readout.count"), static_cast<int64_t>(source.readouts()));
}

} // namespace
} // namespace efu::cbm

// ---- BEER: "Detector": "BEER" ----------------------------------------------------------------

namespace efu::cbm {
namespace {

TEST(Beer, TheEssBeerFileLoadsUnchanged) {
  // beer_base_test.json of the ESS EFU's src/modules/beer/test/: no Type or Schema in the
  // Topology (BEER presets them), PixelOffset, Width and Height of EVENT_2D.
  const CbmConfig c = loadCbmConfig(kConfigs + "beer_base_test.json");
  EXPECT_TRUE(c.beer);
  EXPECT_EQ(c.detectorType(), readout::kTypeBeer);
  EXPECT_EQ(c.maxTofNs, 1000000000);
  EXPECT_EQ(c.maxPulseTimeDiffNs, 1000000000);
  EXPECT_EQ(c.maxFenId, 1);
  EXPECT_EQ(c.monitorRing, 11);
  ASSERT_EQ(c.monitors.size(), 4U);
  const std::tuple<int, int, std::string, int> rows[] = {
      {0, 0, "beer1", 0}, {0, 1, "beer2", 1024}, {1, 0, "beer3", 2048}, {1, 1, "beer4", 3072}};
  for (size_t i = 0; i < std::size(rows); ++i) {
    const Monitor &m = c.monitors[i];
    const auto &[fen, channel, source, offset] = rows[i];
    EXPECT_EQ(m.fen, fen) << i;
    EXPECT_EQ(m.channel, channel) << i;
    EXPECT_EQ(m.source, source) << i;
    EXPECT_EQ(m.type, MonitorType::Event2D) << i;
    EXPECT_EQ(m.schema, Schema::Ev44) << i;
    EXPECT_EQ(m.pixelOffset, offset) << i;
    EXPECT_EQ(m.width, 512) << i;
    EXPECT_EQ(m.height, 512) << i;
  }
  // The CBM files are not BEER's.
  EXPECT_FALSE(loadCbmConfig(kConfigs + "cbmtest.json").beer);
  EXPECT_EQ(loadCbmConfig(kConfigs + "cbmtest.json").detectorType(), readout::kTypeCbm);
}

nlohmann::json beerConfig(nlohmann::json entry) {
  return {{"Detector", "beer"}, {"MaxFENId", 1}, {"Topology", nlohmann::json::array({entry})}};
}

TEST(Beer, TypeAndSchemaArePresetAndMayOnlyAgree) {
  const nlohmann::json entry = {
      {"FEN", 0}, {"Channel", 0}, {"Source", "b"}, {"Width", 4}, {"Height", 2}};
  // ConfigTest.cpp's CorrectBEERDetector: PixelOffset is read for BEER's 2D monitors.
  nlohmann::json withOffset = entry;
  withOffset["PixelOffset"] = 1024;
  const CbmConfig c = parseCbmConfig(validated(beerConfig(withOffset)), "t.json");
  EXPECT_EQ(c.monitors.at(0).pixelOffset, 1024);
  EXPECT_EQ(c.monitors.at(0).type, MonitorType::Event2D);
  nlohmann::json same = entry;
  same["Type"] = "event_2d";
  same["Schema"] = "EV44";
  EXPECT_NO_THROW((void)parseCbmConfig(validated(beerConfig(same)), "t.json"));
  nlohmann::json ibm = entry;
  ibm["Type"] = "IBM";
  expectRefused(beerConfig(ibm), "t.json: Topology[0].Type = \"IBM\": a BEER monitor is EVENT_2D");
  nlohmann::json da00 = entry;
  da00["Schema"] = "da00";
  expectRefused(beerConfig(da00), "Topology[0].Schema = \"da00\"");
  nlohmann::json noWidth = entry;
  noWidth.erase("Width");
  expectRefused(beerConfig(noWidth), "a EVENT_2D monitor needs 'Width'");
  nlohmann::json noSource = entry;
  noSource.erase("Source");
  expectRefused(beerConfig(noSource), "Source");
  // A CBM file still needs both.
  expectRefused(baseConfig(entry), "Type");
  expectRefused({{"Detector", "LOKI"}, {"MaxFENId", 1}, {"Topology", {entry}}},
                "Detector = \"LOKI\"");
}

/// A datagram of detector type 0x50.
Datagram beerDatagram(readout::EssTime pulse, readout::EssTime prev, uint32_t seq = 0) {
  Datagram d(pulse, prev, seq);
  d.bytes[5] = readout::kTypeBeer;
  return d;
}

TEST(Beer, Event2DReadoutsOnlyAndDetectorType0x50) {
  FakeModuleContext ctx(fileConfig(kConfigs + "beer_base_test.json"), "beer_base_test.json");
  CbmModule module(ctx);
  const readout::EssTime pulse{1000, 0};
  const readout::EssTime prev{999, 80'000'000};
  const int64_t pulseNs = 1000LL * 1'000'000'000;
  // BeerBaseTest.cpp's ValidBeerPacket: EVENT_2D on fiber 16 (ring 8, not the MonitorRing 11:
  // the ESS test checks the parser only), FEN 0 channel 0 at (100, 50), FEN 1 channel 1 at
  // (200, 150). Then the same on fiber 22, and ParserTest.cpp's EVENT_0D and IBM readouts.
  Datagram d = beerDatagram(pulse, prev);
  CbmReadout a = readoutOf(0, 0, 2, {1000, 1}, 16);
  a.setPosition(100, 50);
  CbmReadout b = readoutOf(1, 1, 2, {1000, 2}, 16);
  b.setPosition(200, 150);
  CbmReadout a22 = a;
  a22.fiber = 22;
  CbmReadout b22 = b;
  b22.fiber = 22;
  d.add(a).add(b).add(a22).add(b22);
  d.add(readoutOf(0, 0, 1, {1000, 3}));
  CbmReadout ibm = readoutOf(0, 0, 3, {1000, 4});
  ibm.setNadc(255, 0);
  d.add(ibm);
  module.process(d.packet());
  EXPECT_EQ(ctx.value("parser.essheader.errors.type"), 0);
  EXPECT_EQ(ctx.value("parser.readout.count"), 6);
  EXPECT_EQ(ctx.value("parser.readout.errors.type"), 2);
  EXPECT_EQ(ctx.value("parser.readout.2d"), 4);
  EXPECT_EQ(ctx.value("geometry.monitor_ring_mismatch_errors"), 2);
  EXPECT_EQ(ctx.value("events.event2d"), 2);
  const auto tofOf = [&](uint32_t ticks) {
    return static_cast<int32_t>(readout::ticksToNs(1000, ticks) - pulseNs);
  };
  const std::vector<RecordedEvent> beer1{{pulseNs, tofOf(1), 50 * 512 + 100 + 1}};
  const std::vector<RecordedEvent> beer4{{pulseNs, tofOf(2), 150 * 512 + 200 + 1 + 3072}};
  EXPECT_EQ(ctx.sources["beer1"].events, beer1);
  EXPECT_EQ(ctx.sources["beer4"].events, beer4);
  EXPECT_TRUE(ctx.sources["beer2"].events.empty());
  // BeerBaseTest.cpp's CBMTypePacket: detector type 0x10 is refused by the header check.
  Datagram cbm(pulse, prev, 1);
  cbm.add(a22);
  module.process(cbm.packet());
  EXPECT_EQ(ctx.value("parser.essheader.errors.type"), 1);
  EXPECT_EQ(ctx.value("parser.readout.count"), 6);
  // And a CBM file refuses BEER's type.
  FakeModuleContext cbmCtx(fileConfig(kConfigs + "cbm2Dtest.json"), "cbm2Dtest.json");
  CbmModule cbmModule(cbmCtx);
  Datagram beer = beerDatagram(pulse, prev);
  beer.add(a22);
  cbmModule.process(beer.packet());
  EXPECT_EQ(cbmCtx.value("parser.essheader.errors.type"), 1);
}

TEST(Beer, TheSourceWritesBeerReadoutsTheModuleTurnsBackIntoTheTruth) {
  const nlohmann::json config = fileConfig(kConfigs + "beer_base_test.json");
  CbmSource source(config, "beer_base_test.json", 1);
  EXPECT_EQ(source.detectorType(), readout::kTypeBeer);
  ASSERT_EQ(source.imageWidth(), 512U);
  ASSERT_EQ(source.imageHeight(), 4U * 512);
  FakeModuleContext ctx(config, "beer_base_test.json");
  CbmModule module(ctx);
  TruthList truth;
  feedImage(source, module, truth, 13, 31);
  std::map<std::string, std::multiset<std::tuple<int64_t, int64_t, int32_t>>> want, got;
  for (const auto &[src, p, t, v] : truth.events) {
    want[src].insert({p, t, v});
  }
  for (const auto &[src, sink] : ctx.sources) {
    for (const RecordedEvent &e : sink.events) {
      got[src].insert({e.pulseTimeNs, e.tofNs, e.pixelId});
    }
  }
  EXPECT_EQ(want.size(), 4U);
  EXPECT_EQ(got, want);
  EXPECT_EQ(ctx.value("parser.readout.count"), static_cast<int64_t>(source.readouts()));
  EXPECT_EQ(ctx.value("parser.readout.errors.type"), 0);
  EXPECT_EQ(ctx.value("geometry.validation_errors"), 0);
}

// The multiply-and-shift division against '/': every divisor 1..255 (the IBM MCASum) with every
// 24-bit ADC near a multiple and random ones, and random and extreme divisors (the bin width)
// with numerators at the ends of the int32 range and near multiples.
TEST(CbmDivider, EqualsIntegerDivision) {
  std::mt19937_64 rng(11);
  for (uint32_t d = 1; d < 256; ++d) {
    const Divider div = kByteDividers[d];
    for (uint32_t n = 0; n < (1U << 24); n += d * 997U + 1U) {
      for (const uint32_t k : {n, n + d - 1U, n + d}) {
        ASSERT_EQ(div(k), k / d) << k << " / " << d;
      }
    }
    for (int i = 0; i < 2000; ++i) {
      const auto n = static_cast<uint32_t>(rng() % (1U << 24));
      ASSERT_EQ(div(n), n / d) << n << " / " << d;
    }
    ASSERT_EQ(div((1U << 24) - 1U), ((1U << 24) - 1U) / d);
  }
  std::vector<uint32_t> divisors = {
      1, 2, 3, 7, 100, 101, 65535, 65536, 65537, 1000000007U, (1U << 30) + 1U, (1U << 31) - 1U};
  for (int i = 0; i < 300; ++i) {
    divisors.push_back(static_cast<uint32_t>(rng() % ((1U << 31) - 1U)) + 1U);
    divisors.push_back(static_cast<uint32_t>(rng() % 100000U) + 1U);
  }
  constexpr uint32_t kMax = (1U << 31) - 1U;
  for (const uint32_t d : divisors) {
    const Divider div(d);
    for (const uint32_t n :
         {0U, 1U, d - 1U, d, d + 1U, kMax, kMax - 1U, kMax - kMax % d, kMax - kMax % d - 1U}) {
      ASSERT_EQ(div(n), n / d) << n << " / " << d;
    }
    for (int i = 0; i < 2000; ++i) {
      const auto n = static_cast<uint32_t>(rng() % (uint64_t{kMax} + 1));
      const uint32_t q = n / d;
      ASSERT_EQ(div(n), q) << n << " / " << d;
      if (q > 0) {
        ASSERT_EQ(div(q * d - 1U), q - 1U) << q * d - 1U << " / " << d;
        ASSERT_EQ(div(q * d), q) << q * d << " / " << d;
      }
    }
  }
}

TEST(CbmDivider, IbmValueFastEqualsIbmValue) {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200000; ++i) {
    CbmReadout r{};
    r.setNadc(static_cast<uint32_t>(rng() % (1U << 24)), static_cast<uint8_t>(rng()));
    for (const bool normalize : {false, true}) {
      ASSERT_EQ(ibmValueFast(r, normalize), ibmValue(r, normalize));
    }
  }
}

} // namespace
} // namespace efu::cbm
