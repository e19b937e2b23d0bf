// SPDX-License-Identifier: BSD-2-Clause
// The vmm3 module in-process with a fake context: datagrams in, exact counters and events out.
// Scenarios marked "ESS" are the ESS EFU's (ess-dmsc/event-formation-unit 8b399165,
// src/modules/freia/test/FreiaInstrumentTest.cpp and src/common/readout/vmm3/test/) with their
// readouts and expectations, run through the whole module against the shipped ESS files.
#include "modules/vmm3/Vmm3Module.h"
#include "modules/vmm3/Vmm3Source.h"
#include "tests/modules/vmm3/Vmm3TestSupport.h"
#include "tests/support/FakeModuleContext.h"
#include "tests/support/ModuleFixture.h"
#include "tests/support/SourceDatagrams.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace efu::vmm3 {
namespace {

using readout::EssTime;
using readout::FakeModuleContext;
using readout::RecordedEvent;
using test::Datagram;
using test::rawShipped;
using test::shipped;

constexpr EssTime kPulse{1, 0};              // 1 s: small enough for exact doubles
constexpr EssTime kPrevPulse{0, 82'763'036}; // 60 ms before it (freia.json allows 71.4 ms)
constexpr int64_t kPulseNs = 1'000'000'000;

class Vmm3ModuleTest : public readout::test::ModuleFixture<Vmm3Module> {
protected:
  void SetUp() override { create(shipped("freia.json"), "freia.json"); }
};

/// freia.json cassette 0 (ring 0, FEN 0, hybrid 0): x = 63 - strip channel on VMM 1, y = 47 -
/// wire channel on VMM 0.
Vmm3Readout fx(uint32_t x, uint16_t adc, uint32_t low = 1000, uint8_t tdc = 0, uint32_t high = 1) {
  return test::readout(0, 0, 1, static_cast<uint8_t>(63 - x), adc, high, low, tdc);
}
Vmm3Readout fy(uint32_t y, uint16_t adc, uint32_t low = 1000, uint8_t tdc = 0, uint32_t high = 1) {
  return test::readout(0, 0, 0, static_cast<uint8_t>(47 - y), adc, high, low, tdc);
}
constexpr int32_t freiaPixel(uint32_t x, uint32_t y) {
  return static_cast<int32_t>(y * 64 + x + 1);
}

TEST_F(Vmm3ModuleTest, CountersAreTheEssNames) {
  for (const char *name : {"readouts.count",
                           "readouts.error_size",
                           "readouts.error_fiber",
                           "readouts.error_fen",
                           "readouts.error_datalen",
                           "readouts.error_timefrac",
                           "readouts.error_bc",
                           "readouts.error_adc",
                           "readouts.error_vmm",
                           "readouts.error_channel",
                           "readouts.bccalib",
                           "readouts.data",
                           "readouts.over_threshold",
                           "readouts.adc_max",
                           "readouts.adc_below_threshold",
                           "geometry.ring_errors",
                           "geometry.fen_errors",
                           "geometry.hybrid_mapping_errors",
                           "geometry.wire_channel_range_errors",
                           "geometry.strip_channel_range_errors",
                           "geometry.validation_errors",
                           "geometry.invalid_xcoord_error",
                           "geometry.invalid_ycoord_error",
                           "geometry.pixel_errors",
                           "cluster.matched_clusters",
                           "cluster.wire_only",
                           "cluster.strip_only",
                           "cluster.no_coincidence",
                           "cluster.span_too_large",
                           "cluster.split",
                           "cluster.split_discarded",
                           "events.wire_gaps",
                           "events.strip_gaps",
                           "events.count",
                           "events.timestamp.tof.count",
                           "events.timestamp.tof.negative",
                           "events.timestamp.tof.high",
                           "events.timestamp.prevtof.count",
                           "events.timestamp.prevtof.negative",
                           "events.timestamp.prevtof.high",
                           "parser.essheader.ok",
                           "parser.essheader.errors.type"}) {
    EXPECT_TRUE(ctx_->has(name)) << name;
  }
  EXPECT_NE(ctx_->lossLost(), nullptr);
  EXPECT_NE(ctx_->lossExpected(), nullptr);
}

TEST_F(Vmm3ModuleTest, OneNeutronIsOneEventWithTheEssPixel) {
  Datagram d(readout::kTypeFreia, kPulse, kPrevPulse);
  // x: 9 (100), 10 (300), 11 (100) → 10; y: 20 (100), 21 (300) → 20.75 → 21.
  d.add(fx(9, 100)).add(fx(10, 300)).add(fx(11, 100)).add(fy(20, 100)).add(fy(21, 300));
  process(d);
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0], (RecordedEvent{kPulseNs, 11390, freiaPixel(10, 21)}));
  EXPECT_EQ(moved(), (std::map<std::string, int64_t>{{"readouts.count", 5},
                                                     {"readouts.data", 5},
                                                     {"cluster.matched_clusters", 1},
                                                     {"events.count", 1},
                                                     {"events.timestamp.tof.count", 1}}));
  EXPECT_EQ(stat("parser.essheader.ok"), 1);
}

TEST_F(Vmm3ModuleTest, HalfACoordinateRoundsAwayFromZero) {
  Datagram d(readout::kTypeFreia, kPulse, kPrevPulse);
  d.add(fx(4, 100)).add(fx(5, 100)).add(fy(6, 100)).add(fy(7, 100)); // 4.5 → 5, 6.5 → 7
  process(d);
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0].pixelId, freiaPixel(5, 7));
}

TEST_F(Vmm3ModuleTest, EachReadoutErrorIsCountedExactly) {
  // n readouts of each error kind (n = 1..8, in the enum order), then a valid pair.
  Datagram d(readout::kTypeFreia, kPulse, kPrevPulse);
  const std::vector<std::pair<std::string, void (*)(Vmm3Readout &)>> kinds{
      {"fiber", [](Vmm3Readout &r) { r.fiber = 24; }},
      {"fen", [](Vmm3Readout &r) { r.fen = 24; }},
      {"datalen", [](Vmm3Readout &r) { r.length = 21; }},
      {"timefrac", [](Vmm3Readout &r) { r.timeLow = 88'052'500; }},
      {"bc", [](Vmm3Readout &r) { r.bc = 4096; }},
      {"adc", [](Vmm3Readout &r) { r.otadc = 0x8400; }},
      {"vmm", [](Vmm3Readout &r) { r.vmm = 16; }},
      {"channel", [](Vmm3Readout &r) { r.channel = 64; }},
  };
  int64_t bad = 0;
  for (size_t k = 0; k < kinds.size(); ++k) {
    for (size_t i = 0; i <= k; ++i) {
      Vmm3Readout r = fx(10, 100);
      r.otadc |= 0x8000; // over threshold, but refused: not counted
      kinds[k].second(r);
      d.add(r);
      ++bad;
    }
  }
  d.add(fx(10, 100)).add(fy(20, 100));
  process(d);
  std::map<std::string, int64_t> expected{{"readouts.count", bad + 2},
                                          {"readouts.data", 2},
                                          {"cluster.matched_clusters", 1},
                                          {"events.count", 1},
                                          {"events.timestamp.tof.count", 1}};
  for (size_t k = 0; k < kinds.size(); ++k) {
    expected["readouts.error_" + kinds[k].first] = static_cast<int64_t>(k + 1);
  }
  EXPECT_EQ(moved(), expected);
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0].pixelId, freiaPixel(10, 20));
}

TEST_F(Vmm3ModuleTest, APayloadNotOfWholeReadoutsIsDropped) {
  // VMM3ParserTest.cpp ErrorAPISize: 19 bytes: ErrorSize 1, Readouts 0. The same for two
  // readouts and one byte: nothing of the datagram is used.
  Datagram a(readout::kTypeFreia, kPulse, kPrevPulse);
  a.raw(std::vector<uint8_t>(19, 0));
  process(a);
  Datagram b(readout::kTypeFreia, kPulse, kPrevPulse, 1);
  b.add(fx(10, 100)).add(fy(20, 100)).raw({0});
  process(b);
  EXPECT_EQ(moved(), (std::map<std::string, int64_t>{{"readouts.error_size", 2}}));
  EXPECT_TRUE(events().empty());
  EXPECT_EQ(stat("parser.essheader.ok"), 2);
  // A heartbeat (no payload) is no error.
  Datagram c(readout::kTypeFreia, kPulse, kPrevPulse, 2);
  process(c);
  EXPECT_EQ(stat("readouts.error_size"), 2);
  EXPECT_EQ(stat("parser.essheader.heartbeats"), 1);
  // The next whole datagram is used.
  Datagram e(readout::kTypeFreia, kPulse, kPrevPulse, 3);
  e.add(fx(10, 100)).add(fy(20, 100));
  process(e);
  EXPECT_EQ(events().size(), 1U);
  EXPECT_EQ(stat("readouts.count"), 2);
}

TEST_F(Vmm3ModuleTest, HeaderRefusalsUseNoReadout) {
  // Freia takes only type 0x48; a pulse more than MaxPulseTimeNS (71428570) after the previous
  // one is refused (parser.essheader.errors.timehigh).
  Datagram wrongType(readout::kTypeEstia, kPulse, kPrevPulse);
  wrongType.add(fx(10, 100)).add(fy(20, 100));
  process(wrongType);
  Datagram farPulse(readout::kTypeFreia, kPulse, {0, 0});
  farPulse.add(fx(10, 100)).add(fy(20, 100));
  process(farPulse);
  // The 14 Hz pulse period is 6289464.3 ticks: a gap of 6289465 ticks (71428578 ns) exceeds
  // freia.json's 71428570 and is refused, as the ESS EFU's Parser.cpp refuses it; 6289464
  // ticks (71428566 ns) is taken.
  Datagram longGap(readout::kTypeFreia, {2, 6'289'465}, {2, 0});
  longGap.add(fx(10, 100)).add(fy(20, 100));
  process(longGap);
  EXPECT_EQ(stat("parser.essheader.errors.type"), 1);
  EXPECT_EQ(stat("parser.essheader.errors.timehigh"), 2);
  EXPECT_EQ(stat("readouts.count"), 0);
  EXPECT_TRUE(events().empty());
  Datagram shortGap(readout::kTypeFreia, {2, 6'289'464}, {2, 0});
  shortGap.add(fx(10, 100, 1000, 0, 3)).add(fy(20, 100, 1000, 0, 3));
  process(shortGap);
  EXPECT_EQ(stat("parser.essheader.errors.timehigh"), 2);
  EXPECT_EQ(stat("readouts.count"), 2);
  EXPECT_EQ(events().size(), 1U);
}

TEST_F(Vmm3ModuleTest, GeometryErrorsOfRingFenAndHybrid) {
  Datagram d(readout::kTypeFreia, kPulse, kPrevPulse);
  auto at = [](uint8_t fiber, uint8_t fen, uint8_t vmm) {
    Vmm3Readout r = fx(10, 100);
    r.fiber = fiber;
    r.fen = fen;
    r.vmm = vmm;
    r.channel = 20; // valid for wires and strips
    return r;
  };
  // Fibers 22 and 23 are ring 11 (> 10), fiber 21 ring 10 (a configured y hit); FEN 14 and 23
  // are above 13; ring 0 FEN 13, ring 3 FEN 1, ring 0 VMM 4/5 (hybrid 2) and ring 10 FEN 13
  // are not in freia.json.
  d.add(at(22, 0, 0)).add(at(23, 0, 1)).add(at(21, 0, 0));
  d.add(at(0, 14, 0)).add(at(0, 23, 1)).add(at(0, 13, 0));
  d.add(at(6, 1, 0)).add(at(0, 0, 4)).add(at(1, 0, 5)).add(at(20, 13, 15));
  // A ring error wins over a bad FEN, a FEN error over an unknown hybrid.
  d.add(at(23, 23, 15)).add(at(2, 20, 15));
  process(d);
  EXPECT_EQ(moved(), (std::map<std::string, int64_t>{{"readouts.count", 12},
                                                     {"readouts.data", 12},
                                                     {"geometry.ring_errors", 3},
                                                     {"geometry.fen_errors", 3},
                                                     {"geometry.hybrid_mapping_errors", 5},
                                                     {"geometry.validation_errors", 11},
                                                     {"cluster.no_coincidence", 1},
                                                     {"cluster.wire_only", 1}}));
}

TEST_F(Vmm3ModuleTest, ChannelRangeErrorsCountThePlane) {
  // Freia: wires (y, even VMMs) read channels 16..47; a strip channel above 63 is refused by
  // the readout check first (error_channel), so strip_channel_range_errors cannot count, as in
  // the ESS EFU.
  Datagram d(readout::kTypeFreia, kPulse, kPrevPulse);
  for (const uint8_t ch : {0, 15, 48, 63}) {
    d.add(test::readout(0, 0, 0, ch, 100, 1, 1000));
  }
  d.add(test::readout(0, 0, 1, 64, 100, 1, 1000));
  process(d);
  EXPECT_EQ(moved(), (std::map<std::string, int64_t>{{"readouts.count", 5},
                                                     {"readouts.data", 4},
                                                     {"readouts.error_channel", 1},
                                                     {"geometry.wire_channel_range_errors", 4},
                                                     {"geometry.invalid_ycoord_error", 4},
                                                     {"geometry.validation_errors", 4}}));
  // ESTIA: the wires are x (odd VMMs).
  create(shipped("estia_config.json"), "estia_config.json");
  Datagram e(readout::kTypeEstia, kPulse, kPrevPulse);
  e.add(test::readout(0, 0, 1, 15, 100, 1, 1000)).add(test::readout(0, 0, 1, 48, 100, 1, 1000));
  e.add(test::readout(0, 0, 0, 0, 100, 1, 1000)); // a valid strip alone: no coincidence
  process(e);
  EXPECT_EQ(moved(), (std::map<std::string, int64_t>{{"readouts.count", 3},
                                                     {"readouts.data", 3},
                                                     {"geometry.wire_channel_range_errors", 2},
                                                     {"geometry.invalid_xcoord_error", 2},
                                                     {"geometry.validation_errors", 2},
                                                     {"cluster.no_coincidence", 1},
                                                     {"cluster.wire_only", 1}}));
}

/// freia.json with thresholds on cassette 0: VMM 0 (y) 100, VMM 1 (x) 200.
nlohmann::json freiaWithThresholds() {
  nlohmann::json f = rawShipped("freia.json");
  f["Config"][0]["Thresholds"] = nlohmann::json::parse("[[100], [200]]");
  return test::validated(f, "freia.json");
}

TEST_F(Vmm3ModuleTest, ThresholdsPerVmmOnTheRawOtadc) {
  create(freiaWithThresholds(), "freia.json");
  Datagram d(readout::kTypeFreia, kPulse, kPrevPulse);
  d.add(fy(20, 99)).add(fy(21, 100));  // 99 dropped
  d.add(fx(10, 199)).add(fx(11, 200)); // 199 dropped
  // The ESS EFU compares the whole OTADC word: the over-threshold bit lifts ADC 50 above 200.
  d.add(fx(12, 0x8000 | 50));
  // Cassette 1 (VMMs 2, 3) has threshold 0.
  d.add(test::readout(0, 0, 3, 63, 0, 1, 1000)).add(test::readout(0, 0, 2, 47, 0, 1, 1000));
  process(d);
  EXPECT_EQ(stat("readouts.adc_below_threshold"), 2);
  EXPECT_EQ(stat("readouts.over_threshold"), 1);
  EXPECT_EQ(stat("geometry.validation_errors"), 0); // not a geometry error
  ASSERT_EQ(events().size(), 2U);
  // Cassette 0: x 11 (200) and 12 (50) → 11.2 → 11; y 21. Cassette 1: x 0, y 32 with weights 0
  // (the centre of no weight is 0: y offset lost, as the ESS EFU computes it).
  EXPECT_EQ(events()[0].pixelId, freiaPixel(11, 21));
  EXPECT_EQ(events()[1].pixelId, freiaPixel(0, 0));
}

TEST_F(Vmm3ModuleTest, OverThresholdCalibrationDataAndAdcMax) {
  Datagram d(readout::kTypeFreia, kPulse, kPrevPulse);
  Vmm3Readout calib = fx(10, 100);
  calib.geo = 0x80; // a calibration readout: still a hit, as in the ESS EFU
  Vmm3Readout geo = fx(10, 100);
  geo.geo = 0x7F; // other GEO bits: data
  d.add(calib).add(geo).add(fx(11, 0x8000 | 1023)).add(fy(20, 1023)).add(fy(21, 1022));
  Vmm3Readout badCalib = fx(10, 100);
  badCalib.geo = 0x80;
  badCalib.vmm = 16; // refused first: neither data nor calibration
  d.add(badCalib);
  process(d);
  EXPECT_EQ(moved(), (std::map<std::string, int64_t>{{"readouts.count", 6},
                                                     {"readouts.error_vmm", 1},
                                                     {"readouts.bccalib", 1},
                                                     {"readouts.data", 4},
                                                     {"readouts.over_threshold", 1},
                                                     {"readouts.adc_max", 2},
                                                     {"cluster.matched_clusters", 1},
                                                     {"events.count", 1},
                                                     {"events.timestamp.tof.count", 1}}));
}

TEST_F(Vmm3ModuleTest, OnePlaneOnlyIsNoCoincidence) {
  // FreiaInstrumentTest.cpp ClusterWireOnly / ClusterStripOnly: no event; the plane y part
  // counts wire_only, the plane x part strip_only (on every layout, as the ESS EFU names them).
  Datagram d(readout::kTypeFreia, kPulse, kPrevPulse);
  d.add(fx(10, 100)).add(fx(11, 100));             // cassette 0: x only
  d.add(test::readout(0, 0, 2, 40, 100, 1, 1000)); // cassette 1: y only
  d.add(test::readout(0, 1, 0, 40, 100, 1, 1000)).add(test::readout(0, 1, 0, 41, 100, 1, 1000));
  process(d);
  EXPECT_TRUE(events().empty());
  EXPECT_EQ(moved(), (std::map<std::string, int64_t>{{"readouts.count", 5},
                                                     {"readouts.data", 5},
                                                     {"cluster.no_coincidence", 3},
                                                     {"cluster.strip_only", 1},
                                                     {"cluster.wire_only", 2}}));
}

TEST_F(Vmm3ModuleTest, WireAndStripGaps) {
  // FreiaInstrumentTest.cpp WireGap (y at 1 and 3) and StripGap (x at 1 and 3): no event with
  // freia.json's MaxGapWire = MaxGapStrip = 0.
  auto run = [this](const std::vector<Vmm3Readout> &rs) {
    Datagram d(readout::kTypeFreia, kPulse, kPrevPulse);
    for (const Vmm3Readout &r : rs) {
      d.add(r);
    }
    process(d);
  };
  run({fx(1, 100), fy(1, 100), fy(3, 100)});
  EXPECT_EQ(stat("events.wire_gaps"), 1);
  run({fx(1, 100), fx(3, 100), fy(1, 100)});
  EXPECT_EQ(stat("events.strip_gaps"), 1);
  // Both: the wire gap is checked first.
  run({fx(1, 100), fx(3, 100), fy(1, 100), fy(3, 100)});
  EXPECT_EQ(stat("events.wire_gaps"), 2);
  EXPECT_EQ(stat("events.strip_gaps"), 1);
  // Adjacent: no gap. A repeated coordinate counts as a hit and hides the missing one (span 3,
  // 3 hits), as the ESS EFU counts.
  run({fx(1, 100), fx(2, 100), fy(1, 100), fy(1, 100), fy(3, 100)});
  EXPECT_EQ(stat("events.wire_gaps"), 2);
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0].pixelId, freiaPixel(2, 2)); // x 1.5 → 2, y (1 + 1 + 3) / 3 → 2
  EXPECT_EQ(stat("cluster.matched_clusters"), 1);   // gap events are not matched ones
  EXPECT_EQ(stat("events.count"), 1);

  // amor.json allows one missing coordinate (MaxGapWire = MaxGapStrip = 1); AMOR cassette 13
  // is ring 0 FEN 0 hybrid 0: x strips on VMM 0, y wires on VMM 1 (y offset 416).
  create(shipped("amor.json"), "amor.json");
  auto ax = [](uint32_t x) {
    return test::readout(0, 0, 0, static_cast<uint8_t>(63 - x), 100, 1, 1000);
  };
  auto ay = [](uint32_t y) {
    return test::readout(0, 0, 1, static_cast<uint8_t>(47 - (y - 416)), 100, 1, 1000);
  };
  run({ax(1), ax(3), ay(420), ay(422)}); // one missing in each: taken
  run({ax(1), ax(4), ay(420)});          // two missing strips
  run({ax(1), ay(420), ay(423)});        // two missing wires
  EXPECT_EQ(stat("events.count"), 1);
  EXPECT_EQ(stat("events.strip_gaps"), 1);
  EXPECT_EQ(stat("events.wire_gaps"), 1);
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0].pixelId, static_cast<int32_t>(421 * 64 + 2 + 1));
}

TEST_F(Vmm3ModuleTest, TwoNeutronsOfOneDatagram) {
  // Further apart than MaxMatchingTimeGap (and MaxClusteringTimeGap): two events; within it,
  // one event whose centre is the charge-weighted mean of both.
  Datagram far(readout::kTypeFreia, kPulse, kPrevPulse);
  far.add(fx(5, 100)).add(fy(5, 100)).add(fx(50, 100, 1100)).add(fy(25, 100, 1100));
  process(far);
  ASSERT_EQ(events().size(), 2U);
  EXPECT_EQ(events()[0], (RecordedEvent{kPulseNs, 11390, freiaPixel(5, 5)}));
  // 1100 ticks: 12492 ns + 34.08 → 12526; nearest tick 1103 → 12526.
  EXPECT_EQ(events()[1].pixelId, freiaPixel(50, 25));
  EXPECT_EQ(events()[1].tofNs, 12526);

  create(shipped("freia.json"), "freia.json");
  Datagram near(readout::kTypeFreia, kPulse, kPrevPulse);
  near.add(fx(5, 100)).add(fy(5, 100)).add(fx(50, 300, 1010)).add(fy(25, 300, 1010));
  process(near);
  EXPECT_TRUE(events().empty());
  // x: (5 x 100 + 50 x 300) / 400 = 38.75 → 39; y: (500 + 7500) / 400 = 20; but the planes now
  // span 46 and 21 coordinates with 2 hits each: gaps. Only with room for them is it an event.
  EXPECT_EQ(stat("events.wire_gaps"), 1);
  nlohmann::json wide = rawShipped("freia.json");
  wide["MaxGapWire"] = 255;
  wide["MaxGapStrip"] = 255;
  create(test::validated(wide), "freia.json");
  process(near);
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0], (RecordedEvent{kPulseNs, 11390, freiaPixel(39, 20)}));
}

TEST_F(Vmm3ModuleTest, TimeGapsAtTheirLimits) {
  // Hit times (1 s + ticks + 34.08 - 60 TDC / 255 ns, truncated): (1000, 0) → 1000011390;
  // (1044, 0) → +500; (1045, 39) → +501. The gaps join what is at most 500 ns apart.
  auto run = [this](const std::vector<Vmm3Readout> &rs) {
    Datagram d(readout::kTypeFreia, kPulse, kPrevPulse);
    for (const Vmm3Readout &r : rs) {
      d.add(r);
    }
    process(d);
  };
  // Matching: y 500 ns after x joins; 501 ns after does not.
  run({fx(10, 100), fy(20, 100, 1044)});
  EXPECT_EQ(stat("events.count"), 1);
  run({fx(10, 100), fy(20, 100, 1045, 39)});
  EXPECT_EQ(stat("events.count"), 1);
  EXPECT_EQ(stat("cluster.strip_only"), 1);
  EXPECT_EQ(stat("cluster.wire_only"), 1);
  // Clustering within a plane: x 10 then x 11 500 ns later is one cluster; 501 ns later, the
  // second starts a new event (x only).
  run({fx(10, 100), fx(11, 100, 1044), fy(20, 100)});
  EXPECT_EQ(stat("events.count"), 2);
  EXPECT_EQ(events().back().pixelId, freiaPixel(11, 20)); // 10.5 → 11
  run({fx(10, 100), fx(11, 100, 1045, 39), fy(20, 100)});
  EXPECT_EQ(stat("events.count"), 3);
  EXPECT_EQ(events().back().pixelId, freiaPixel(10, 20));
  EXPECT_EQ(stat("cluster.strip_only"), 2);
  // Custom gaps: MaxClusteringTimeGap 100, MaxMatchingTimeGap 50.
  nlohmann::json f = rawShipped("freia.json");
  f["MaxClusteringTimeGap"] = 100;
  f["MaxMatchingTimeGap"] = 50;
  create(test::validated(f), "freia.json");
  // (1004, 0) → +46 ns: matched; (1009, 0) → +103 ns: not.
  run({fx(10, 100), fy(20, 100, 1004)});
  run({fx(10, 100), fy(20, 100, 1009)});
  EXPECT_EQ(stat("events.count"), 1);
  EXPECT_EQ(stat("cluster.no_coincidence"), 2);
}

TEST_F(Vmm3ModuleTest, NothingCarriesOverBetweenDatagrams) {
  // The ESS EFU clusters each datagram on its own (processReadouts flushes every builder):
  // the x of one datagram and the y of the next, at the same time, are two one-plane events.
  Datagram a(readout::kTypeFreia, kPulse, kPrevPulse, 0);
  a.add(fx(10, 100));
  Datagram b(readout::kTypeFreia, kPulse, kPrevPulse, 1);
  b.add(fy(20, 100));
  process(a);
  process(b);
  EXPECT_TRUE(events().empty());
  EXPECT_EQ(stat("cluster.no_coincidence"), 2);
  EXPECT_EQ(stat("cluster.strip_only"), 1);
  EXPECT_EQ(stat("cluster.wire_only"), 1);
  // And a later datagram is not disturbed by anything before.
  Datagram c(readout::kTypeFreia, kPulse, kPrevPulse, 2);
  c.add(fx(10, 100)).add(fy(20, 100));
  process(c);
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0].pixelId, freiaPixel(10, 20));
}

TEST_F(Vmm3ModuleTest, HandComputedEventTimes) {
  // hit time = trunc(double(ticksToNs) + 34.08 - 60 TDC / 255); the TOF is taken from the
  // earliest hit converted to the nearest tick and back (readout::eventTimeNs).
  struct Case {
    const char *what;
    EssTime pulse, prevPulse;
    uint32_t high, low;
    uint8_t xTdc, yTdc;
    int64_t pulseNs;
    int32_t tof;
  };
  const std::vector<Case> cases{
      // 1000 ticks = 11356 ns; + 34.08 → 11390, 1003 ticks → 11390.
      {"tdc 0", kPulse, kPrevPulse, 1, 1000, 0, 0, kPulseNs, 11390},
      // tdc 255: 11356 + 34.08 - 60 = 11330.08 → 11330; nearest tick 998 → 11334.
      {"tdc 255", kPulse, kPrevPulse, 1, 1000, 255, 255, kPulseNs, 11334},
      // The earliest plane sets it.
      {"x tdc 255, y 0", kPulse, kPrevPulse, 1, 1000, 255, 0, kPulseNs, 11334},
      {"x tdc 0, y 255", kPulse, kPrevPulse, 1, 1000, 0, 255, kPulseNs, 11334},
      // tdc 128: 11356 + 3.96 → 11359; tick 1000 → 11356.
      {"tdc 128", kPulse, kPrevPulse, 1, 1000, 128, 128, kPulseNs, 11356},
      // In today's epoch the double holds multiples of 256 ns: 1.7e18 + 11356 + 34.08 →
      // 1.7e18 + 11264 (whatever the TDC); tick 992 → 11266.
      {"epoch tdc 0",
       {1'700'000'000, 0},
       {1'699'999'999, 82'763'036},
       1'700'000'000,
       1000,
       0,
       0,
       1'700'000'000'000'000'000,
       11266},
      {"epoch tdc 255",
       {1'700'000'000, 0},
       {1'699'999'999, 82'763'036},
       1'700'000'000,
       1000,
       255,
       255,
       1'700'000'000'000'000'000,
       11266},
      // FreiaInstrumentTest.cpp GoodEvent's times: pulse (0, 0), ticks 1 and 17 → 11 + 34.08
      // → 45, tick 4 → 45.
      {"time 0", {0, 0}, {0, 0}, 0, 1, 0, 0, 0, 45},
  };
  for (const Case &c : cases) {
    create(shipped("freia.json"), "freia.json");
    Datagram d(readout::kTypeFreia, c.pulse, c.prevPulse);
    d.add(fx(10, 100, c.low, c.xTdc, c.high)).add(fy(20, 100, c.low, c.yTdc, c.high));
    process(d);
    ASSERT_EQ(events().size(), 1U) << c.what;
    EXPECT_EQ(events()[0], (RecordedEvent{c.pulseNs, c.tof, freiaPixel(10, 20)})) << c.what;
  }
  // readout::eventTimeNs itself.
  EXPECT_EQ(readout::eventTimeNs(1'000'011'330), 1'000'011'334);
  EXPECT_EQ(readout::eventTimeNs(1'000'011'390), 1'000'011'390);
  EXPECT_EQ(readout::eventTimeNs(1'700'000'000'000'011'264), 1'700'000'000'000'011'266);
  EXPECT_EQ(readout::eventTimeNs(0), 0);
  // A time past the last tick of a second: 999999999 ns is 88052499.9 ticks → 88052500 → one
  // tick beyond, converted as the ESS EFU converts (not normalised): 1e9 + 5 ns.
  EXPECT_EQ(readout::eventTimeNs(999'999'999), readout::ticksToNs(0, 88'052'500));
}

TEST_F(Vmm3ModuleTest, TimeOfFlightCounters) {
  // FreiaInstrumentTest.cpp NegativeTOFFallback, NegativePrevTOFError and HighTOFError, with
  // pulses freia.json's MaxPulseTimeNS accepts. The readouts: (1 s, 1000 ticks) → 1000011390.
  struct Case {
    const char *what;
    EssTime pulse, prevPulse;
    std::map<std::string, int64_t> counters;
    std::vector<RecordedEvent> events;
  };
  const std::vector<Case> cases{
      {"after the pulse",
       kPulse,
       kPrevPulse,
       {{"events.timestamp.tof.count", 1}},
       {{kPulseNs, 11390, freiaPixel(10, 20)}}},
      // Before the pulse, after the previous one: measured from the previous pulse.
      {"before the pulse",
       {1, 2000},
       kPulse,
       {{"events.timestamp.tof.negative", 1}, {"events.timestamp.prevtof.count", 1}},
       {{kPulseNs, 11390, freiaPixel(10, 20)}}},
      // Before both.
      {"before both",
       {1, 3000},
       {1, 2000},
       {{"events.timestamp.tof.negative", 1}, {"events.timestamp.prevtof.negative", 1}},
       {}},
      // Exactly at the pulse: TOF 0.
      {"at the pulse",
       {1, 1003},
       {1, 0},
       {{"events.timestamp.tof.count", 1}},
       {{1'000'011'390, 0, freiaPixel(10, 20)}}},
  };
  for (const Case &c : cases) {
    create(shipped("freia.json"), "freia.json");
    Datagram d(readout::kTypeFreia, c.pulse, c.prevPulse);
    d.add(fx(10, 100)).add(fy(20, 100));
    process(d);
    std::map<std::string, int64_t> got;
    for (const auto &[name, value] : ctx_->snapshot()) {
      if (value != 0 && name.rfind("events.timestamp.", 0) == 0) {
        got[name] = value;
      }
    }
    EXPECT_EQ(got, c.counters) << c.what;
    EXPECT_EQ(events(), c.events) << c.what;
    EXPECT_EQ(stat("cluster.matched_clusters"), 1) << c.what;
    EXPECT_EQ(stat("events.count"), static_cast<int64_t>(c.events.size())) << c.what;
  }
  // HighTOFError: an event 3 s after the pulse (more than 1 s) is refused. amor.json allows
  // pulse gaps of 2.07 s, so also an event 2.5 s after the previous pulse, before the pulse.
  create(shipped("freia.json"), "freia.json");
  Datagram high(readout::kTypeFreia, {0, 0}, {0, 0});
  high.add(fx(10, 100, 0, 0, 3)).add(fy(20, 100, 0, 0, 3));
  process(high);
  EXPECT_EQ(stat("events.timestamp.tof.high"), 1);
  EXPECT_EQ(stat("events.count"), 0);
  create(shipped("amor.json"), "amor.json");
  Datagram prevHigh(readout::kTypeFreia, {3, 0}, {1, 0});
  prevHigh.add(test::readout(0, 0, 0, 20, 100, 2, 88'000'000));
  prevHigh.add(test::readout(0, 0, 1, 20, 100, 2, 88'000'000));
  process(prevHigh);
  EXPECT_EQ(stat("events.timestamp.tof.negative"), 1);
  EXPECT_EQ(stat("events.timestamp.prevtof.high"), 1);
  EXPECT_EQ(stat("events.count"), 0);
  EXPECT_EQ(stat("cluster.matched_clusters"), 1);
}

TEST_F(Vmm3ModuleTest, PixelErrorsCannotCountWithAcceptedFiles) {
  // Every coordinate of every cassette the parser takes lies in the image (test_vmm3_readout
  // EveryConfiguredChannelLiesInsideTheImage), so an event always has a pixel. The extreme
  // corners of each shipped geometry, through the module:
  struct Corner {
    const char *file;
    uint8_t type, ring, fen, xVmm, xCh, yVmm, yCh;
    int32_t pixel;
  };
  for (const Corner &k : std::vector<Corner>{
           {"freia.json", 0x48, 10, 1, 3, 0, 2, 16, 1023 * 64 + 63 + 1},
           {"freia.json", 0x48, 0, 0, 1, 63, 0, 47, 1},
           {"amor.json", 0x49, 0, 0, 0, 0, 1, 16, 447 * 64 + 63 + 1},
           {"tblmb.json", 0x48, 2, 0, 7 - 1, 63, 7, 47, 1},
           {"estia_config.json", 0x4C, 9, 0, 5, 47, 4, 0, 127 * 1536 + 1535 + 1},
           {"estia_config.json", 0x4C, 0, 0, 1, 16, 0, 63, 64 * 1536 + 1},
       }) {
    create(shipped(k.file), k.file);
    Datagram d(k.type, kPulse, kPrevPulse);
    d.add(test::readout(k.ring, k.fen, k.xVmm, k.xCh, 100, 1, 1000));
    d.add(test::readout(k.ring, k.fen, k.yVmm, k.yCh, 100, 1, 1000));
    process(d);
    ASSERT_EQ(events().size(), 1U) << k.file;
    EXPECT_EQ(events()[0].pixelId, k.pixel) << k.file;
    EXPECT_EQ(stat("geometry.pixel_errors"), 0) << k.file;
  }
}

// --- The FreiaInstrumentTest.cpp datagrams ---------------------------------------------------

struct EssScenario {
  const char *name;
  std::vector<uint8_t> payload;
  std::map<std::string, int64_t> counters; ///< every non-zero counter but the header's
  std::vector<RecordedEvent> events;
};

TEST_F(Vmm3ModuleTest, EssFreiaInstrumentScenarios) {
  // The readouts of FreiaInstrumentTest.cpp (FREIA_FULL = freia.json) behind a header with
  // pulse and previous pulse (0, 0), as its makeHeader() sets them.
  const std::vector<EssScenario> scenarios{
      // MaxRingMaxFENErrors: fiber 24 → ErrorFiber 1; FEN 24 → ErrorFEN 1; nothing parsed.
      {"MaxRingMaxFENErrors",
       {0x18, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x01, 0x00, 0x00, 0x00, 0x10, 0x02, 0x18, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x10},
       {{"readouts.count", 2}, {"readouts.error_fiber", 1}, {"readouts.error_fen", 1}},
       {}},
      // MappingError: fiber 22 (ring 11) → RingErrors 1; FEN 15 → FENErrors 1; ring 0 FEN 2 →
      // HybridMappingErrors 1; parser errors 0.
      {"MappingError",
       {0x16, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x04, 0x10, 0x00, 0x0F, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x04, 0x10, 0x01, 0x02, 0x14, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x04, 0x10},
       {{"readouts.count", 3},
        {"readouts.data", 3},
        {"geometry.ring_errors", 1},
        {"geometry.fen_errors", 1},
        {"geometry.hybrid_mapping_errors", 1},
        {"geometry.validation_errors", 3}},
       {}},
      // GoodEvent: ring 2 FEN 0 (cassette 8), y wire channel 16 at tick 1, x strip channel 16
      // at tick 17: one event (x 47, y 256 + 31), TOF 45 ns (the earliest hit, see
      // HandComputedEventTimes).
      {"GoodEvent",
       {0x04, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x01, 0x00, 0x00, 0x00, 0x10, 0x05, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x10},
       {{"readouts.count", 2},
        {"readouts.data", 2},
        {"cluster.matched_clusters", 1},
        {"events.count", 1},
        {"events.timestamp.tof.count", 1}},
       {{0, 45, 287 * 64 + 47 + 1}}},
      // InvalidChannel: wires 15 and 48 → InvalidYCoord 2; strip 65 → ErrorChannel 1; the
      // strip channel 0 passes (the ESS test overwrites it to 65 after parsing to reach
      // InvalidXCoord, which our readouts cannot do): a strip-only cluster.
      {"InvalidChannel",
       {0x04, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x01, 0x00, 0x00, 0x00, 0x0F, 0x05, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x30, 0x05, 0x00,
        0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x01, 0x41, 0x05, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x00},
       {{"readouts.count", 4},
        {"readouts.data", 3},
        {"readouts.error_channel", 1},
        {"geometry.wire_channel_range_errors", 2},
        {"geometry.invalid_ycoord_error", 2},
        {"geometry.validation_errors", 2},
        {"cluster.no_coincidence", 1},
        {"cluster.strip_only", 1}},
       {}},
  };
  for (const EssScenario &s : scenarios) {
    create(shipped("freia.json"), "freia.json");
    Datagram d(readout::kTypeFreia, {0, 0}, {0, 0});
    d.raw(s.payload);
    process(d);
    EXPECT_EQ(moved(), s.counters) << s.name;
    EXPECT_EQ(events(), s.events) << s.name;
  }
}

TEST_F(Vmm3ModuleTest, EssParserDatasetsThroughTheModule) {
  // VMM3ParserTest.cpp's datasets (VMM3ParserTestData.h): the parser counters it expects
  // (Readouts, Error*, OverThreshold, DataReadouts, CalibReadouts) are ours.
  struct Dataset {
    const char *name;
    std::vector<uint8_t> payload;
    std::map<std::string, int64_t> counters; ///< readouts.* only
  };
  const std::vector<Dataset> sets{
      {"VMMADCError",
       {0x00, 0x00, 0x14, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0x14, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0xff, 0x83, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02,
        0x14, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x84,
        0x00, 0x00, 0x00, 0x00, 0x03, 0x03, 0x14, 0x00, 0x01, 0x00, 0x00, 0x00, 0x03, 0x00,
        0x00, 0x00, 0x03, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x00},
       {{"readouts.count", 4},
        {"readouts.error_adc", 2},
        {"readouts.over_threshold", 1},
        {"readouts.data", 2}}},
      {"VMMCalib1",
       {0x01, 0x00, 0x14, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x01, 0x80, 0x00, 0x00, 0x00, 0x02, 0x01, 0x14, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x80, 0x00, 0x00, 0x00},
       {{"readouts.count", 2}, {"readouts.bccalib", 2}}},
      {"VMMData1",
       {0x01, 0x00, 0x14, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x02, 0x01, 0x14, 0x00, 0x01, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00},
       {{"readouts.count", 2}, {"readouts.data", 2}}},
  };
  for (const Dataset &s : sets) {
    create(shipped("freia.json"), "freia.json");
    Datagram d(readout::kTypeFreia, {1, 0}, {1, 0});
    d.raw(s.payload);
    process(d);
    std::map<std::string, int64_t> got;
    for (const auto &[name, value] : moved()) {
      if (name.rfind("readouts.", 0) == 0) {
        got[name] = value;
      }
    }
    EXPECT_EQ(got, s.counters) << s.name;
  }
}

// --- Round trip with readoutgen's encoder ---------------------------------------------------

using readout::test::encodePulses;
using readout::test::TruthList;

TEST(Vmm3RoundTrip, ReadoutgenNeutronsBecomeExactlyTheTruthEvents) {
  struct Run {
    const char *config, *calibration;
  };
  for (const Run &run : std::vector<Run>{{"freia.json", nullptr},
                                         {"freia.json", "calib.json"},
                                         {"amor.json", nullptr},
                                         {"tblmb.json", nullptr},
                                         {"estia_config.json", nullptr},
                                         {"estia_config.json", "estia_calib.json"}}) {
    for (const size_t perDatagram : {size_t{1}, size_t{3}, size_t{100000}}) {
      const std::string what = std::string(run.config) + " " +
                               (run.calibration ? run.calibration : "-") + " " +
                               std::to_string(perDatagram);
      const nlohmann::json config = shipped(run.config);
      const nlohmann::json calibration =
          run.calibration ? test::shippedCalibration(run.calibration) : nlohmann::json();
      Vmm3Source source(config, run.config, 7, calibration, run.calibration ? run.calibration : "");
      TruthList truth;
      const auto datagrams = encodePulses(source, 11, 3, 2000, perDatagram, truth);
      FakeModuleContext ctx(config, run.config);
      if (run.calibration) {
        ctx.setCalibration(calibration, run.calibration);
      }
      Vmm3Module module(ctx);
      for (const auto &d : datagrams) {
        module.process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
      }
      ASSERT_GT(truth.events.size(), 1000U) << what;
      const std::vector<RecordedEvent> want = readout::sortedEvents(truth.events);
      EXPECT_EQ(readout::sortedEvents(ctx.sink.events), want) << what;
      EXPECT_EQ(ctx.value("events.count"), static_cast<int64_t>(want.size())) << what;
      EXPECT_EQ(ctx.value("readouts.count"), static_cast<int64_t>(source.readouts())) << what;
      EXPECT_EQ(ctx.value("readouts.data"), static_cast<int64_t>(source.readouts())) << what;
      for (const char *zero :
           {"cluster.no_coincidence", "events.wire_gaps", "events.strip_gaps",
            "geometry.pixel_errors", "geometry.validation_errors", "readouts.adc_below_threshold",
            "events.timestamp.tof.negative", "events.timestamp.tof.high",
            "parser.essheader.seq.lost", "parser.essheader.errors.timehigh"}) {
        EXPECT_EQ(ctx.value(zero), 0) << what << " " << zero;
      }
    }
  }
}

// issue 38 item 1: the ESS EFU publishes every Multi-Blade instrument's events (FREIA, ESTIA,
// AMOR, TBLMB) under "multiblade" (ess-dmsc/event-formation-unit 8b399165,
// src/modules/freia/FreiaBase.h FlatBufferSource, given to EV44Serializer in FreiaBase.cpp).
TEST(Vmm3Module, TheDefaultSourceIsTheEssEfusMultiblade) {
  for (const char *file : {"freia.json", "amor.json", "tblmb.json", "estia_config.json"}) {
    EXPECT_EQ(readout::declaredSourceName<Vmm3Module>(shipped(file), file), "multiblade") << file;
  }
}

} // namespace
} // namespace efu::vmm3
