// SPDX-License-Identifier: BSD-2-Clause
// The trex module in-process with a fake context: datagrams in, exact counters and events out;
// events formed across datagrams and at the shutdown flush; round trips through TrexSource.
#include "modules/trex/TrexModule.h"
#include "modules/trex/TrexSource.h"
#include "tests/modules/trex/TrexTestSupport.h"
#include "tests/support/FakeModuleContext.h"
#include "tests/support/ModuleFixture.h"
#include "tests/support/SourceDatagrams.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace efu::trex {
namespace {

using readout::EssTime;
using readout::FakeModuleContext;
using readout::RecordedEvent;
using test::Datagram;

constexpr EssTime kPulse{1, 0};
constexpr EssTime kPrevPulse{0, 82'763'036}; // 60 ms earlier (trex.json allows 71.4 ms)
constexpr int64_t kPulseNs = 1'000'000'000;

class TrexModuleTest : public readout::test::ModuleFixture<TrexModule> {
protected:
  void SetUp() override { create("trex.json"); }
  void create(const std::string &file) { ModuleFixture::create(test::shipped(file), file); }
};

/// trex.json ring 0 FEN 0 (vessel 0, not rotated, no offsets): wire x * 16 + z < 32 on VMM 0
/// channel 32 + wire; grid y < 6 on VMM 2 channel 58 + y, y 6..69 on VMM 3 channel y - 6.
vmm3::Vmm3Readout wire(uint32_t x, uint32_t z, uint32_t low, uint16_t adc = 100, uint8_t fen = 0) {
  return test::readout(0, fen, 0, static_cast<uint8_t>(32 + x * 16 + z), adc, 1, low);
}
vmm3::Vmm3Readout grid(uint32_t y, uint32_t low, uint16_t adc = 100, uint8_t fen = 0) {
  return y < 6 ? test::readout(0, fen, 2, static_cast<uint8_t>(58 + y), adc, 1, low)
               : test::readout(0, fen, 3, static_cast<uint8_t>(y - 6), adc, 1, low);
}
int32_t pixel(uint32_t x, uint32_t y, uint32_t z) {
  return static_cast<int32_t>(x + 384 * (y + 51 * z) + 1);
}
int64_t tofOf(uint32_t low) {
  return readout::ticksToNs(1, low) - kPulseNs;
}

TEST_F(TrexModuleTest, CountersAreTheEssNames) {
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
                           "readouts.adc_max",
                           "readouts.error_mapping",
                           "cluster.matched_clusters",
                           "cluster.no_coincidence",
                           "cluster.matched_wire_only",
                           "cluster.matched_grid_only",
                           "cluster.too_large_grid_span",
                           "events.count",
                           "events.pixel_errors",
                           "readouts.adc_below_min",
                           "readouts.error_coordinate",
                           "events.formed_at_shutdown",
                           "cluster.waiting",
                           "events.timestamp.tof.count"}) {
    EXPECT_TRUE(ctx_->has(name)) << name;
  }
}

// One neutron's event needs three later neutrons of its builder (README "What waits").
TEST_F(TrexModuleTest, EventsWaitForLaterDataAndSpanDatagrams) {
  const uint32_t lows[] = {1000, 1300, 1600, 1900};
  for (int k = 0; k < 4; ++k) {
    Datagram d(kPulse, kPrevPulse, static_cast<uint32_t>(k));
    d.add(wire(1, 2, lows[k])).add(grid(7, lows[k]));
    process(d);
    if (k < 3) {
      EXPECT_TRUE(events().empty()) << k;
    }
  }
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0],
            (RecordedEvent{kPulseNs, static_cast<int32_t>(tofOf(1000)), pixel(1, 7, 2)}));
  EXPECT_GT(module_->waiting(), 0u);
  EXPECT_EQ(stat("cluster.waiting"), 0); // a gauge set by tick()
  module_->tick(0);
  EXPECT_EQ(stat("cluster.waiting"), static_cast<int64_t>(module_->waiting()));
  module_->flush();
  ASSERT_EQ(events().size(), 4u);
  EXPECT_EQ(events()[3].tofNs, tofOf(1900));
  EXPECT_EQ(stat("events.count"), 4);
  EXPECT_EQ(stat("events.formed_at_shutdown"), 3);
  EXPECT_EQ(module_->waiting(), 0u);
  EXPECT_EQ(stat("cluster.waiting"), 0);
  module_->flush(); // nothing left
  EXPECT_EQ(stat("events.count"), 4);
}

// The time of flight is measured from the pulses of the datagram that forms the event: a
// neutron of the previous pulse gets the previous pulse time.
TEST_F(TrexModuleTest, TheFormingDatagramsPulsesMeasureTheTof) {
  const EssTime next{1, 6'000'000}; // 68 ms later
  Datagram a(kPulse, kPrevPulse, 0);
  a.add(wire(0, 0, 1000)).add(grid(0, 1000));
  process(a);
  uint32_t seq = 1;
  for (uint32_t low : {6'000'300u, 6'000'600u, 6'000'900u}) {
    Datagram d(next, kPulse, seq++);
    d.add(wire(0, 0, low)).add(grid(0, low));
    process(d);
  }
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0], (RecordedEvent{kPulseNs, static_cast<int32_t>(tofOf(1000)), 1}));
  EXPECT_EQ(stat("events.timestamp.prevtof.count"), 1);
}

// issue 38 item 5: an event before its datagram's pulse (after the previous pulse) gets its time of
// flight from the previous pulse in both programs; efu publishes it under the previous pulse's
// reference time, so that reference + time of flight is the event's time. The ESS EFU
// (ess-dmsc/event-formation-unit 8b399165, src/modules/trex/TREXInstrument.cpp:
// checkAndSetReferenceTime() with the datagram's pulse before its events are added) publishes it
// under the datagram's pulse with the same time of flight (README, Deviations).
TEST_F(TrexModuleTest, AnEventBeforeThePulseIsPublishedUnderThePreviousPulse) {
  const EssTime pulse{1, 6'000'000}; // 68 ms after kPulse
  Datagram d(pulse, kPulse, 0);
  d.add(wire(0, 0, 1000)).add(grid(0, 1000)); // before `pulse`, after kPulse
  process(d);
  module_->flush();
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0], (RecordedEvent{kPulseNs, static_cast<int32_t>(tofOf(1000)), 1}));
  EXPECT_EQ(events()[0].pulseTimeNs + events()[0].tofNs, readout::ticksToNs(1, 1000));
  EXPECT_EQ(stat("events.timestamp.tof.negative"), 1);
  EXPECT_EQ(stat("events.timestamp.prevtof.count"), 1);
}

// Clusters of one event in two datagrams make one event.
TEST_F(TrexModuleTest, OneEventFromTwoDatagrams) {
  Datagram a(kPulse, kPrevPulse, 0);
  a.add(wire(1, 3, 1000, 100)).add(grid(4, 1000, 300));
  process(a);
  Datagram b(kPulse, kPrevPulse, 1);
  b.add(grid(5, 1010, 100)); // 113 ns later: the same time cluster of the grids
  process(b);
  module_->flush();
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].pixelId, pixel(1, 4, 3)); // (4 * 300 + 5 * 100) / 400 = 4.25
}

TEST_F(TrexModuleTest, EveryRejectionIsCounted) {
  Datagram d(kPulse, kPrevPulse, 0);
  auto bad = [&](auto change) {
    vmm3::Vmm3Readout r = wire(0, 0, 100);
    change(r);
    d.add(r);
  };
  bad([](auto &r) { r.fiber = 24; });
  bad([](auto &r) { r.fen = 24; });
  bad([](auto &r) { r.length = 19; });
  bad([](auto &r) { r.timeLow = 88'052'500; });
  bad([](auto &r) { r.bc = 4096; });
  bad([](auto &r) { r.otadc = 1024; });
  bad([](auto &r) { r.vmm = 16; });
  bad([](auto &r) { r.channel = 64; });
  d.add(test::readout(0, 0, 6, 0, 100, 1, 100));   // hybrid 3: not configured
  d.add(test::readout(11, 0, 0, 40, 100, 1, 100)); // ring 11: past the ESS tables
  d.add(test::readout(5, 14, 0, 40, 100, 1, 100)); // FEN 14: past the ESS tables
  d.add(wire(0, 1, 100, 49));                      // below DefaultMinADC 50
  d.add(test::readout(0, 0, 0, 10, 100, 1, 100));  // wire channel 10: no wire
  // Events 1000 ticks (11 us) apart: wire only, grid only, 5 grids, y outside, calibration
  // readout with over-threshold bit in a good event, and a good one.
  d.add(wire(0, 0, 1000));
  d.add(grid(0, 2000));
  d.add(wire(0, 0, 3000)).add(grid(0, 3000)).add(grid(4, 3000));
  d.add(wire(0, 0, 4000)).add(grid(60, 4000));
  vmm3::Vmm3Readout calib = wire(1, 0, 5000, 0x8000 | 200);
  calib.geo = 0x80;
  d.add(calib).add(grid(1, 5000));
  d.add(wire(0, 0, 6000)).add(grid(3, 6000));
  process(d);
  module_->flush();
  const std::map<std::string, int64_t> want{
      {"readouts.count", 24},
      {"readouts.error_fiber", 1},
      {"readouts.error_fen", 1},
      {"readouts.error_datalen", 1},
      {"readouts.error_timefrac", 1},
      {"readouts.error_bc", 1},
      {"readouts.error_adc", 1},
      {"readouts.error_vmm", 1},
      {"readouts.error_channel", 1},
      {"readouts.data", 15},
      {"readouts.bccalib", 1},
      {"readouts.over_threshold", 1},
      {"readouts.error_mapping", 3},
      {"readouts.adc_below_min", 1},
      {"readouts.error_coordinate", 1},
      {"cluster.no_coincidence", 2},
      {"cluster.matched_wire_only", 1},
      {"cluster.matched_grid_only", 1},
      {"cluster.too_large_grid_span", 1},
      {"cluster.matched_clusters", 3},
      {"events.pixel_errors", 1},
      {"events.timestamp.tof.count", 3},
      {"events.count", 2},
      {"events.formed_at_shutdown", 3}, // pixel, calibration, good: no later data
  };
  EXPECT_EQ(moved(), want);
  ASSERT_EQ(events().size(), 2u);
  EXPECT_EQ(events()[0].pixelId, pixel(1, 1, 0));
  EXPECT_EQ(events()[1].pixelId, pixel(0, 3, 0));
}

TEST_F(TrexModuleTest, PayloadsAndHeadersOfOtherDetectorsAreRefused) {
  Datagram d(kPulse, kPrevPulse, 0);
  d.raw({1, 2, 3});
  process(d);
  EXPECT_EQ(stat("readouts.error_size"), 1);
  Datagram f(kPulse, kPrevPulse, 1, readout::kTypeFreia);
  f.add(wire(0, 0, 100));
  process(f);
  EXPECT_EQ(stat("parser.essheader.errors.type"), 1);
  EXPECT_EQ(stat("readouts.count"), 0);
}

// (ring 6, FEN 13) and (ring 7, FEN 0) share one ESS event builder: a wire of one and a grid
// of the other make an event. trex.json has no hybrid on ring 6 FEN 13 for wires, so this uses
// a file of its own.
TEST_F(TrexModuleTest, RingAndFenShareBuildersAsInTheEss) {
  nlohmann::json j = test::rawShipped("trex.json");
  j["Config"] = nlohmann::json::array({{{"Ring", 6},
                                        {"VesselId", "0"},
                                        {"FEN", 13},
                                        {"Hybrid", 0},
                                        {"HybridId", "E5533333222222221111111100000000"}},
                                       {{"Ring", 7},
                                        {"VesselId", "0"},
                                        {"FEN", 0},
                                        {"Hybrid", 1},
                                        {"HybridId", "E5533333222222221111111100000001"}}});
  ctx_ = std::make_unique<FakeModuleContext>(test::validated(j), "shared.json");
  module_ = std::make_unique<TrexModule>(*ctx_);
  Datagram d(kPulse, kPrevPulse, 0);
  d.add(test::readout(6, 13, 1, 0, 100, 1, 1000)); // FEN 13 odd: wire 128 -> x 8, z 0
  d.add(test::readout(7, 0, 2, 60, 100, 1, 1000)); // y 2
  process(d);
  module_->flush();
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].pixelId, pixel(8, 2, 0));
}

/// Readoutgen's framework in miniature: neutrons drawn on the image, pulses of 60 ms, datagrams
/// of up to 8972 bytes; the module's events must be the truth exactly.
/// readoutgen's neutrons for `file` (pulses of 400, tests/support/SourceDatagrams.h) through the
/// module: every one comes back as its event.
void roundTrip(const std::string &file, int pulses) {
  const nlohmann::json config = test::shipped(file);
  FakeModuleContext ctx(config, file);
  TrexModule module(ctx);
  TrexSource source(config, file, 7);
  readout::test::TruthList truth;
  for (const auto &d : readout::test::encodePulses(source, 3, pulses, 400, SIZE_MAX, truth)) {
    module.process(readout::test::packetOf(d));
  }
  const auto sent = static_cast<int64_t>(truth.events.size());
  module.flush();
  const std::vector<RecordedEvent> got = readout::sortedEvents(ctx.sink.events);
  const std::vector<RecordedEvent> want = readout::sortedEvents(truth.events);
  EXPECT_EQ(got.size(), want.size()) << file << [&] {
    std::string s;
    for (const auto &[k, v] : ctx.snapshot()) {
      if (v)
        s += k + "=" + std::to_string(v) + " ";
    }
    return s;
  }();
  EXPECT_TRUE(got == want) << file;
  EXPECT_EQ(ctx.value("cluster.too_large_grid_span"), 3 * sent) << file;
  EXPECT_EQ(ctx.value("cluster.matched_clusters"), sent) << file;
  EXPECT_EQ(ctx.value("cluster.no_coincidence"), 0) << file;
  EXPECT_EQ(ctx.value("events.pixel_errors"), 0) << file;
  // Each neutron's event is formed in its own datagram: the shutdown forms only trailing
  // groups, three per builder used at most.
  EXPECT_LE(ctx.value("events.formed_at_shutdown"), 3 * int64_t{kBuilderKeys});
  EXPECT_EQ(ctx.value("events.timestamp.prevtof.count"), 0) << file;
}

// Issue 37 item 11: the shipped let.json (a rotated short vessel without YOffset) can form
// pixels on grid 0 only, as in the ESS EFU; efu says so at start, once per vessel, and trex.json
// (its rotated vessels have offsets) gets no such warning.
TEST_F(TrexModuleTest, ARotatedVesselWhoseGridsWrapIsWarnedAbout) {
  EXPECT_TRUE(ctx_->logged("is rotated with YOffset").empty());
  create("let.json");
  const auto warnings = ctx_->logged("is rotated with YOffset");
  ASSERT_EQ(warnings.size(), 1U);
  EXPECT_NE(warnings[0].find("Vessel_Config.0 is rotated with YOffset 0: 50 of the 51 grid "
                             "channels of Ring 0 FEN 0 Hybrid 0 give a y below 0"),
            std::string::npos)
      << warnings[0];
}

TEST(TrexRoundTrip, TrexSourceNeutronsComeBackAsTheTruth) {
  roundTrip("trex.json", 13);
}

TEST(TrexRoundTrip, LetSourceNeutronsComeBackAsTheTruth) {
  roundTrip("let.json", 2);
}

// ---- Bounds (README "Bounds"; issue 37 items 1 and 2) ----

/// readoutgen's neutrons for `file`: `pulses` pulses of `perPulse`, the datagrams and the truth.
struct Stream {
  std::vector<std::vector<uint8_t>> datagrams;
  readout::test::TruthList truth;
};
Stream makeStream(const std::string &file, int pulses, int perPulse) {
  Stream s;
  TrexSource source(test::shipped(file), file, 7);
  s.datagrams = readout::test::encodePulses(source, 3, pulses, perPulse, SIZE_MAX, s.truth);
  return s;
}

// A capture replayed in a loop (udpgen --pcap --loop) or a timing reset: the pulse time steps
// back. The ESS builders keep their latest times and take every later cluster as ready at once
// (most neutrons of the next pass lose their partner plane); efu forms what waits against the
// pulses it came with and restarts the builders, so every pass gives the truth again.
TEST(TrexBounds, APulseThatStepsBackRestartsTheBuildersAndEveryPassGivesTheTruth) {
  const Stream s = makeStream("trex.json", 6, 400);
  FakeModuleContext ctx(test::shipped("trex.json"), "trex.json");
  TrexModule module(ctx);
  std::vector<RecordedEvent> want;
  for (int pass = 0; pass < 3; ++pass) {
    for (const auto &d : s.datagrams) {
      module.process(readout::test::packetOf(d));
    }
    want.insert(want.end(), s.truth.events.begin(), s.truth.events.end());
  }
  module.flush();
  EXPECT_EQ(ctx.value("cluster.bound.pulse_back"), 2);
  EXPECT_EQ(ctx.value("cluster.bound.time_back"), 0); // the pulse rule came first
  EXPECT_EQ(ctx.value("cluster.no_coincidence"), 0);
  EXPECT_EQ(readout::sortedEvents(ctx.sink.events), readout::sortedEvents(want));
}

// Neutrons whose grid hits arrive in the next datagram: the wire cluster must wait for them. After
// the pulse went back 1 s, the ESS builders' latest times are ahead, so every wire cluster is
// ready at once and formed alone; efu's restart keeps every neutron whole.
TEST(TrexBounds, AfterTheTimeWentBackNeutronsSplitOverDatagramsStayWhole) {
  FakeModuleContext ctx(test::shipped("trex.json"), "trex.json");
  TrexModule module(ctx);
  const uint32_t n = 40;
  uint32_t seq = 0;
  for (const uint32_t second : {2U, 1U}) { // the second pass 1 s earlier
    const EssTime pulse{second, 0};
    const EssTime prev{second - 1, 82'763'036};
    for (uint32_t k = 0; k <= n; ++k) { // neutron k at 1000 * (k + 1) ticks
      Datagram d(pulse, prev, seq++);
      if (k > 0) {
        vmm3::Vmm3Readout g = grid(7, 1000 * k + 5); // neutron k - 1's grid
        g.timeHigh = second;
        d.add(g);
      }
      if (k < n) {
        vmm3::Vmm3Readout w = wire(1, 2, 1000 * (k + 1));
        w.timeHigh = second;
        d.add(w);
      }
      module.process(d.packet());
    }
  }
  module.flush();
  EXPECT_EQ(ctx.value("cluster.bound.pulse_back"), 1);
  EXPECT_EQ(ctx.value("cluster.no_coincidence"), 0);
  EXPECT_EQ(ctx.value("cluster.matched_clusters"), int64_t{2 * n});
}

/// A datagram with the header of `d` and one readout: a wire of ring 0 FEN 0 at (high, low).
void processReadoutAt(TrexModule &module, const std::vector<uint8_t> &d, uint32_t high,
                      uint32_t low) {
  readout::EssHeaderV0 h;
  std::memcpy(&h, d.data(), sizeof h);
  Datagram extra({h.pulseHigh, h.pulseLow}, {h.prevPulseHigh, h.prevPulseLow}, h.seqNum);
  extra.add(test::readout(0, 0, 0, 40, 100, high, low));
  module.process(extra.packet());
}

// A readout more than MaxTOF (1 s) from its datagram's pulse can form no event; in the ESS EFU
// one such time holds a builder's latest time far ahead, and from then on clusters are matched
// before their partners arrive. efu refuses it as readouts.time_far: the events stay the truth.
TEST(TrexBounds, AReadoutFarFromItsPulseIsRefusedAndDoesNotPoisonTheBuilder) {
  const Stream s = makeStream("trex.json", 5, 400);
  FakeModuleContext ctx(test::shipped("trex.json"), "trex.json");
  TrexModule module(ctx);
  for (size_t i = 0; i < s.datagrams.size(); ++i) {
    module.process(readout::test::packetOf(s.datagrams[i]));
    if (i == 2) {
      processReadoutAt(module, s.datagrams[i], 0xFFFF0000, 0);
      processReadoutAt(module, s.datagrams[i], 1'000, 0);
    }
  }
  module.flush();
  EXPECT_EQ(ctx.value("readouts.time_far"), 2);
  EXPECT_EQ(ctx.value("cluster.no_coincidence"), 0);
  EXPECT_EQ(readout::sortedEvents(ctx.sink.events), readout::sortedEvents(s.truth.events));
}

// LET without its grid hybrids in Config (hybrid 0; or a dead grid hybrid): in the ESS EFU every
// wire cluster waits for a grid cluster that never comes, without end. efu forms a cluster the
// builder's time has passed by 1 s (a wire-only event, as the ESS full flush would form it),
// counts it, and says which builders' planes are silent.
TEST(TrexBounds, ADeadGridPlaneHoldsOneSecondOfDataAndIsSaid) {
  const int pulses = 60; // 4.3 s
  const int perPulse = 400;
  const Stream s = makeStream("let.json", pulses, perPulse);
  nlohmann::json j = test::rawShipped("let.json");
  nlohmann::json wiresOnly = nlohmann::json::array();
  for (const auto &h : j["Config"]) {
    if (h["Hybrid"] != 0) {
      wiresOnly.push_back(h);
    }
  }
  j["Config"] = wiresOnly;
  FakeModuleContext ctx(test::validated(j, "let.json"), "let.json");
  TrexModule module(ctx);
  size_t most = 0;
  for (const auto &d : s.datagrams) {
    module.process(readout::test::packetOf(d));
    most = std::max(most, module.waiting());
  }
  // Each wire readout is a cluster of its own (the grids that would join them are unmapped).
  const int64_t wires = ctx.value("readouts.data") - ctx.value("readouts.error_mapping");
  ASSERT_GT(wires, 1000);
  // 1 s of the 4.3 s waits at most; the ESS EFU would hold every one until the end.
  EXPECT_LT(static_cast<int64_t>(most), wires / 3);
  EXPECT_EQ(ctx.value("cluster.matched_clusters"), 0);
  EXPECT_GT(ctx.value("cluster.matched_wire_only"), 0);
  EXPECT_EQ(ctx.value("cluster.silent_planes"), 0); // set by tick(), as are the bound counters
  EXPECT_EQ(ctx.value("cluster.bound.stale"), 0);
  module.tick(1'000'000'000);
  EXPECT_EQ(ctx.value("cluster.silent_planes"), 2); // both builders' grids
  EXPECT_GT(ctx.value("cluster.bound.stale"), wires / 2) << [&] {
    std::string t;
    for (const auto &[k, v] : ctx.snapshot()) {
      if (v)
        t += k + "=" + std::to_string(v) + " ";
    }
    return t;
  }();
  const auto said = ctx.logged("a plane that has received nothing");
  ASSERT_EQ(said.size(), 1U);
  EXPECT_NE(said[0].find("ring 0 FEN 0 grids, ring 1 FEN 0 grids"), std::string::npos) << said[0];
  module.tick(2'000'000'000); // still silent: nothing more said
  EXPECT_EQ(ctx.logged("a plane that has received nothing").size(), 1U);
  module.flush();
  EXPECT_EQ(module.waiting(), 0U);
}

// The grids come back: the gauge falls and it is said.
TEST(TrexBounds, APlaneThatReceivesAgainIsSaid) {
  const Stream s = makeStream("let.json", 40, 50);
  FakeModuleContext ctx(test::shipped("let.json"), "let.json");
  TrexModule module(ctx);
  // Grid readouts (hybrid 0) of the first 20 pulses dropped: a dead grid hybrid.
  const size_t half = s.datagrams.size() / 2;
  for (size_t i = 0; i < s.datagrams.size(); ++i) {
    std::vector<uint8_t> d = s.datagrams[i];
    if (i < half) {
      const size_t header = sizeof(readout::EssHeaderV0);
      std::vector<uint8_t> kept(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(header));
      for (size_t at = header; at + vmm3::kReadoutBytes <= d.size(); at += vmm3::kReadoutBytes) {
        const uint8_t vmm = d[at + offsetof(vmm3::Vmm3Readout, vmm)];
        if ((vmm >> 1) != 0) {
          kept.insert(kept.end(), d.begin() + static_cast<std::ptrdiff_t>(at),
                      d.begin() + static_cast<std::ptrdiff_t>(at + vmm3::kReadoutBytes));
        }
      }
      const auto len = static_cast<uint16_t>(kept.size());
      std::memcpy(kept.data() + 6, &len, sizeof len);
      d = kept;
    }
    module.process(readout::test::packetOf(d));
    if (i + 1 == half) {
      module.tick(1'000'000'000);
      EXPECT_EQ(ctx.value("cluster.silent_planes"), 2);
    }
  }
  module.tick(100'000'000'000); // 99 s later: past the 10 s between lines
  EXPECT_EQ(ctx.value("cluster.silent_planes"), 0);
  EXPECT_EQ(ctx.logged("event builders receive again: ring 0 FEN 0 grids, ring 1 FEN 0 grids")
                .size(),
            1U);
}

// issue 38 item 1: the ESS EFU publishes TREX's and LET's events under "trex"
// (ess-dmsc/event-formation-unit 8b399165, src/modules/trex/TREXBase.cpp: EV44Serializer(...,
// "trex", ...); LET runs the trex binary).
TEST(TrexModule, TheDefaultSourceIsTheEssEfusTrex) {
  for (const char *file : {"trex.json", "let.json"}) {
    EXPECT_EQ(readout::declaredSourceName<TrexModule>(test::shipped(file), file), "trex") << file;
  }
}

} // namespace
} // namespace efu::trex
