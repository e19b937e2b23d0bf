// SPDX-License-Identifier: BSD-2-Clause
// The nmx module in-process with a fake context: the ESS files and their refusals, the ESS
// geometry, datagrams in, exact counters and events out, and round trips through NmxSource.
// Scenarios marked "ESS" are the ESS EFU's (ess-dmsc/event-formation-unit 8b399165,
// src/modules/nmx/test/NMXGeometryTest.cpp and NMXInstrumentTest.cpp).
#include "modules/nmx/NmxModule.h"
#include "modules/nmx/NmxGeometry.h"
#include "modules/nmx/NmxSource.h"
#include "tests/modules/nmx/NmxTestSupport.h"
#include "tests/support/FakeModuleContext.h"
#include "tests/support/ModuleFixture.h"
#include "tests/support/SourceDatagrams.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace efu::nmx {
namespace {

using readout::EssTime;
using readout::FakeModuleContext;
using readout::RecordedEvent;
using test::Datagram;
using test::rawShipped;
using test::shipped;

constexpr EssTime kPulse{1, 0};
constexpr EssTime kPrevPulse{0, 82'763'036}; // 60 ms before it
constexpr int64_t kPulseNs = 1'000'000'000;
constexpr int64_t kPrevPulseNs = 939'928'292;
constexpr uint32_t kTick = 1000; // an event's first tick after the pulse

int64_t tofOf(uint32_t low) {
  return readout::ticksToNs(kPulse.high, low) - kPulseNs;
}

// --- The files ---------------------------------------------------------------------------------

TEST(NmxConfig, EveryShippedEssFileIsTakenUnchanged) {
  for (const char *name : {"nmx.json", "nmx_p0.json", "nmx_split.json", "mininmx.json"}) {
    const NmxConfig c = parseNmxConfig(shipped(name), name);
    EXPECT_EQ(c.hybrids.size(), std::string(name) == "mininmx.json" ? 10U : 40U) << name;
    EXPECT_EQ(c.numPanels, 4) << name;
    EXPECT_EQ(c.sizeX, 1280) << name;
  }
  const NmxConfig c = parseNmxConfig(shipped("nmx.json"), "nmx.json");
  EXPECT_EQ(c.clusteringTimeGapNs, 200);
  EXPECT_EQ(c.matchingTimeGapNs, 500);
  EXPECT_EQ(c.minAdc, 50);
  EXPECT_EQ(c.maxSpanX, 10);
  EXPECT_EQ(c.minSpanY, 1);
  EXPECT_FALSE(c.splitMultiEvents);
  EXPECT_TRUE(parseNmxConfig(shipped("nmx_split.json"), "nmx_split.json").splitMultiEvents);
  EXPECT_EQ(parseNmxConfig(shipped("nmx_p0.json"), "nmx_p0.json").sizeY, 3840);
  // Entry 15: Ring 0, FEN 3, Hybrid 0, Plane 1, Offset 1152, reversed, Panel 3.
  const Hybrid &h = c.hybrids[15];
  EXPECT_EQ(h.fen, 3);
  EXPECT_EQ(h.plane, 1);
  EXPECT_EQ(h.offset, 1152);
  EXPECT_TRUE(h.reversed);
  EXPECT_EQ(h.panel, 3);
  EXPECT_EQ(c.slot(0, 3, 0), 15);
  EXPECT_EQ(c.slot(0, 8, 0), -1);
}

TEST(NmxConfig, MissingEntryKeysTakeTheEssDefaults) {
  nlohmann::json j = rawShipped("mininmx.json");
  for (const char *key : {"Plane", "Offset", "ReversedChannels", "Panel"}) {
    j["Config"][0].erase(key);
  }
  const NmxConfig c = parseNmxConfig(test::validated(j), "x.json");
  EXPECT_EQ(c.hybrids[0].plane, 0);
  EXPECT_EQ(c.hybrids[0].offset, 0);
  EXPECT_FALSE(c.hybrids[0].reversed);
  EXPECT_EQ(c.hybrids[0].panel, 0);
}

TEST(NmxConfig, RefusalsNameFileKeyPathAndValue) {
  struct Case {
    std::function<void(nlohmann::json &)> change;
    std::string expected;
  };
  const std::vector<Case> cases{
      {[](nlohmann::json &j) { j["Detector"] = "Freia"; }, "nmx.json: Detector = \"Freia\""},
      {[](nlohmann::json &j) { j["InstrumentGeometry"] = "nmx"; },
       "nmx.json: InstrumentGeometry = \"nmx\""},
      {[](nlohmann::json &j) { j["MaxTimeSpan"] = 500; }, "MaxTimeSpan"},
      {[](nlohmann::json &j) { j["MaxTOFNS"] = 1; }, "MaxTOFNS"},
      {[](nlohmann::json &j) { j["SizeX"] = 0; }, "SizeX"},
      {[](nlohmann::json &j) { j["Config"] = nlohmann::json::array(); }, "nmx.json: Config = []"},
      {[](nlohmann::json &j) { j["Config"][3]["Ring"] = 11; }, "nmx.json: Config[3].Ring = 11"},
      {[](nlohmann::json &j) { j["Config"][3]["FEN"] = 14; }, "nmx.json: Config[3].FEN = 14"},
      {[](nlohmann::json &j) { j["Config"][3]["Hybrid"] = 11; }, "nmx.json: Config[3].Hybrid = 11"},
      {[](nlohmann::json &j) { j["Config"][3]["HybridId"] = "abc"; },
       "nmx.json: Config[3].HybridId = \"abc\": expected 32 characters"},
      {[](nlohmann::json &j) { j["Config"][3]["HybridId"] = j["Config"][1]["HybridId"]; },
       "Config[3].HybridId = \"00000000000000006898a000a0000013\": Config[1] has it too"},
      {[](nlohmann::json &j) { j["Config"][3]["Hybrid"] = 1; }, "Config[3] = {"},
      {[](nlohmann::json &j) { j["Config"][3]["Plane"] = 2; }, "nmx.json: Config[3].Plane = 2"},
      {[](nlohmann::json &j) { j["Config"][3]["Panel"] = 4; }, "nmx.json: Config[3].Panel = 4"},
      {[](nlohmann::json &j) {
         j["NumPanels"] = 2;
         j["Config"][15]["Panel"] = 3;
       },
       "nmx.json: Config[15].Panel = 3"},
      {[](nlohmann::json &j) { j["Config"][3]["Offset"] = 65408; },
       "nmx.json: Config[3].Offset = 65408"},
      {[](nlohmann::json &j) { j["Config"][3]["ReversedChannels"] = "yes"; },
       "nmx.json: Config[3].ReversedChannels = \"yes\": expected true or false"},
      {[](nlohmann::json &j) { j["Config"][3]["Cassette"] = 1; },
       "nmx.json: Config[3].Cassette = 1: unknown key"},
      // Entry 1 (Offset 384) moved onto entry 0's coordinates (512..639) of panel 0, plane 0.
      {[](nlohmann::json &j) { j["Config"][1]["Offset"] = 600; },
       "nmx.json: Config[1].Offset = 600: coordinates 600..727 of panel 0 plane 0 overlap "
       "Config[0]'s (Offset 512)"},
  };
  for (const Case &c : cases) {
    nlohmann::json j = rawShipped("nmx.json");
    c.change(j);
    const std::string e = test::configError(j);
    EXPECT_NE(e.find(c.expected), std::string::npos) << "got: " << e;
  }
  // A reversed and a plain hybrid on the same coordinates overlap just as well.
  nlohmann::json j = rawShipped("mininmx.json");
  j["Config"][1]["Offset"] = 0;
  j["Config"][1]["ReversedChannels"] = true;
  EXPECT_NE(test::configError(j, "mininmx.json").find("overlap Config[0]"), std::string::npos);
  // Different planes or panels may share coordinates (every shipped file does).
  j = rawShipped("mininmx.json");
  j["Config"][1]["Offset"] = 0;
  j["Config"][1]["Panel"] = 1;
  EXPECT_EQ(test::configError(j, "mininmx.json"), "");
}

// --- The geometry (ESS NMXGeometryTest.CoordinateCalculations) ----------------------------------

// The module reads a coordinate as base + step * channel per (hybrid, ASIC), base and step taken
// from coordinateOf at channels 0 and 1: it is that linear function on every channel.
TEST(NmxGeometry, CoordinateIsLinearInTheChannel) {
  Hybrid h;
  for (const uint16_t offset : {uint16_t{0}, uint16_t{1}, uint16_t{640}, kMaxOffset}) {
    for (const bool reversed : {false, true}) {
      h.offset = offset;
      h.reversed = reversed;
      for (uint8_t asic = 0; asic < 2; ++asic) {
        const int32_t base = coordinateOf(h, asic, 0);
        const int32_t step = static_cast<int32_t>(coordinateOf(h, asic, 1)) - base;
        EXPECT_EQ(step, reversed ? -1 : 1);
        for (uint8_t ch = 0; ch < 64; ++ch) {
          EXPECT_EQ(static_cast<uint16_t>(base + step * ch), coordinateOf(h, asic, ch))
              << offset << " " << reversed << " " << int{asic} << " " << int{ch};
        }
      }
    }
  }
}

TEST(NmxGeometry, EssCoordinateTable) {
  Hybrid h;
  for (uint8_t ch = 0; ch < 64; ++ch) {
    h.offset = 0;
    h.reversed = false;
    EXPECT_EQ(coordinateOf(h, 0, ch), ch);
    h.reversed = true;
    EXPECT_EQ(coordinateOf(h, 0, ch), 127 - ch);
    h.offset = 512;
    h.reversed = false;
    EXPECT_EQ(coordinateOf(h, 1, ch), ch + 576);
    h.reversed = true;
    EXPECT_EQ(coordinateOf(h, 1, ch), 575 - ch);
  }
  // channelOf inverts coordinateOf for both orders.
  for (const bool reversed : {false, true}) {
    h.offset = 384;
    h.reversed = reversed;
    for (uint32_t c = 384; c < 512; ++c) {
      uint8_t asic = 9, ch = 99;
      ASSERT_TRUE(channelOf(h, c, asic, ch));
      EXPECT_EQ(coordinateOf(h, asic, ch), c);
    }
    uint8_t asic = 0, ch = 0;
    EXPECT_FALSE(channelOf(h, 383, asic, ch));
    EXPECT_FALSE(channelOf(h, 512, asic, ch));
  }
}

// --- The module --------------------------------------------------------------------------------

class NmxModuleTest : public readout::test::ModuleFixture<NmxModule> {
protected:
  void SetUp() override { create(shipped("nmx.json"), "nmx.json"); }

  /// A readout of coordinate `coord` of `plane` on `panel` (the hybrid covering it), at tick
  /// `low` after the pulse second.
  [[nodiscard]] vmm3::Vmm3Readout hit(int panel, int plane, uint32_t coord, uint16_t adc,
                                      uint32_t low) const {
    for (const Hybrid &h : module_->config().hybrids) {
      uint8_t asic = 0, ch = 0;
      if (h.panel == panel && h.plane == plane && channelOf(h, coord, asic, ch)) {
        return test::readout(h.ring, h.fen, static_cast<uint8_t>(2 * h.hybrid + asic), ch, adc,
                             kPulse.high, low);
      }
    }
    ADD_FAILURE() << "no hybrid for panel " << panel << " plane " << plane << " coord " << coord;
    return {};
  }
  [[nodiscard]] uint32_t pixel(uint32_t x, uint32_t y) const {
    return y * module_->config().sizeX + x + 1;
  }
};

TEST_F(NmxModuleTest, CountersAreTheEssNames) {
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
                           "readouts.data",
                           "readouts.bccalib",
                           "readouts.over_threshold",
                           "geometry.validation_errors",
                           "geometry.ring_errors",
                           "geometry.fen_errors",
                           "geometry.hybrid_mapping_errors",
                           "geometry.adc_errors",
                           "cluster.matched_clusters",
                           "cluster.no_coincidence",
                           "cluster.matched_x_only",
                           "cluster.matched_y_only",
                           "cluster.span.x_too_large",
                           "cluster.span.y_too_large",
                           "cluster.span.x_too_small",
                           "cluster.span.y_too_small",
                           "cluster.span.time_too_large",
                           "cluster.matcherstats.span_too_large",
                           "cluster.matcherstats.discared_span_too_large",
                           "cluster.matcherstats.split_span_too_large",
                           "cluster.matcherstats.match_attempt_count",
                           "geometry.pixel_errors",
                           "events.count",
                           "events.timestamp.tof.count",
                           "parser.essheader.errors.type"}) {
    EXPECT_TRUE(ctx_->snapshot().count(name)) << name;
  }
}

TEST_F(NmxModuleTest, OneNeutronIsOneEventWithTheUtpcPixelAndTheLatestHitsTof) {
  // x: 100 on the tick, 101 two ticks later; y: 300 and 299 one tick later (panel 0).
  Datagram d(readout::kTypeNmx, kPulse, kPrevPulse);
  d.add(hit(0, 0, 101, 400, kTick + 2)).add(hit(0, 0, 100, 300, kTick));
  d.add(hit(0, 1, 300, 200, kTick)).add(hit(0, 1, 299, 900, kTick + 1));
  process(d);
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0], (RecordedEvent{kPulseNs, static_cast<int32_t>(tofOf(kTick + 2)),
                                        static_cast<int32_t>(pixel(100, 300))}));
  EXPECT_EQ(moved(),
            (std::map<std::string, int64_t>{{"readouts.count", 4},
                                            {"readouts.data", 4},
                                            {"cluster.matched_clusters", 1},
                                            {"cluster.matcherstats.match_attempt_count", 4},
                                            {"events.timestamp.tof.count", 1},
                                            {"events.count", 1}}));
}

TEST_F(NmxModuleTest, UtpcTiesAtTheEarliestTimeTakeTheLowestCoordinate) {
  // x: 105 and 103 both on the first tick (inserted high first), 104 later: 103.
  // y: 20, 22 on the first tick, 21 earlier still: 21.
  Datagram d(readout::kTypeNmx, kPulse, kPrevPulse);
  d.add(hit(0, 0, 105, 100, kTick)).add(hit(0, 0, 104, 100, kTick + 1));
  d.add(hit(0, 0, 103, 100, kTick));
  d.add(hit(0, 1, 20, 100, kTick + 1)).add(hit(0, 1, 22, 100, kTick + 1));
  d.add(hit(0, 1, 21, 100, kTick));
  process(d);
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0].pixelId, static_cast<int32_t>(pixel(103, 21)));
  EXPECT_EQ(events()[0].tofNs, tofOf(kTick + 1));
}

TEST_F(NmxModuleTest, UtpcIsTheSameWhenMatchingIsShorterThanClustering) {
  // MaxMatchingTimeGap < MaxClusteringTimeGap: no group shortcut in common/reduction; the
  // answer must not change.
  nlohmann::json j = rawShipped("nmx.json");
  j["MaxMatchingTimeGap"] = 100;
  j["MaxClusteringTimeGap"] = 400;
  create(test::validated(j, "nmx.json"), "nmx.json");
  Datagram d(readout::kTypeNmx, kPulse, kPrevPulse);
  d.add(hit(0, 0, 105, 100, kTick)).add(hit(0, 0, 104, 100, kTick + 1));
  d.add(hit(0, 0, 103, 100, kTick));
  d.add(hit(0, 1, 20, 100, kTick + 1)).add(hit(0, 1, 22, 100, kTick + 1));
  d.add(hit(0, 1, 21, 100, kTick));
  process(d);
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0].pixelId, static_cast<int32_t>(pixel(103, 21)));
}

TEST_F(NmxModuleTest, EachReadoutErrorIsCountedOnce) {
  Datagram d(readout::kTypeNmx, kPulse, kPrevPulse);
  auto ok = hit(0, 0, 100, 300, kTick);
  auto r = ok;
  r.fiber = 24; // parser
  d.add(r);
  r = ok;
  r.channel = 64; // parser
  d.add(r);
  r = ok;
  r.fiber = 22; // ring 11
  d.add(r);
  r = ok;
  r.fen = 14;
  d.add(r);
  r = ok;
  r.fen = 8; // no hybrid
  d.add(r);
  r = ok;
  r.fiber = 23; // the largest address the parser passes: ring 11
  r.fen = 23;
  r.vmm = 15;
  d.add(r);
  r = ok;
  r.fen = 14;
  r.otadc = 10; // a FEN error comes before the ADC check
  d.add(r);
  r = ok;
  r.otadc = 0x8000 | 49; // below DefaultMinADC 50 (bit 15 is not the ADC)
  d.add(r);
  r = ok;
  r.geo = 0x80; // calibration readout: processed
  r.otadc = 0x8000 | 50;
  d.add(r);
  process(d);
  EXPECT_EQ(moved(),
            (std::map<std::string, int64_t>{{"readouts.count", 9},
                                            {"readouts.error_fiber", 1},
                                            {"readouts.error_channel", 1},
                                            {"readouts.data", 6},
                                            {"readouts.bccalib", 1},
                                            {"readouts.over_threshold", 2},
                                            {"geometry.ring_errors", 2},
                                            {"geometry.fen_errors", 2},
                                            {"geometry.hybrid_mapping_errors", 1},
                                            {"geometry.adc_errors", 1},
                                            {"geometry.validation_errors", 6},
                                            {"cluster.no_coincidence", 1},
                                            {"cluster.matched_x_only", 1},
                                            {"cluster.matcherstats.match_attempt_count", 4}}));
}

TEST_F(NmxModuleTest, SizeErrorsAndHeartbeatsStillRunTheMatchers) {
  Datagram d(readout::kTypeNmx, kPulse, kPrevPulse);
  d.raw({1, 2, 3});
  process(d);
  Datagram heartbeat(readout::kTypeNmx, kPulse, kPrevPulse, 1);
  process(heartbeat);
  Datagram wrongType(readout::kTypeFreia, kPulse, kPrevPulse, 2);
  process(wrongType);
  EXPECT_EQ(moved(),
            (std::map<std::string, int64_t>{{"readouts.error_size", 1},
                                            {"cluster.matcherstats.match_attempt_count", 8}}));
  EXPECT_EQ(stat("parser.essheader.errors.type"), 1);
}

TEST_F(NmxModuleTest, OnePlaneOnlyIsNoCoincidence) {
  Datagram d(readout::kTypeNmx, kPulse, kPrevPulse);
  d.add(hit(0, 0, 100, 300, kTick));
  d.add(hit(1, 1, 100, 300, kTick)).add(hit(1, 1, 101, 300, kTick));
  process(d);
  EXPECT_EQ(stat("cluster.no_coincidence"), 2);
  EXPECT_EQ(stat("cluster.matched_x_only"), 1);
  EXPECT_EQ(stat("cluster.matched_y_only"), 1);
  EXPECT_EQ(stat("events.count"), 0);
}

TEST_F(NmxModuleTest, SpanAndTimeSpanChecksInTheEssOrder) {
  nlohmann::json j = rawShipped("nmx.json");
  j["MinSpanX"] = 2;
  j["MinSpanY"] = 2;
  j["MaxSpanX"] = 3;
  j["MaxSpanY"] = 3;
  j["MaxMatchingTimeGap"] = 2000;
  j["MaxClusteringTimeGap"] = 2000;
  create(test::validated(j, "nmx.json"), "nmx.json");
  auto event = [&](std::vector<uint32_t> xs, std::vector<uint32_t> ys, uint32_t xLate,
                   uint32_t yLate) {
    Datagram d(readout::kTypeNmx, kPulse, kPrevPulse);
    for (size_t i = 0; i < xs.size(); ++i) {
      d.add(hit(0, 0, xs[i], 100, kTick + (i == 0 ? xLate : 0)));
    }
    for (size_t i = 0; i < ys.size(); ++i) {
      d.add(hit(0, 1, ys[i], 100, kTick + (i == 0 ? yLate : 0)));
    }
    process(d);
  };
  // 45 ticks = 511 ns: a time span of 512 > 500.
  event({10, 11, 12, 13}, {10}, 45, 45); // x too large first
  event({10}, {10, 11, 12, 13}, 45, 45); // x too small first
  event({10, 11}, {10}, 45, 0);          // x time span before y's spans
  event({10, 11}, {10, 11, 12, 13}, 0, 45);
  event({10, 11}, {10}, 0, 45);
  event({10, 11}, {10, 11}, 0, 45);  // y's time span
  event({10, 11}, {10, 11}, 43, 43); // 43 ticks: hit times 489 ns apart, a span of 490
  EXPECT_EQ(stat("cluster.span.x_too_large"), 1);
  EXPECT_EQ(stat("cluster.span.x_too_small"), 1);
  EXPECT_EQ(stat("cluster.span.y_too_large"), 1);
  EXPECT_EQ(stat("cluster.span.y_too_small"), 1);
  EXPECT_EQ(stat("cluster.span.time_too_large"), 2);
  EXPECT_EQ(stat("cluster.matched_clusters"), 1);
  EXPECT_EQ(stat("events.count"), 1);
}

TEST_F(NmxModuleTest, TimeOfFlightFromThePreviousPulseAndItsRefusals) {
  // Before the pulse: from the previous pulse.
  Datagram d(readout::kTypeNmx, kPulse, kPrevPulse);
  d.add(test::readout(0, 0, 0, 10, 100, 0, 86'000'000));
  d.add(test::readout(0, 7, 0, 10, 100, 0, 86'000'000));
  process(d);
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0].pulseTimeNs, kPrevPulseNs);
  EXPECT_EQ(events()[0].tofNs, readout::ticksToNs(0, 86'000'000) - kPrevPulseNs);
  EXPECT_EQ(stat("events.timestamp.tof.negative"), 1);
  EXPECT_EQ(stat("events.timestamp.prevtof.count"), 1);
  // Before the previous pulse too: matched, no event.
  Datagram d2(readout::kTypeNmx, kPulse, kPrevPulse, 1);
  d2.add(test::readout(0, 0, 0, 10, 100, 0, 1000)).add(test::readout(0, 7, 0, 10, 100, 0, 1000));
  process(d2);
  EXPECT_EQ(stat("events.timestamp.prevtof.negative"), 1);
  EXPECT_EQ(stat("cluster.matched_clusters"), 2);
  EXPECT_EQ(stat("events.count"), 1);
}

TEST_F(NmxModuleTest, PixelOutsideTheImageIsCounted) {
  nlohmann::json j = rawShipped("nmx.json");
  j["SizeX"] = 600;
  create(test::validated(j, "nmx.json"), "nmx.json");
  Datagram d(readout::kTypeNmx, kPulse, kPrevPulse);
  d.add(hit(0, 0, 600, 100, kTick)).add(hit(0, 1, 5, 100, kTick));
  d.add(hit(0, 0, 599, 100, kTick + 100)).add(hit(0, 1, 5, 100, kTick + 100));
  process(d);
  EXPECT_EQ(stat("geometry.pixel_errors"), 1);
  EXPECT_EQ(stat("cluster.matched_clusters"), 2);
  ASSERT_EQ(events().size(), 1U);
  EXPECT_EQ(events()[0].pixelId, static_cast<int32_t>(5 * 600 + 599 + 1));
}

TEST_F(NmxModuleTest, NothingCarriesOverBetweenDatagrams) {
  Datagram a(readout::kTypeNmx, kPulse, kPrevPulse, 0);
  a.add(hit(0, 0, 100, 300, kTick));
  Datagram b(readout::kTypeNmx, kPulse, kPrevPulse, 1);
  b.add(hit(0, 1, 100, 300, kTick));
  process(a);
  process(b);
  EXPECT_EQ(stat("cluster.no_coincidence"), 2);
  EXPECT_EQ(stat("events.count"), 0);
}

TEST_F(NmxModuleTest, SplitPartsTakeTheUtpcOfTheirLatestHits) {
  create(shipped("nmx_split.json"), "nmx_split.json");
  Datagram d(readout::kTypeNmx, kPulse, kPrevPulse);
  // Plane x: part 1 {10 late, 11}: 10 holds the latest time; part 2 {30, 31 late, 32 late}:
  // the latest time at positions 1 and 2 of 3, and 32 is nearer its end. Weights 200, 600.
  d.add(hit(0, 0, 10, 100, kTick + 2)).add(hit(0, 0, 11, 100, kTick));
  d.add(hit(0, 0, 30, 200, kTick)).add(hit(0, 0, 31, 200, kTick + 3));
  d.add(hit(0, 0, 32, 200, kTick + 3));
  // Plane y: part 1 {50 late (60), 51, 52 late (80)}: a tie at equal distance from both ends,
  // the heavier (52) wins; part 2 {70 late, 71 late, 72, 73}: 70 is nearer its end.
  d.add(hit(0, 1, 50, 60, kTick + 1)).add(hit(0, 1, 51, 60, kTick));
  d.add(hit(0, 1, 52, 80, kTick + 1));
  d.add(hit(0, 1, 70, 150, kTick + 1)).add(hit(0, 1, 71, 150, kTick + 1));
  d.add(hit(0, 1, 72, 150, kTick)).add(hit(0, 1, 73, 150, kTick));
  process(d);
  EXPECT_EQ(stat("cluster.matcherstats.span_too_large"), 1);
  EXPECT_EQ(stat("cluster.matcherstats.split_span_too_large"), 1);
  ASSERT_EQ(events().size(), 2U);
  std::vector<int32_t> pixels{events()[0].pixelId, events()[1].pixelId};
  std::sort(pixels.begin(), pixels.end());
  EXPECT_EQ(pixels, (std::vector<int32_t>{static_cast<int32_t>(pixel(10, 52)),
                                          static_cast<int32_t>(pixel(32, 70))}));
  // Each event's TOF is its own latest hit.
  for (const RecordedEvent &e : events()) {
    EXPECT_EQ(e.tofNs,
              tofOf(e.pixelId == static_cast<int32_t>(pixel(10, 52)) ? kTick + 2 : kTick + 3));
  }
}

TEST_F(NmxModuleTest, UnsplittableEventsAreDiscarded) {
  create(shipped("nmx_split.json"), "nmx_split.json");
  Datagram d(readout::kTypeNmx, kPulse, kPrevPulse);
  d.add(hit(0, 0, 10, 100, kTick)).add(hit(0, 0, 30, 100, kTick));
  d.add(hit(0, 1, 10, 500, kTick)).add(hit(0, 1, 30, 500, kTick));
  process(d);
  EXPECT_EQ(stat("cluster.matcherstats.discared_span_too_large"), 1);
  EXPECT_EQ(stat("events.count"), 0);
}

// --- Calibration -------------------------------------------------------------------------------

nlohmann::json calibrationFor(const std::string &hybridId) {
  nlohmann::json vmm = {{"adc_offset", std::vector<double>(64, 0.0)},
                        {"adc_slope", std::vector<double>(64, 1.0)},
                        {"tdc_offset", std::vector<double>(64, 0.0)},
                        {"tdc_slope", std::vector<double>(64, 1.0)}};
  nlohmann::json vmm0 = vmm;
  vmm0["Settings"] = nlohmann::json::object();
  nlohmann::json entry = nlohmann::json::object();
  entry["HybridId"] = hybridId;
  entry["CalibrationDate"] = "";
  entry["vmm0"] = vmm0;
  entry["vmm1"] = vmm;
  nlohmann::json one = nlohmann::json::object();
  one["VMMHybridCalibration"] = entry;
  nlohmann::json c = nlohmann::json::object();
  c["Detector"] = "NMX";
  c["Version"] = 1;
  c["Comment"] = "";
  c["Date"] = "";
  c["Info"] = "";
  c["Calibrations"] = nlohmann::json::array({one});
  return c;
}

std::string calibrationError(const nlohmann::json &calibration) {
  FakeModuleContext ctx(shipped("nmx.json"), "nmx.json");
  ctx.setCalibration(calibration, "calib.json");
  try {
    NmxModule m(ctx);
  } catch (const sdk::ConfigError &e) {
    return e.what();
  }
  return "";
}

TEST(NmxCalibration, CheckedAsTheEssChecksItAndNotApplied) {
  const std::string id = "0000000000000000b81ea000a0000032";
  EXPECT_EQ(calibrationError(calibrationFor(id)), "");
  // The ESS EFU's own example lacks Date, Info and vmm0.Settings: both EFUs refuse it.
  const nlohmann::json example =
      readConfigFile(test::sourceDir() + "/modules/nmx/calibrations/example_calib.json");
  EXPECT_NE(calibrationError(example).find("missing key 'Date'"), std::string::npos)
      << calibrationError(example);
  nlohmann::json c = calibrationFor(id);
  c["Detector"] = "Freia";
  EXPECT_NE(calibrationError(c).find("calib.json: calibration Detector = \"Freia\""),
            std::string::npos);
  c = calibrationFor("00000000000000000000000000000000");
  EXPECT_NE(calibrationError(c).find("no Config entry of nmx.json has this HybridId"),
            std::string::npos);
  c = calibrationFor(id);
  c["Calibrations"][0]["VMMHybridCalibration"]["vmm1"]["tdc_slope"].erase(63);
  EXPECT_NE(calibrationError(c).find("vmm1.tdc_slope"), std::string::npos);
  // vmm1 needs no Settings (the ESS EFU checks vmm0's keys twice); extra keys are not read.
  c = calibrationFor(id);
  c["Calibrations"][0]["VMMHybridCalibration"]["HybridIndex"] = 0;
  c["Hybrids"] = 10;
  EXPECT_EQ(calibrationError(c), "");
  c["Calibrations"][0]["VMMHybridCalibration"]["vmm0"].erase("Settings");
  EXPECT_NE(calibrationError(c).find("missing key 'Settings'"), std::string::npos);
}

// --- Round trip through readoutgen's source ----------------------------------------------------

using readout::test::encodePulses;
using readout::test::TruthList;

TEST(NmxRoundTrip, ReadoutgenNeutronsBecomeExactlyTheTruthEvents) {
  for (const char *name : {"nmx.json", "nmx_p0.json", "nmx_split.json", "mininmx.json"}) {
    for (const size_t perDatagram : {size_t{1}, size_t{3}, size_t{100000}}) {
      const std::string what = std::string(name) + " " + std::to_string(perDatagram);
      const nlohmann::json config = shipped(name);
      NmxSource source(config, name, 7);
      TruthList truth;
      const auto datagrams = encodePulses(source, 11, 3, 3000, perDatagram, truth);
      FakeModuleContext ctx(config, name);
      NmxModule module(ctx);
      for (const auto &d : datagrams) {
        module.process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
      }
      ASSERT_GT(truth.events.size(), 500U) << what;
      EXPECT_EQ(readout::sortedEvents(ctx.sink.events), readout::sortedEvents(truth.events))
          << what;
      EXPECT_EQ(ctx.value("readouts.count"), static_cast<int64_t>(source.readouts())) << what;
      EXPECT_EQ(ctx.value("readouts.data"), static_cast<int64_t>(source.readouts())) << what;
      for (const char *zero :
           {"cluster.no_coincidence", "geometry.pixel_errors", "geometry.validation_errors",
            "cluster.span.time_too_large", "events.timestamp.tof.negative",
            "parser.essheader.errors.timehigh", "cluster.matcherstats.span_too_large"}) {
        EXPECT_EQ(ctx.value(zero), 0) << what << " " << zero;
      }
    }
  }
}

// issue 38 item 1: the ESS EFU publishes NMX's events under "nmx" (ess-dmsc/event-formation-unit
// 8b399165, src/modules/nmx/NMXBase.cpp: EV44Serializer(..., "nmx", ...)), with every NMX file.
TEST(NmxModule, TheDefaultSourceIsTheEssEfusNmx) {
  for (const char *file : {"nmx.json", "nmx_p0.json", "nmx_split.json", "mininmx.json"}) {
    EXPECT_EQ(readout::declaredSourceName<NmxModule>(shipped(file), file), "nmx") << file;
  }
}

} // namespace
} // namespace efu::nmx
