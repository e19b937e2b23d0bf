// SPDX-License-Identifier: BSD-2-Clause
// The dream module in-process with a fake context: the ESS files load unchanged, bad files are
// refused by key and value, datagrams in, exact counters and events out (the ESS parser's
// expectations from src/modules/dream/test/DataParserTest.cpp and DataParserTestData.h of
// ess-dmsc/event-formation-unit), and round trips through DreamSource.
#include "modules/dream/DreamModule.h"
#include "modules/dream/DreamSource.h"
#include "tests/support/EssDatagram.h"

#include "common/readout/EssHeader.h"
#include "common/sdk/ModuleConfig.h"
#include "tests/support/FakeModuleContext.h"
#include "tests/support/ModuleFixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace efu::dream {
namespace {

using readout::EssTime;
using readout::FakeModuleContext;
using readout::RecordedEvent;

constexpr EssTime kPulse{1, 0};
constexpr EssTime kPrevPulse{0, 82'763'036}; // 60 ms earlier
constexpr int64_t kPulseNs = 1'000'000'000;

nlohmann::json validated(const nlohmann::json &config, const std::string &source = "test.json") {
  return validateModuleConfig("dream", kDreamConfigKeys, kDreamConfigKeyCount, config, source);
}
nlohmann::json shipped(const std::string &name) {
  return validated(readConfigFile(std::string(EFU_SOURCE_DIR) + "/modules/dream/configs/" + name),
                   name);
}
std::string configError(const nlohmann::json &config) {
  try {
    (void)parseDreamConfig(validated(config, "dream.json"), "dream.json");
  } catch (const std::exception &e) {
    return e.what();
  }
  return "";
}

/// An ESS datagram of DREAM's type (unless given) with the test's pulses.
class Datagram : public readout::test::EssDatagram {
public:
  explicit Datagram(uint8_t type = readout::kTypeDream, uint32_t seq = 0)
      : EssDatagram(type, kPulse, kPrevPulse, seq) {}
};

CdtReadout readout(uint8_t ring, uint8_t fen, uint8_t unit, uint8_t cathode, uint8_t anode,
                   uint32_t low = 1000) {
  CdtReadout r;
  r.fiber = static_cast<uint8_t>(2 * ring);
  r.fen = fen;
  r.length = kReadoutBytes;
  r.timeHigh = 1;
  r.timeLow = low;
  r.unit = unit;
  r.cathode = cathode;
  r.anode = anode;
  return r;
}

int32_t tofOf(uint32_t low) {
  return static_cast<int32_t>(readout::ticksToNs(1, low) - kPulseNs);
}

class DreamModuleTest : public readout::test::ModuleFixture<DreamModule> {
protected:
  void SetUp() override { create("DreamInst.json"); }
  void create(const std::string &file) { ModuleFixture::create(shipped(file), file); }
};

TEST(DreamConfig, EveryEssFileLoadsUnchanged) {
  struct File {
    const char *name;
    Instrument instrument;
    size_t entries;
  };
  for (const File &f :
       {File{"DreamInst.json", Instrument::Dream, 97},
        File{"DreamEndcap.json", Instrument::Dream, 1}, File{"bwec.json", Instrument::Dream, 22},
        File{"fwec.json", Instrument::Dream, 10}, File{"mantle.json", Instrument::Dream, 30},
        File{"hr.json", Instrument::Dream, 17}, File{"sans.json", Instrument::Dream, 18},
        File{"MagicInst.json", Instrument::Magic, 18},
        File{"HeimdalInst.json", Instrument::Heimdal, 72}}) {
    const DreamConfig c = parseDreamConfig(shipped(f.name), f.name);
    EXPECT_EQ(c.instrument, f.instrument) << f.name;
    EXPECT_EQ(c.slotsInOrder.size(), f.entries) << f.name;
    EXPECT_EQ(c.maxPulseTimeDiffNs, 705032704) << f.name; // 5000000000 modulo 2^32
    EXPECT_TRUE(c.maxPulseWrapped) << f.name;
  }
  const DreamConfig hr = parseDreamConfig(shipped("hr.json"), "hr.json");
  const Part &last = hr.parts[slotOf(8, 8)];
  EXPECT_EQ(last.type, PartType::HR);
  EXPECT_EQ(last.index, 32);
  EXPECT_EQ(last.index2, 255);
  // DreamEndcap.json has no Index: 0 and 0.
  const DreamConfig endcap = parseDreamConfig(shipped("DreamEndcap.json"), "DreamEndcap.json");
  EXPECT_EQ(endcap.parts[slotOf(0, 0)].index, 0);
  EXPECT_EQ(endcap.parts[slotOf(0, 0)].index2, 0);
}

// src/modules/dream/test/ConfigTest.cpp: the files the ESS EFU refuses, refused here by key.
TEST(DreamConfig, BadFilesAreRefusedByKeyAndValue) {
  auto file = [](const std::vector<nlohmann::json> &entries, const char *detector = "DREAM") {
    return nlohmann::json{
        {"Detector", detector}, {"MaxPulseTimeDiffNS", 50000}, {"Config", entries}};
  };
  const nlohmann::json ok = {{"Ring", 4}, {"FEN", 2}, {"Type", "BwEndCap"}};
  EXPECT_EQ(configError(file({ok})), "");
  EXPECT_NE(configError(nlohmann::json{{"MaxPulseTimeDiffNS", 50000}, {"Config", {ok}}}), "");
  EXPECT_EQ(configError(file({ok}, "Freia")),
            "dream.json: Detector = \"Freia\": expected DREAM, MAGIC or HEIMDAL");
  EXPECT_EQ(configError(file({{{"Ring", 255}, {"FEN", 2}, {"Type", "BwEndCap"}}})),
            "dream.json: Config[0].Ring = 255: expected an integer in [0, 11]");
  EXPECT_EQ(configError(file({{{"Ring", 4}, {"FEN", 255}, {"Type", "BwEndCap"}}})),
            "dream.json: Config[0].FEN = 255: expected an integer in [0, 11]");
  EXPECT_EQ(configError(file({{{"Ring", 4}, {"FEN", 2}, {"Type", "BadType"}}})),
            "dream.json: Config[0].Type = \"BadType\": DREAM has parts BwEndCap, FwEndCap, "
            "DreamMantle, HR, SANS");
  EXPECT_EQ(configError(file({ok, ok})),
            "dream.json: Config[1] = {\"FEN\":2,\"Ring\":4,\"Type\":\"BwEndCap\"}: a second entry "
            "for Ring 4 FEN 2");
  EXPECT_EQ(configError(file({ok, {{"Ringz", 4}, {"FEN", 2}, {"Type", "BwEndCap"}}})),
            "dream.json: Config[1].Ringz = 4: unknown key; known here: Ring, FEN, Type, Index, "
            "Index2");
  EXPECT_EQ(configError(file({{{"FEN", 2}, {"Type", "BwEndCap"}}})),
            "dream.json: Config[0] = {\"FEN\":2,\"Type\":\"BwEndCap\"}: missing key 'Ring'");
  // efu's own refusals: a part of another instrument, indices beyond 8 bits, Index2 alone.
  EXPECT_EQ(configError(file({{{"Ring", 4}, {"FEN", 2}, {"Type", "PADetector"}}})),
            "dream.json: Config[0].Type = \"PADetector\": DREAM has parts BwEndCap, FwEndCap, "
            "DreamMantle, HR, SANS");
  EXPECT_EQ(configError(file({{{"Ring", 4}, {"FEN", 2}, {"Type", "HR"}}}, "MAGIC")),
            "dream.json: Config[0].Type = \"HR\": MAGIC has parts FRDetector, PADetector");
  EXPECT_EQ(configError(file({{{"Ring", 4}, {"FEN", 2}, {"Type", "HR"}, {"Index", 256}}})),
            "dream.json: Config[0].Index = 256: expected an integer in [0, 255]");
  EXPECT_EQ(configError(file({{{"Ring", 4}, {"FEN", 2}, {"Type", "HR"}, {"Index2", 3}}})),
            "dream.json: Config[0].Index2 = 3: Index2 without Index (the ESS EFU would ignore it "
            "and use 0)");
  EXPECT_EQ(configError(file({})),
            "dream.json: Config = []: no parts: at least one entry is needed");
  // ValidConfigIndexes; MaxPulseTimeDiffNS defaults to 5 pulses of 14 Hz.
  const nlohmann::json indexed = {
      {"Detector", "DREAM"},
      {"Config", {{{"Ring", 4}, {"FEN", 2}, {"Type", "BwEndCap"}, {"Index", 42}, {"Index2", 84}}}}};
  const DreamConfig c = parseDreamConfig(validated(indexed), "test.json");
  EXPECT_EQ(c.parts[slotOf(4, 2)].index, 42);
  EXPECT_EQ(c.parts[slotOf(4, 2)].index2, 84);
  EXPECT_EQ(c.maxPulseTimeDiffNs, 357142855);
  EXPECT_FALSE(c.maxPulseWrapped);
}

TEST_F(DreamModuleTest, CountersAreTheEssNames) {
  for (const char *name :
       {"readouts.count", "readouts.headers", "readouts.error_buffer", "readouts.error_datalen",
        "readouts.error_fiber", "readouts.error_fen", "geometry.fen_errors",
        "geometry.validation_errors", "geometry.pixel_errors", "geometry.config_errors",
        "events.count", "bwec.geometry.max_sector_errors", "bwec.geometry.sumo_id_errors",
        "bwec.geometry.cassette_id_errors", "fwec.geometry.cassette_id_errors",
        "hr.geometry.index_errors", "sans.geometry.index_errors", "events.timestamp.tof.count"}) {
    EXPECT_TRUE(ctx_->has(name)) << name;
  }
  EXPECT_FALSE(ctx_->has("padetector.geometry.max_sector_errors"));
  create("mantle.json"); // only the parts in the file
  EXPECT_FALSE(ctx_->has("bwec.geometry.max_sector_errors"));
  EXPECT_FALSE(ctx_->has("hr.geometry.index_errors"));
  create("MagicInst.json");
  EXPECT_TRUE(ctx_->has("padetector.geometry.max_sector_errors"));
  EXPECT_TRUE(ctx_->has("padetector.geometry.cassette_id_errors"));
  // What no readout can move is not registered (docs/counters.md).
  for (const char *name : {"geometry.ring_errors", "geometry.ring_mapping_errors",
                           "geometry.topology_errors", "padetector.geometry.strip_errors"}) {
    EXPECT_FALSE(ctx_->has(name)) << name;
  }
}

// DataParserTest.cpp with DataParserTestData.h's readouts (ring 0 FEN 1, a BwEndCap in
// DreamInst.json; their times are 33 s and more after the pulse: past the TOF limit).
TEST_F(DreamModuleTest, TheEssParserTables) {
  const std::vector<uint8_t> three = {0x00, 0x01, 0x10, 0x00, 0x22, 0x00, 0x00, 0x00, 0x00, 0x00,
                                      0x14, 0x05, 0x0e, 0x0b, 0x01, 0x02, 0x00, 0x01, 0x10, 0x00,
                                      0x23, 0x00, 0x10, 0x00, 0x00, 0x00, 0x06, 0x05, 0x0d, 0x08,
                                      0x02, 0x01, 0x00, 0x01, 0x10, 0x00, 0x24, 0x00, 0x00, 0x00,
                                      0x00, 0x00, 0x01, 0x05, 0x0b, 0x01, 0x07, 0x01};
  const std::vector<uint8_t> badFiber = {0x18, 0x17, 0x04, 0x00};
  const std::vector<uint8_t> badFen = {0x0b, 0x18, 0x04, 0x00};
  std::vector<uint8_t> secondShort(three.begin(), three.begin() + 32);
  secondShort[18] = 0x0F; // the second readout says 15 bytes

  struct Case {
    const char *name;
    const std::vector<uint8_t> *bytes;
    size_t size;
    std::map<std::string, int64_t> counters;
  };
  const Case cases[] = {
      {"BadSize", &badFiber, 3, {{"readouts.error_buffer", 1}}},
      {"HeaderSizeError", &three, 3, {{"readouts.error_buffer", 1}}},
      {"BadRingGoodFEN", &badFiber, 4, {{"readouts.error_fiber", 1}}},
      {"GoodRingBadFEN", &badFen, 4, {{"readouts.error_fen", 1}}},
      {"DataSizeMismatch", &three, 10, {{"readouts.error_buffer", 1}}},
      {"ReadoutSizeErrorOnSecond",
       &secondShort,
       32,
       {{"readouts.count", 1},
        {"readouts.headers", 2},
        {"readouts.error_datalen", 1},
        {"events.timestamp.tof.high", 1}}},
      {"ParseThree",
       &three,
       48,
       {{"readouts.count", 3}, {"readouts.headers", 3}, {"events.timestamp.tof.high", 3}}},
  };
  for (const Case &c : cases) {
    create("DreamInst.json");
    Datagram d;
    d.raw(std::span(*c.bytes).first(c.size));
    process(d);
    EXPECT_EQ(moved(), c.counters) << c.name;
    EXPECT_TRUE(events().empty()) << c.name;
  }
}

TEST_F(DreamModuleTest, OneEventPerReadoutWithTheEssPixel) {
  Datagram d;
  d.add(readout(0, 0, 6, 32, 32, 1000))    // BwEndCap sector 0: 71680 + 7
      .add(readout(3, 0, 0, 16, 16, 2000)) // DreamMantle MU 0 cassette 0
      .add(readout(7, 0, 0, 16, 16, 3000)) // HR cuboid 0
      .add(readout(9, 8, 1, 0, 0, 4000));  // SANS FEN 8: Index2 0 → cuboid 0 for unit 1
  process(d);
  ASSERT_EQ(events().size(), 4u);
  EXPECT_EQ(events()[0], (RecordedEvent{kPulseNs, tofOf(1000), 71687}));
  EXPECT_EQ(events()[1], (RecordedEvent{kPulseNs, tofOf(2000), 229376 + 960 * 256 + 17}));
  EXPECT_EQ(events()[2],
            (RecordedEvent{kPulseNs, tofOf(3000), 1122304 + (112 * 16 + 15) * 112 + 34}));
  EXPECT_EQ(events()[3].pixelId, 720896 + 15 * 112 + 32 + 1); // (32, 15): not turned
  EXPECT_EQ(stat("events.count"), 4);
  EXPECT_EQ(stat("readouts.count"), 4);
}

// Every rejection moves exactly its counters, in the ESS EFU's order (validation, TOF, pixel).
TEST_F(DreamModuleTest, RejectionsAreCountedAsTheEssEfuCountsThem) {
  struct Case {
    const char *name;
    CdtReadout r;
    std::map<std::string, int64_t> counters;
  };
  CdtReadout fen12 = readout(0, 12, 6, 0, 0);
  CdtReadout early = readout(0, 0, 6, 32, 32);
  early.timeHigh = 0;
  early.timeLow = 0; // before both pulses
  const std::map<std::string, int64_t> base = {{"readouts.count", 1}, {"readouts.headers", 1}};
  auto with = [&](std::map<std::string, int64_t> extra) {
    extra.insert(base.begin(), base.end());
    return extra;
  };
  const Case cases[] = {
      {"FEN 12", fen12, with({{"geometry.fen_errors", 1}, {"geometry.validation_errors", 1}})},
      {"FEN 11 (configured)", readout(0, 11, 6, 32, 32),
       with({{"geometry.config_errors", 1}, {"geometry.validation_errors", 1}})},
      {"ring 11", readout(11, 0, 6, 32, 32),
       with({{"geometry.config_errors", 1}, {"geometry.validation_errors", 1}})},
      {"no entry", readout(2, 10, 6, 32, 32),
       with({{"geometry.config_errors", 1}, {"geometry.validation_errors", 1}})},
      {"before the pulses", early,
       with({{"events.timestamp.tof.negative", 1}, {"events.timestamp.prevtof.negative", 1}})},
      {"SUMO 2", readout(0, 0, 2, 32, 32),
       with({{"events.timestamp.tof.count", 1},
             {"geometry.pixel_errors", 1},
             {"bwec.geometry.sumo_id_errors", 1}})},
      {"cassette", readout(2, 0, 6, 0, 32),
       with({{"events.timestamp.tof.count", 1},
             {"geometry.pixel_errors", 1},
             {"fwec.geometry.cassette_id_errors", 1}})},
      {"cuboid of none (HR unit 2)", readout(7, 0, 2, 0, 0),
       with({{"events.timestamp.tof.count", 1},
             {"geometry.pixel_errors", 1},
             {"hr.geometry.index_errors", 1}})},
  };
  for (const Case &c : cases) {
    create("DreamInst.json");
    Datagram d;
    d.add(c.r);
    process(d);
    EXPECT_EQ(moved(), c.counters) << c.name;
    EXPECT_TRUE(events().empty()) << c.name;
  }
}

// issue 38 item 5: a readout before the datagram's pulse (after its previous pulse) gets its time
// of flight from the previous pulse in both programs; efu publishes it under the previous
// pulse's reference time, so that reference + time of flight is the readout's time. The ESS EFU
// (ess-dmsc/event-formation-unit 8b399165, src/modules/dream/DreamInstrument.h:
// checkAndSetReferenceTime() with the datagram's pulse, then addEvent() per readout)
// publishes it under the datagram's pulse with the same time of flight (README, Where efu
// differs).
TEST_F(DreamModuleTest, AnEventBeforeThePulseIsPublishedUnderThePreviousPulse) {
  const int64_t prevPulseNs = readout::ticksToNs(0, 82'763'036);
  Datagram d;
  CdtReadout early = readout(0, 0, 6, 32, 32);
  early.timeHigh = 0;
  early.timeLow = 85'000'000; // between the previous pulse and the pulse
  d.add(early).add(readout(0, 0, 6, 32, 32, 1000));
  process(d);
  ASSERT_EQ(events().size(), 2u);
  const int64_t earlyNs = readout::ticksToNs(0, 85'000'000);
  EXPECT_EQ(events()[0],
            (RecordedEvent{prevPulseNs, static_cast<int32_t>(earlyNs - prevPulseNs), 71687}));
  EXPECT_EQ(events()[0].pulseTimeNs + events()[0].tofNs, earlyNs);
  EXPECT_EQ(events()[1], (RecordedEvent{kPulseNs, tofOf(1000), 71687}));
  EXPECT_EQ(stat("events.timestamp.prevtof.count"), 1);
}

TEST_F(DreamModuleTest, OtherInstrumentsHeadersAreRefused) {
  Datagram magic(readout::kTypeMagic);
  magic.add(readout(0, 0, 6, 32, 32));
  process(magic);
  EXPECT_EQ(stat("parser.essheader.errors.type"), 1);
  EXPECT_TRUE(events().empty());
  create("MagicInst.json");
  Datagram m(readout::kTypeMagic);
  m.add(readout(5, 0, 0, 0, 0)); // PA: 245760 + 1
  process(m);
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].pixelId, 245761);
}

// The one deviation: a PA readout the PA geometry refuses is counted and dropped; the ESS EFU
// adds the PA offset to its 0 and publishes it at pixel 245760, the forward detector's last.
TEST_F(DreamModuleTest, MagicPaRefusalsAreDroppedNotPublishedAtTheOffset) {
  create("MagicInst.json");
  Datagram m(readout::kTypeMagic);
  m.add(readout(5, 0, 0, 192, 128)); // cassette 16
  process(m);
  EXPECT_TRUE(events().empty());
  EXPECT_EQ(stat("padetector.geometry.cassette_id_errors"), 1);
  EXPECT_EQ(stat("geometry.pixel_errors"), 1);
}

/// Round trip: DreamSource encodes every position of the image; the module forms from the
/// datagrams exactly the events the source reported.
class Recorder final : public sdk::TruthSink {
public:
  void add(int64_t pulseTimeNs, int64_t tofNs, int32_t pixelId) override {
    events.push_back({pulseTimeNs, static_cast<int32_t>(tofNs), pixelId});
  }
  std::vector<RecordedEvent> events;
};

TEST_F(DreamModuleTest, EveryImagePositionRoundTripsThroughTheSource) {
  for (const char *file : {"DreamInst.json", "MagicInst.json", "HeimdalInst.json", "hr.json"}) {
    create(file);
    DreamSource source(shipped(file), file, 1);
    EXPECT_EQ(source.detectorType(), detectorType(module_->config().instrument));
    Recorder truth;
    std::vector<uint8_t> buf(kReadoutBytes);
    uint64_t index = 0;
    Datagram d(source.detectorType());
    size_t inDatagram = 0;
    for (uint32_t y = 0; y < source.imageHeight(); y += 7) {
      for (uint32_t x = 0; x < source.imageWidth(); x += 5) {
        sdk::Neutron n;
        n.x = x;
        n.y = y;
        n.pulse = kPulse;
        n.pulseTimeNs = kPulseNs;
        n.eventTime = EssTime{1, 1000 + static_cast<uint32_t>(index % 5000)};
        n.eventTimeNs = readout::ticksToNs(n.eventTime.high, n.eventTime.low);
        n.index = index++;
        if (source.encodeEvent(n, buf, truth) != 0) {
          CdtReadout r;
          std::memcpy(&r, buf.data(), kReadoutBytes);
          d.add(r);
          if (++inDatagram == 500) {
            process(d);
            d = Datagram(source.detectorType());
            inDatagram = 0;
          }
        }
      }
    }
    process(d);
    ASSERT_GT(truth.events.size(), 1000u) << file;
    // Within a datagram the module publishes part type by part type: compare as multisets.
    EXPECT_EQ(readout::sortedEvents(events()), readout::sortedEvents(truth.events)) << file;
    EXPECT_EQ(stat("geometry.pixel_errors"), 0) << file;
    EXPECT_EQ(stat("geometry.validation_errors"), 0) << file;
  }
}

TEST(DreamImage, EachPartFileIsDrawnInItsOwnShape) {
  struct Row {
    const char *file;
    uint32_t width, height, firstPixel;
  };
  for (const Row &r : {Row{"fwec.json", 280, 256, 1}, Row{"bwec.json", 616, 256, 71681},
                       Row{"mantle.json", 256, 1920, 229377}, Row{"sans.json", 112, 3584, 720897},
                       Row{"hr.json", 112, 3584, 1122305}, Row{"HeimdalInst.json", 144, 2048, 1},
                       // Mixed: from pixel 1, the largest part's width (FR; the mantle).
                       Row{"MagicInst.json", 128, (245760 + 256 * 512) / 128, 1},
                       Row{"DreamInst.json", 256, (1122304 + 112 * 3584) / 256, 1}}) {
    const ImageShape s = imageShape(parseDreamConfig(shipped(r.file), r.file));
    EXPECT_EQ(s.width, r.width) << r.file;
    EXPECT_EQ(s.height, r.height) << r.file;
    EXPECT_EQ(s.firstPixel, r.firstPixel) << r.file;
  }
}

// issue 38 item 1: the ESS EFU publishes under the binary's detector name
// (ess-dmsc/event-formation-unit 8b399165, src/modules/dream/DreamBase.h: EV44Serializer(...,
// EFUSettings.DetectorName, ...), set by MainProg from main.cpp, main_magic.cpp and
// main_heimdal.cpp: "dream", "magic", "heimdal"); efu takes it from the file's Detector, so
// `efu -d dream -f MagicInst.json` publishes under "magic" as the ESS magic binary does.
TEST(DreamModule, TheDefaultSourceIsTheEssEfusDetectorName) {
  EXPECT_EQ(readout::declaredSourceName<DreamModule>(shipped("DreamInst.json"), "DreamInst.json"),
            "dream");
  EXPECT_EQ(readout::declaredSourceName<DreamModule>(shipped("MagicInst.json"), "MagicInst.json"),
            "magic");
  EXPECT_EQ(
      readout::declaredSourceName<DreamModule>(shipped("HeimdalInst.json"), "HeimdalInst.json"),
      "heimdal");
}

} // namespace
} // namespace efu::dream
