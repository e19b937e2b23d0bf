// SPDX-License-Identifier: BSD-2-Clause
// caen module: config validation, tube map, readout parsing boundaries, one counter per reason.
#include "tests/modules/caen/CaenTestConfig.h"
#include "tests/support/FakeModuleContext.h"
#include "modules/caen/CaenModule.h"
#include "modules/caen/CaenReadout.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <vector>

namespace efu::caen {
namespace {

using readout::FakeModuleContext;

using test::baseConfig;

std::string configError(const nlohmann::json &cfg) {
  try {
    CaenConfig c(cfg, "x.json");
  } catch (const sdk::ConfigError &e) {
    return e.what();
  }
  return "";
}

TEST(CaenConfig, MapsFiberFenGroupToTubes) {
  CaenConfig c(baseConfig(), "x.json");
  EXPECT_EQ(c.tubes(), 32U);
  EXPECT_EQ(c.imageWidth(), 100U);
  EXPECT_EQ(c.imageHeight(), 32U);
  EXPECT_EQ(c.fenEntry(0, 0).firstTube, 0U);
  EXPECT_EQ(c.fenEntry(0, 1).firstTube, 8U);
  EXPECT_EQ(c.fenEntry(0, 1).groups, 8U);
  EXPECT_EQ(c.fenEntry(0, 2).groups, 0U);
  EXPECT_EQ(c.fenEntry(23, 23).firstTube, 16U);
  EXPECT_EQ(c.fenEntry(23, 23).groups, 16U);
  EXPECT_EQ(c.channels[31].fiber, 23);
  EXPECT_EQ(c.channels[31].group, 15);
  EXPECT_EQ(c.pixel(0, 0), 1);
  EXPECT_EQ(c.pixel(31, 99), 3200);
}

TEST(CaenConfig, NestedErrorsNameFileKeyAndValue) {
  auto cfg = baseConfig();
  cfg["mapping"][1]["fiber"] = 24;
  const std::string e = configError(cfg);
  EXPECT_NE(e.find("x.json"), std::string::npos) << e;
  EXPECT_NE(e.find("mapping[1].fiber = 24"), std::string::npos) << e;
  cfg = baseConfig();
  cfg["mapping"][0]["fens"] = nlohmann::json::array({3, 2});
  EXPECT_NE(configError(cfg).find("mapping[0].fens = [3,2]"), std::string::npos);
  cfg = baseConfig();
  cfg["mapping"][0]["fens"] = nlohmann::json::array({0, 24});
  EXPECT_NE(configError(cfg).find("mapping[0].fens"), std::string::npos);
  cfg = baseConfig();
  cfg["mapping"][0]["groups"] = 9; // 2 FENs x 9 = 18 > 16 tubes
  EXPECT_NE(configError(cfg).find("tubes_per_bank is 16"), std::string::npos);
  cfg = baseConfig();
  cfg["mapping"][0]["colour"] = 1;
  EXPECT_NE(configError(cfg).find("mapping[0].colour"), std::string::npos);
  cfg = baseConfig();
  cfg["mapping"][1]["bank"] = 2;
  EXPECT_NE(configError(cfg).find("mapping[1].bank = 2"), std::string::npos);
  cfg = baseConfig();
  cfg["mapping"].push_back({{"bank", 1}, {"fiber", 0}, {"fens", {1, 1}}, {"groups", 1},
                            {"first_tube", 0}});
  EXPECT_NE(configError(cfg).find("already mapped"), std::string::npos);
  cfg = baseConfig();
  cfg["mapping"].push_back({{"bank", 0}, {"fiber", 1}, {"fens", {0, 0}}, {"groups", 1},
                            {"first_tube", 3}});
  EXPECT_NE(configError(cfg).find("tube 3 of bank 0 is already fed"), std::string::npos);
  cfg = baseConfig();
  cfg["mapping"] = nlohmann::json::array();
  EXPECT_NE(configError(cfg).find("at least one"), std::string::npos);
  cfg = baseConfig();
  cfg["mapping"][0]["first_tube"] = "0";
  EXPECT_NE(configError(cfg).find("must be an integer"), std::string::npos);
}

TEST(CaenConfig, ShippedConfigsLoad) {
  for (const char *name : {"loki.json", "bifrost.json"}) {
    std::ifstream in(std::string(EFU_SOURCE_DIR) + "/modules/caen/configs/" + name);
    ASSERT_TRUE(in) << name;
    const auto json = nlohmann::json::parse(in);
    CaenConfig c(json, name);
    for (uint32_t t = 0; t < c.tubes(); ++t) {
      EXPECT_TRUE(c.mapped[t]) << name << " tube " << t;
    }
  }
}

TEST(Position, IndexAndInverseAgreeEverywhere) {
  for (uint32_t ppt : {1U, 2U, 7U, 100U, 512U, 4096U}) {
    for (int32_t sum : {static_cast<int32_t>(2 * ppt), 1000, 8191, 32767}) {
      if (sum < static_cast<int32_t>(2 * ppt)) {
        continue;
      }
      for (uint32_t pos = 0; pos < ppt; ++pos) {
        const int32_t b = amplitudeBForPosition(pos, sum, ppt);
        ASSERT_EQ(positionIndex(sum - b, b, ppt), pos) << ppt << " " << sum;
      }
    }
  }
  EXPECT_EQ(positionIndex(10, 0, 100), 0U);
  EXPECT_EQ(positionIndex(0, 10, 100), 99U); // B/(A+B) = 1 clamps to the last pixel
  EXPECT_EQ(positionIndex(1, 1, 100), 50U);
}

/// Builds datagrams for the module.
struct Builder {
  std::vector<uint8_t> d;
  uint32_t seq = 0;
  readout::HeaderFields f;
  Builder() {
    f.detectorType = readout::kTypeLoki;
    f.pulse = {100, 1000};
    f.prevPulse = readout::nsToTicks(readout::ticksToNs(100, 1000) - 71'428'571);
  }
  void start() {
    d.assign(readout::headerBytes(0), 0);
  }
  CaenReadout readout(uint8_t fiber, uint8_t fen, uint8_t group, int16_t a, int16_t b,
                      int64_t tofNs = 1000) const {
    CaenReadout r{};
    r.fiber = fiber;
    r.fen = fen;
    r.length = 24;
    r.group = group;
    r.ampA = a;
    r.ampB = b;
    const auto t = readout::nsToTicks(readout::ticksToNs(f.pulse.high, f.pulse.low) + tofNs);
    r.timeHigh = t.high;
    r.timeLow = t.low;
    return r;
  }
  void add(const CaenReadout &r) {
    const auto *p = reinterpret_cast<const uint8_t *>(&r);
    d.insert(d.end(), p, p + sizeof(r));
  }
  void addBytes(size_t n) { d.insert(d.end(), n, 0); }
  sdk::Packet finish() {
    f.totalLength = static_cast<uint16_t>(d.size());
    f.seqNum = seq++;
    readout::writeHeader(d, f);
    return sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0};
  }
};

struct ModuleTest : ::testing::Test {
  FakeModuleContext ctx{baseConfig(), "x.json"};
  CaenModule module{ctx};
  Builder b;

  /// Sends one datagram with one readout; returns the counters that changed.
  std::map<std::string, int64_t> one(const CaenReadout &r) {
    const auto before = ctx.snapshot();
    b.start();
    b.add(r);
    module.process(b.finish());
    std::map<std::string, int64_t> moved;
    for (const auto &[k, v] : ctx.snapshot()) {
      if (v != before.at(k)) {
        moved[k] = v - before.at(k);
      }
    }
    return moved;
  }
  static std::map<std::string, int64_t> rejected(const std::string &reason) {
    return {{"parser.essheader.ok", 1}, {"parser.essheader.oq.00.packets", 1},
            {"parser.essheader.seq.expected", 1}, {"readouts.count", 1}, {reason, 1}};
  }
};

TEST_F(ModuleTest, AcceptedReadoutBecomesPixelEvent) {
  const auto moved = one(b.readout(23, 23, 15, 50, 50, 12345));
  EXPECT_EQ(moved.at("events.count"), 1);
  EXPECT_EQ(moved.at("events.timestamp.tof.count"), 1);
  ASSERT_EQ(ctx.sink.events.size(), 1U);
  const auto &e = ctx.sink.events[0];
  EXPECT_EQ(e.pixelId, 31 * 100 + 50 + 1);
  EXPECT_EQ(e.pulseTimeNs, readout::ticksToNs(100, 1000));
  EXPECT_NEAR(e.tofNs, 12345, 6); // within half a tick
}

TEST(CaenSources, EachBanksEventsGoToItsOwnSource) {
  auto config = baseConfig();
  config["sources"] = {"test_bank0", "test_bank1"};
  FakeModuleContext ctx{config, "x.json"};
  CaenModule module{ctx};
  Builder b;
  b.start();
  b.add(b.readout(0, 0, 3, 50, 50));    // bank 0 (fiber 0), tube 3
  b.add(b.readout(23, 23, 15, 50, 50)); // bank 1 (fiber 23), tube 16 + 15
  b.add(b.readout(0, 1, 0, 20, 80));    // bank 0, tube 8
  module.process(b.finish());
  EXPECT_TRUE(ctx.sink.events.empty()) << "the default source gets nothing";
  ASSERT_EQ(ctx.sources.size(), 2U);
  ASSERT_EQ(ctx.sources["test_bank0"].events.size(), 2U);
  EXPECT_EQ(ctx.sources["test_bank0"].events[0].pixelId, 3 * 100 + 50 + 1);
  EXPECT_EQ(ctx.sources["test_bank0"].events[1].pixelId, 8 * 100 + 80 + 1); // B / (A + B) = 0.8
  ASSERT_EQ(ctx.sources["test_bank1"].events.size(), 1U);
  EXPECT_EQ(ctx.sources["test_bank1"].events[0].pixelId, 31 * 100 + 50 + 1);
}

TEST(CaenSources, OneNamePerBankOrNone) {
  auto config = baseConfig();
  config["sources"] = {"only_one"};
  EXPECT_NE(configError(config).find(
                "x.json: sources = [\"only_one\"]: needs one source name per bank (2 banks)"),
            std::string::npos)
      << configError(config);
  config["sources"] = {"a", ""};
  EXPECT_NE(configError(config).find("sources[1] = \"\": must be a non-empty string"),
            std::string::npos)
      << configError(config);
  config["sources"] = {"a", 7};
  EXPECT_NE(configError(config).find("sources[1] = 7"), std::string::npos);
}

TEST_F(ModuleTest, EachRejectionHasItsCounter) {
  EXPECT_EQ(one(b.readout(24, 0, 0, 50, 50)), rejected("readouts.errors.fiber"));
  EXPECT_EQ(one(b.readout(0, 24, 0, 50, 50)), rejected("readouts.errors.fen"));
  EXPECT_EQ(one(b.readout(0, 2, 0, 50, 50)), rejected("readouts.errors.unmapped"));
  EXPECT_EQ(one(b.readout(0, 1, 8, 50, 50)), rejected("readouts.errors.group"));
  EXPECT_EQ(one(b.readout(0, 0, 0, 0, 0)), rejected("readouts.errors.amplitude"));
  EXPECT_EQ(one(b.readout(0, 0, 0, -5, 2)), rejected("readouts.errors.amplitude"));
  EXPECT_EQ(one(b.readout(0, 0, 0, -5, 20)), rejected("readouts.errors.position"));
  EXPECT_EQ(one(b.readout(0, 0, 0, 4, 5)), rejected("readouts.rejected.threshold"));
  EXPECT_EQ(one(b.readout(0, 0, 0, 200, 0, 100'000'020)), rejected("events.timestamp.tof.high"));
  EXPECT_EQ(one(b.readout(0, 0, 0, 200, 0, -200'000'000)), rejected("events.timestamp.tof.negative"));
  auto r = b.readout(0, 0, 0, 50, 50);
  r.timeLow = readout::kMaxTicksLow + 1;
  EXPECT_EQ(one(r), rejected("readouts.errors.time"));
  EXPECT_TRUE(ctx.sink.events.empty());
}

TEST_F(ModuleTest, Boundaries) {
  // threshold 10: sum 10 accepted, 9 rejected; fiber/FEN 23 accepted; group 15 last mapped
  EXPECT_EQ(one(b.readout(23, 23, 15, 5, 5)).count("events.count"), 1U);
  EXPECT_EQ(one(b.readout(23, 23, 15, 5, 4)).count("readouts.rejected.threshold"), 1U);
  EXPECT_EQ(one(b.readout(23, 23, 16, 5, 5)).count("readouts.errors.group"), 1U);
  // just below max accepted (exact max/max+1 are in EssHeaderTest), before the pulse → previous
  EXPECT_EQ(one(b.readout(0, 0, 0, 20, 0, 99'999'980)).count("events.timestamp.tof.count"), 1U);
  EXPECT_EQ(one(b.readout(0, 0, 0, 20, 0, -12)).count("events.timestamp.prevtof.count"), 1U);
  EXPECT_EQ(ctx.sink.events.back().pulseTimeNs,
            readout::ticksToNs(b.f.prevPulse.high, b.f.prevPulse.low));
  EXPECT_EQ(ctx.sink.events.size(), 3U);
  // position 0 and the last pixel
  EXPECT_EQ(one(b.readout(0, 0, 0, 100, 0)).count("events.count"), 1U);
  EXPECT_EQ(ctx.sink.events.back().pixelId, 1);
  EXPECT_EQ(one(b.readout(0, 0, 1, 0, 100)).count("events.count"), 1U);
  EXPECT_EQ(ctx.sink.events.back().pixelId, 1 * 100 + 99 + 1);
}

TEST_F(ModuleTest, LengthAndTruncation) {
  // wrong length field (20): counted, skipped by its length, the next readout still parsed
  b.start();
  auto r = b.readout(0, 0, 0, 50, 50);
  r.length = 20;
  b.add(r);
  b.d.resize(b.d.size() - 4);
  b.add(b.readout(0, 0, 1, 50, 50));
  module.process(b.finish());
  EXPECT_EQ(ctx.value("readouts.errors.length"), 1);
  EXPECT_EQ(ctx.value("events.count"), 1);
  // implausible length (1000 > rest): counted once, rest of datagram dropped
  b.start();
  r.length = 1000;
  b.add(r);
  b.add(b.readout(0, 0, 1, 50, 50));
  module.process(b.finish());
  EXPECT_EQ(ctx.value("readouts.errors.length"), 2);
  EXPECT_EQ(ctx.value("events.count"), 1);
  // 23 trailing bytes: truncated; 24: one readout
  b.start();
  b.add(b.readout(0, 0, 1, 50, 50));
  b.addBytes(23);
  module.process(b.finish());
  EXPECT_EQ(ctx.value("readouts.errors.truncated"), 1);
  EXPECT_EQ(ctx.value("events.count"), 2);
  EXPECT_EQ(ctx.value("readouts.count"), 2);
}

TEST_F(ModuleTest, HeaderErrorsAndHeartbeats) {
  b.start();
  auto p = b.finish();
  module.process(p); // heartbeat
  EXPECT_EQ(ctx.value("parser.essheader.heartbeats"), 1);
  b.f.detectorType = readout::kTypeBifrost;
  b.start();
  b.add(b.readout(0, 0, 0, 50, 50));
  module.process(b.finish());
  EXPECT_EQ(ctx.value("parser.essheader.errors.type"), 1);
  EXPECT_EQ(ctx.value("readouts.count"), 0);
  // the loss pair handed to the daemon is the sequence pair
  ASSERT_NE(ctx.lossLost(), nullptr);
  EXPECT_EQ(ctx.lossExpected()->get(), ctx.value("parser.essheader.seq.expected"));
  b.seq += 5;
  b.f.detectorType = readout::kTypeLoki;
  b.start();
  module.process(b.finish());
  // 1 (the refused BIFROST datagram's number) + 5 skipped
  EXPECT_EQ(ctx.lossLost()->get(), 6);
  EXPECT_EQ(ctx.value("parser.essheader.seq.lost"), 6);
}

} // namespace
} // namespace efu::caen
