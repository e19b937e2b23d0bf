// SPDX-License-Identifier: BSD-2-Clause
// The vmm3 module in-process with a fake context (the shape of docs/modules.md): datagrams in,
// exact counters and events out, tick timeout and shutdown flush.
#include "common/readout/EssHeader.h"
#include "tests/support/FakeModuleContext.h"
#include "common/sdk/Module.h"
#include "common/sdk/ModuleConfig.h"
#include "modules/vmm3/Vmm3Module.h"
#include "modules/vmm3/Vmm3Readout.h"

#include <gtest/gtest.h>

#include <fstream>
#include <vector>

using namespace efu;
using namespace efu::vmm3;

namespace {

/// The configuration as the daemon hands it to the module: validated, defaults filled in.
nlohmann::json validated(const nlohmann::json &config) {
  return validateModuleConfig("vmm3", kVmm3ConfigKeys, kVmm3ConfigKeyCount, config, "freia.json");
}

constexpr uint32_t kNx = 128; // freia.json
constexpr uint32_t kPulseSec = 1'700'000'000;
constexpr uint32_t kPulseTicks = 1'000'000;

nlohmann::json freia() {
  std::ifstream in(std::string(EFU_SOURCE_DIR) + "/modules/vmm3/configs/freia.json");
  return nlohmann::json::parse(in);
}

/// A readout of freia.json's geometry: x strips on (0,0,pair 0), y strips on pairs 1 and 2.
Vmm3Readout hit(char plane, uint32_t strip, uint16_t adc, uint32_t tickOffset = 0,
                uint8_t tdc = 0) {
  Vmm3Readout r{};
  r.fiber = 0;
  r.fen = 0;
  r.length = kReadoutBytes;
  r.timeHigh = kPulseSec;
  r.timeLow = kPulseTicks + 100'000 + tickOffset; // ~1.136 ms after the pulse
  r.otadc = adc;
  r.tdc = tdc;
  const uint32_t pair = plane == 'x' ? 0 : 1 + strip / 128;
  const uint32_t within = strip % 128;
  r.vmm = static_cast<uint8_t>(2 * pair + within / 64);
  r.channel = static_cast<uint8_t>(within % 64);
  return r;
}

const int64_t kHitNs = readout::ticksToNs(kPulseSec, kPulseTicks + 100'000);
const int64_t kPulseNs = readout::ticksToNs(kPulseSec, kPulseTicks);

class Datagram {
public:
  explicit Datagram(uint32_t seq = 0, uint8_t type = readout::kTypeFreia,
                    uint32_t pulseSec = kPulseSec) {
    bytes_.resize(sizeof(readout::EssHeaderV0));
    readout::HeaderFields f;
    f.detectorType = type;
    f.pulse = {pulseSec, kPulseTicks};
    f.prevPulse = {pulseSec - 1, 82'763'036}; // 71.4 ms before the pulse
    f.seqNum = seq;
    readout::writeHeader(bytes_, f);
  }
  Datagram &add(const Vmm3Readout &r) {
    const auto *p = reinterpret_cast<const uint8_t *>(&r);
    bytes_.insert(bytes_.end(), p, p + sizeof(r));
    return *this;
  }
  Datagram &raw(std::vector<uint8_t> extra) {
    bytes_.insert(bytes_.end(), extra.begin(), extra.end());
    return *this;
  }
  sdk::Packet packet(int64_t rxNs = 0) {
    readout::setTotalLength(bytes_.data(), static_cast<uint16_t>(bytes_.size()));
    return sdk::Packet{bytes_.data(), static_cast<uint32_t>(bytes_.size()), 0, rxNs};
  }

private:
  std::vector<uint8_t> bytes_;
};

class Vmm3InProcess : public ::testing::Test {
protected:
  void SetUp() override { create(freia()); }
  /// The module in-process, with the config validated as the daemon validates it.
  void create(const nlohmann::json &config) {
    ctx_ = std::make_unique<readout::FakeModuleContext>(validated(config), "freia.json");
    module_ = std::make_unique<vmm3::Vmm3Module>(*ctx_);
  }
  int64_t stat(const std::string &name) const { return ctx_->value(name); }
  const std::vector<readout::RecordedEvent> &events() const { return ctx_->sink.events; }

  std::unique_ptr<readout::FakeModuleContext> ctx_;
  std::unique_ptr<vmm3::Vmm3Module> module_;
};

TEST_F(Vmm3InProcess, CountersAreRegistered) {
  for (const char *name :
       {"readouts.count", "hits.count", "hits.rejected.threshold", "hits.late",
        "clusters.x.count", "clusters.y.count", "clusters.x.unmatched",
        "clusters.y.unmatched", "events.count", "readouts.errors.length",
        "readouts.errors.hybrid", "parser.essheader.errors.type", "events.timestamp.tof.count"}) {
    EXPECT_TRUE(ctx_->has(name)) << name;
  }
  EXPECT_NE(ctx_->lossLost(), nullptr);
}

TEST_F(Vmm3InProcess, OneNeutronBecomesOneEvent) {
  Datagram d;
  d.add(hit('x', 9, 100, 0, 40)).add(hit('x', 10, 300)).add(hit('x', 11, 100, 0, 80));
  d.add(hit('y', 199, 200, 0, 20)).add(hit('y', 200, 200));
  module_->process(d.packet());
  module_->flush();
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0].pixelId, static_cast<int32_t>(200 * kNx + 10 + 1)); // 199.5 → 200
  EXPECT_EQ(events()[0].pulseTimeNs, kPulseNs);
  EXPECT_EQ(events()[0].tofNs, kHitNs - kPulseNs); // earliest hit, fine time 0
  EXPECT_EQ(stat("readouts.count"), 5);
  EXPECT_EQ(stat("hits.count"), 5);
  EXPECT_EQ(stat("clusters.x.count"), 1);
  EXPECT_EQ(stat("clusters.y.count"), 1);
  EXPECT_EQ(stat("events.count"), 1);
  EXPECT_EQ(stat("events.timestamp.tof.count"), 1);
  EXPECT_EQ(stat("parser.essheader.ok"), 1);
}

TEST_F(Vmm3InProcess, FineTimeMovesTheEventTime) {
  Datagram d;
  d.add(hit('x', 10, 300, 0, 128)).add(hit('y', 10, 300, 0, 200));
  module_->process(d.packet());
  module_->flush();
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0].tofNs, kHitNs - kPulseNs + 11); // 128/256 of a 22.71 ns BC
}

TEST_F(Vmm3InProcess, NoiseBelowThresholdIsIgnored) {
  Datagram d;
  d.add(hit('x', 10, 300)).add(hit('x', 40, 29)).add(hit('x', 11, 29)).add(hit('y', 20, 30));
  module_->process(d.packet());
  module_->flush();
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0].pixelId, static_cast<int32_t>(20 * kNx + 10 + 1)); // 11 did not pull it
  EXPECT_EQ(stat("hits.rejected.threshold"), 2);
  EXPECT_EQ(stat("hits.count"), 2);
  EXPECT_EQ(stat("clusters.x.count"), 1);
}

TEST_F(Vmm3InProcess, ClusterAcrossTwoDatagrams) {
  Datagram a(0);
  a.add(hit('x', 50, 100)).add(hit('x', 51, 100)).add(hit('y', 60, 100));
  Datagram b(1);
  b.add(hit('x', 52, 100, 1)).add(hit('y', 61, 100, 1));
  module_->process(a.packet());
  module_->process(b.packet());
  module_->flush();
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0].pixelId, static_cast<int32_t>(61 * kNx + 51 + 1)); // y: 60.5 → 61
  EXPECT_EQ(stat("clusters.x.count"), 1);
  EXPECT_EQ(stat("clusters.y.count"), 1);
  EXPECT_EQ(stat("parser.essheader.seq.lost"), 0);
}

TEST_F(Vmm3InProcess, TofUsesThePulseOfTheDatagramThatCarriedTheHits) {
  // Each event's clusters close only when a later datagram (with a later pulse) arrives.
  for (uint32_t k = 0; k < 4; ++k) {
    Vmm3Readout x = hit('x', 10 + k, 100);
    Vmm3Readout y = hit('y', 20 + k, 100);
    x.timeHigh += k;
    y.timeHigh += k;
    Datagram d(k, readout::kTypeFreia, kPulseSec + k);
    d.add(x).add(y);
    module_->process(d.packet());
  }
  module_->flush();
  ASSERT_EQ(events().size(), 4U);
  for (uint32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(events()[k].pulseTimeNs, kPulseNs + int64_t{k} * 1'000'000'000) << k;
    EXPECT_EQ(events()[k].tofNs, kHitNs - kPulseNs) << k;
  }
  EXPECT_EQ(stat("events.timestamp.tof.count"), 4);
  EXPECT_EQ(stat("events.timestamp.prevtof.count"), 0);
}

TEST_F(Vmm3InProcess, HitsBeforeThePulseUseThePreviousPulse) {
  Vmm3Readout x = hit('x', 10, 100);
  Vmm3Readout y = hit('y', 20, 100);
  x.timeLow = y.timeLow = kPulseTicks - 1000; // 11.4 us before the pulse
  Datagram d;
  d.add(x).add(y);
  module_->process(d.packet());
  module_->flush();
  ASSERT_EQ(events().size(), 1U);
  const int64_t prevNs = readout::ticksToNs(kPulseSec - 1, 82'763'036);
  EXPECT_EQ(events()[0].pulseTimeNs, prevNs);
  EXPECT_EQ(events()[0].tofNs, readout::ticksToNs(kPulseSec, kPulseTicks - 1000) - prevNs);
  EXPECT_EQ(stat("events.timestamp.prevtof.count"), 1);
}

TEST_F(Vmm3InProcess, TickClosesOpenClustersAfterTheTimeout) {
  const int64_t rx = 1'800'000'000'000'000'000;
  Datagram d;
  d.add(hit('x', 5, 100)).add(hit('y', 6, 100));
  module_->process(d.packet(rx));
  module_->tick(rx + 19'999'999); // freia.json: cluster_timeout_ms 20
  EXPECT_TRUE(events().empty());
  EXPECT_EQ(stat("flushes.timeout"), 0);
  module_->tick(rx + 20'000'000);
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(stat("flushes.timeout"), 1);
  module_->tick(rx + 40'000'000); // nothing open: no second flush
  EXPECT_EQ(stat("flushes.timeout"), 1);
}

TEST_F(Vmm3InProcess, EveryReadoutErrorIsCountedOnceAndTheRestStillCounts) {
  struct Case {
    const char *name;
    void (*corrupt)(Vmm3Readout &);
  };
  const Case cases[] = {
      {"fiber", [](Vmm3Readout &r) { r.fiber = 24; }},
      {"fen", [](Vmm3Readout &r) { r.fen = 24; }},
      {"time_low", [](Vmm3Readout &r) { r.timeLow = 88'052'500; }},
      {"bc", [](Vmm3Readout &r) { r.bc = 4096; }},
      {"adc", [](Vmm3Readout &r) { r.otadc = 1024; }},
      {"vmm", [](Vmm3Readout &r) { r.vmm = 16; }},
      {"channel", [](Vmm3Readout &r) { r.channel = 64; }},
      {"hybrid", [](Vmm3Readout &r) { r.fen = 5; }},
  };
  uint32_t seq = 0;
  for (const Case &c : cases) {
    Vmm3Readout bad = hit('x', 3, 100);
    c.corrupt(bad);
    Datagram d(seq++);
    d.add(hit('x', 1, 100)).add(bad).add(hit('y', 1, 100));
    module_->process(d.packet());
    EXPECT_EQ(stat(std::string("readouts.errors.") + c.name), 1) << c.name;
  }
  EXPECT_EQ(stat("readouts.count"), 2 * static_cast<int64_t>(std::size(cases)));
  // Length errors stop the datagram: the readout after it is not read.
  Datagram d(seq++);
  Vmm3Readout bad = hit('x', 3, 100);
  bad.length = 24;
  d.add(hit('x', 1, 100)).add(bad).add(hit('y', 1, 100));
  module_->process(d.packet());
  EXPECT_EQ(stat("readouts.errors.length"), 1);
  Datagram t(seq++);
  t.add(hit('x', 1, 100)).raw({1, 2, 3, 4, 5, 6, 7});
  module_->process(t.packet());
  EXPECT_EQ(stat("readouts.errors.truncated"), 1);
  EXPECT_EQ(stat("readouts.count"), 2 * static_cast<int64_t>(std::size(cases)) + 2);
  for (const auto &[name, value] : ctx_->snapshot()) {
    if (name.find("header.errors") != std::string::npos) {
      EXPECT_EQ(value, 0) << name;
    }
  }
}

TEST_F(Vmm3InProcess, HeaderErrorsAndHeartbeats) {
  Datagram wrongType(0, readout::kTypeEstia);
  wrongType.add(hit('x', 1, 100));
  module_->process(wrongType.packet());
  EXPECT_EQ(stat("parser.essheader.errors.type"), 1);
  Datagram heartbeat(1);
  module_->process(heartbeat.packet());
  EXPECT_EQ(stat("parser.essheader.heartbeats"), 1);
  const uint8_t junk[5] = {0, 0, 'E', 'S', 'S'};
  module_->process(sdk::Packet{junk, sizeof(junk), 0, 0});
  EXPECT_EQ(stat("parser.essheader.errors.buffer"), 1);
  EXPECT_EQ(stat("readouts.count"), 0);
}

TEST_F(Vmm3InProcess, BadNestedConfigNamesTheKey) {
  nlohmann::json config = freia();
  config["hybrids"][0]["plane"] = "q";
  readout::FakeModuleContext ctx(validated(config), "freia.json");
  try {
    vmm3::Vmm3Module bad(ctx);
    FAIL() << "accepted a bad plane";
  } catch (const sdk::ConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("freia.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("hybrids[0].plane' = \"q\""), std::string::npos)
        << e.what();
  }
}

} // namespace
