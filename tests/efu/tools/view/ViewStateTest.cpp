// SPDX-License-Identifier: BSD-2-Clause
// efu-view's accumulators: what ev44, da00, f144 and x5f2 messages add up to, driven with a
// synthetic clock (tick() and ingest() take the time), and the /api/state JSON's shape.
#include "efu/tools/view/ViewState.h"
#include "common/serialize/Da00.h"
#include "efu/tools/view/TofBinning.h"
#include "schemas/ar51_generated.h"
#include "tests/efu/tools/Messages.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using efu::test::Bytes;
using efu::test::makeEv44;
using efu::tools::ImageGeometry;
using efu::tools::view::Rect;
using efu::tools::view::ViewConfig;
using efu::tools::view::ViewState;
using Json = nlohmann::json;

constexpr int64_t kS = 1'000'000'000;
constexpr int64_t kT0 = 1'733'356'800 * kS; // a whole second of wall clock

/// A 4 x 3 detector, pixel ids 1..12: pixel = 1 + y * 4 + x.
ViewConfig smallConfig() {
  ViewConfig c;
  c.geometry = ImageGeometry{"test", "demo", 4, 3, 1};
  c.tofBins = 10;
  c.tofMaxNs = 100; // bins of 10 ns
  c.historyS = 5;
  return c;
}

Bytes events(const std::string &source, int64_t id, const std::vector<int32_t> &pixel,
             const std::vector<int32_t> &tof, std::vector<int64_t> pulses = {kT0}) {
  std::vector<int32_t> index(pulses.size(), 0);
  return makeEv44(source, id, pulses, index, tof, pixel);
}

void feed(ViewState &view, const Bytes &message, int64_t nowNs, const char *topic = "det") {
  view.ingest(topic, message, nowNs);
}

const Json &sourceState(const Json &state, const std::string &name) {
  for (const auto &s : state.at("sources")) {
    if (s.at("name") == name) {
      return s;
    }
  }
  throw std::runtime_error("no source " + name + " in " + state.dump());
}

std::vector<uint64_t> image(const ViewState &view, const char *source, bool gated = false) {
  const auto snapshot = view.image(source, gated);
  return snapshot ? snapshot->counts : std::vector<uint64_t>{};
}

TEST(TofDivider, DividesExactlyAsTheDivideInstruction) {
  std::mt19937 random(7);
  for (const int64_t d :
       {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{7}, int64_t{10}, int64_t{1000},
        int64_t{100'001}, (int64_t{1} << 20) + 1, (int64_t{1} << 30) + 3, (int64_t{1} << 31) - 1}) {
    const efu::tools::view::TofDivider divide(d);
    std::vector<int64_t> times = {0, 1, d - 1, d, d + 1, (int64_t{1} << 31) - 1};
    for (int64_t k = 1; k < 1000; ++k) { // around multiples of d
      times.push_back(k * d - 1);
      times.push_back(k * d);
    }
    for (int i = 0; i < 10000; ++i) {
      times.push_back(random() & 0x7fffffff);
    }
    for (const int64_t t : times) {
      if (t >= 0 && t < (int64_t{1} << 31)) {
        ASSERT_EQ(divide(static_cast<int32_t>(t)), static_cast<uint32_t>(t / d)) << t << " / " << d;
      }
    }
  }
  EXPECT_EQ(efu::tools::view::TofDivider(int64_t{1} << 31)(0x7fffffff), 0U);
  EXPECT_EQ(efu::tools::view::tofBinWidth(100'000'000, 1000), 100'000);
  EXPECT_EQ(efu::tools::view::tofBinWidth(10, 3), 4); // rounded up: 3 bins cover [0, 12)
}

TEST(ViewState, TheImageCountsAKnownPixelList) {
  ViewState view(smallConfig());
  // (0,0) once, (1,0) twice, (3,2) once; 0 and 13 are outside the 12 pixels.
  feed(view, events("caen", 0, {1, 2, 2, 12, 0, 13}, {5, 5, 5, 5, 5, 5}), kT0);
  const auto snap = view.image("caen", false);
  ASSERT_TRUE(snap.has_value());
  EXPECT_EQ(snap->width, 4U);
  EXPECT_EQ(snap->height, 3U);
  EXPECT_EQ(snap->firstPixel, 1U);
  EXPECT_EQ(snap->counts, (std::vector<uint64_t>{1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(snap->max, 2U);
  EXPECT_EQ(snap->sinceNs, kT0);
  const auto state = view.state(kT0);
  const auto &s = sourceState(state, "caen");
  EXPECT_EQ(s.at("events"), 6);
  EXPECT_EQ(s.at("outside_image"), 2);
  EXPECT_EQ(s.at("topic"), "det");
  // Rolled into the totals each second, the counts stay.
  view.tick(kT0 + 5 * kS);
  EXPECT_EQ(image(view, "caen"), snap->counts);
  EXPECT_FALSE(view.image("nosuch", false).has_value());
  EXPECT_FALSE(view.image("caen", true).has_value()); // no gate
}

TEST(ViewState, TofBinsNegativeAndAboveTheRange) {
  ViewState view(smallConfig());
  feed(view, events("caen", 0, {1, 1, 1, 1, 1, 1, 1, 1}, {-1, 0, 9, 10, 99, 100, 250, 55}), kT0);
  const auto tof = view.tof("caen", std::nullopt);
  ASSERT_TRUE(tof.has_value());
  EXPECT_EQ(tof->binNs, 10);
  EXPECT_EQ(tof->maxNs, 100);
  EXPECT_EQ(tof->negative, 1U);
  EXPECT_EQ(tof->aboveRange, 2U);
  EXPECT_EQ(tof->bins, (std::vector<uint64_t>{2, 1, 0, 0, 0, 1, 0, 0, 0, 1}));
  const auto state = view.state(kT0);
  EXPECT_EQ(sourceState(state, "caen").at("negative_tof"), 1);
  EXPECT_EQ(sourceState(state, "caen").at("tof_above_range"), 2);
  EXPECT_FALSE(view.tof("nosuch", std::nullopt).has_value());
}

TEST(ViewState, AConfigOutsideTheOptionsRangesIsMadeSafe) {
  auto config = smallConfig();
  config.tofBins = 0;
  config.windowS = -5;
  ViewState view(config);
  feed(view, events("caen", 0, {1, 1}, {0, 99}), kT0);
  const auto tof = view.tof("caen", std::nullopt);
  ASSERT_TRUE(tof.has_value());
  EXPECT_EQ(tof->bins, std::vector<uint64_t>{2}); // one bin of 100 ns
  EXPECT_EQ(tof->binNs, 100);
  EXPECT_EQ(view.state(kT0).at("control").at("window_s"), 0.0);
  config.tofMaxNs = 0;
  ViewState tiny(config);
  feed(tiny, events("caen", 0, {1, 1}, {0, 1}), kT0);
  EXPECT_EQ(tiny.tof("caen", std::nullopt)->bins, std::vector<uint64_t>{1});
  EXPECT_EQ(tiny.tof("caen", std::nullopt)->aboveRange, 1U);
}

TEST(ViewState, AWindowDropsTheFramesThatLeaveIt) {
  auto config = smallConfig();
  config.windowS = 10; // frames of 1 s
  ViewState view(config);
  view.tick(kT0);
  feed(view, events("caen", 0, {1}, {5}), kT0);
  feed(view, events("caen", 1, {2, 2}, {15, 15}), kT0 + 4 * kS + kS / 2); // 5th frame
  EXPECT_EQ(image(view, "caen")[0], 1U);
  view.tick(kT0 + 9 * kS + kS / 2); // 9 frames closed: the first is still in the window
  EXPECT_EQ(image(view, "caen")[0], 1U);
  EXPECT_EQ(image(view, "caen")[1], 2U);
  EXPECT_EQ(sourceState(view.state(kT0), "caen").at("events"), 3);
  view.tick(kT0 + 10 * kS); // the first frame leaves
  EXPECT_EQ(image(view, "caen")[0], 0U);
  EXPECT_EQ(image(view, "caen")[1], 2U);
  EXPECT_EQ(view.image("caen", false)->sinceNs, kT0 + kS);
  EXPECT_EQ(view.tof("caen", std::nullopt)->bins[0], 0U);
  EXPECT_EQ(view.tof("caen", std::nullopt)->bins[1], 2U);
  EXPECT_EQ(sourceState(view.state(kT0), "caen").at("events"), 2);
  view.tick(kT0 + 15 * kS); // and the second
  EXPECT_EQ(image(view, "caen")[1], 0U);
  EXPECT_EQ(view.tof("caen", std::nullopt)->bins[1], 0U);
  const auto state = view.state(kT0 + 15 * kS);
  EXPECT_EQ(sourceState(state, "caen").at("events"), 0);
  EXPECT_EQ(sourceState(state, "caen").at("events_total"), 3); // not windowed
  // A long silence empties every frame at once.
  feed(view, events("caen", 2, {3}, {5}), kT0 + 16 * kS);
  view.tick(kT0 + 3600 * kS);
  EXPECT_EQ(image(view, "caen")[2], 0U);
}

TEST(ViewState, ChangingTheWindowRestartsTheAccumulation) {
  ViewState view(smallConfig());
  feed(view, events("caen", 0, {1, 1}, {5, 5}), kT0);
  EXPECT_NE(view.setWindow(0.5, kT0), "");
  EXPECT_NE(view.setWindow(3601, kT0), "");
  EXPECT_NE(view.setWindow(-1, kT0), "");
  EXPECT_EQ(image(view, "caen")[0], 2U); // a refused window changes nothing
  EXPECT_EQ(view.setWindow(20, kT0 + kS), "");
  EXPECT_EQ(image(view, "caen")[0], 0U);
  feed(view, events("caen", 1, {1}, {5}), kT0 + kS);
  EXPECT_EQ(image(view, "caen")[0], 1U);
  const auto state = view.state(kT0 + kS);
  EXPECT_EQ(state.at("control").at("window_s"), 20.0);
  EXPECT_EQ(state.at("control").at("since_ns"), kT0 + kS);
  view.tick(kT0 + 20 * kS); // 10 frames of 2 s: the event's frame is the oldest, still in
  EXPECT_EQ(image(view, "caen")[0], 1U);
  view.tick(kT0 + 21 * kS);
  EXPECT_EQ(image(view, "caen")[0], 0U);
}

TEST(ViewState, ResetClearsTheAccumulationNotTheTotalsOrRegions) {
  ViewState view(smallConfig());
  feed(view, events("caen", 0, {1, 2}, {5, 15}), kT0);
  uint32_t id = 0;
  ASSERT_EQ(view.addRoi("caen", Rect{0, 0, 2, 1}, kT0, id), "");
  ASSERT_EQ(view.setGate(std::pair<int64_t, int64_t>{0, 100}, kT0), "");
  feed(view, events("caen", 1, {1}, {5}), kT0);
  view.reset(kT0 + 2 * kS);
  EXPECT_EQ(image(view, "caen"), std::vector<uint64_t>(12, 0));
  EXPECT_EQ(image(view, "caen", true), std::vector<uint64_t>(12, 0));
  EXPECT_EQ(view.tof("caen", std::nullopt)->bins, std::vector<uint64_t>(10, 0));
  EXPECT_EQ(view.tof("caen", id)->bins, std::vector<uint64_t>(10, 0));
  EXPECT_EQ(view.tof("caen", id)->sinceNs, kT0 + 2 * kS);
  const auto state = view.state(kT0 + 2 * kS);
  EXPECT_EQ(sourceState(state, "caen").at("events"), 0);
  EXPECT_EQ(sourceState(state, "caen").at("events_total"), 3);
  EXPECT_EQ(state.at("rois").size(), 1U);
  EXPECT_EQ(state.at("rois")[0].at("counts"), 0);
  EXPECT_EQ(state.at("gate").at("since_ns"), kT0 + 2 * kS);
  EXPECT_EQ(state.at("control").at("since_ns"), kT0 + 2 * kS);
}

TEST(ViewState, PausedMessagesAreCountedNotBinned) {
  ViewState view(smallConfig());
  view.setPaused(true, kT0);
  feed(view, events("caen", 0, {1, 2}, {5, 5}), kT0);
  EXPECT_EQ(image(view, "caen"), std::vector<uint64_t>(12, 0));
  auto state = view.state(kT0);
  EXPECT_TRUE(state.at("control").at("paused").get<bool>());
  EXPECT_EQ(sourceState(state, "caen").at("messages"), 1);
  EXPECT_EQ(sourceState(state, "caen").at("events_total"), 2);
  EXPECT_EQ(sourceState(state, "caen").at("events"), 0);
  view.setPaused(false, kT0);
  feed(view, events("caen", 1, {1}, {5}), kT0);
  EXPECT_EQ(image(view, "caen")[0], 1U);
  state = view.state(kT0);
  EXPECT_FALSE(state.at("control").at("paused").get<bool>());
  EXPECT_EQ(sourceState(state, "caen").at("events"), 1);
}

TEST(ViewState, ARegionCountsItsRectangleAndItsSpectrumSinceDrawn) {
  ViewState view(smallConfig());
  // Before the region: (0,0) twice, (1,1) once, (3,2) once.
  feed(view, events("caen", 0, {1, 1, 6, 12}, {5, 5, 5, 5}), kT0);
  uint32_t id = 0;
  EXPECT_NE(view.addRoi("nosuch", Rect{0, 0, 2, 2}, kT0, id), "");
  EXPECT_NE(view.addRoi("caen", Rect{0, 0, 5, 2}, kT0, id), ""); // wider than 4
  EXPECT_NE(view.addRoi("caen", Rect{2, 0, 2, 2}, kT0, id), ""); // empty
  ASSERT_EQ(view.addRoi("caen", Rect{0, 0, 2, 2}, kT0 + kS / 2, id), "");
  EXPECT_EQ(id, 1U);
  uint32_t other = 0;
  ASSERT_EQ(view.addRoi("caen", Rect{1, 1, 4, 3}, kT0 + kS / 2, other), ""); // overlaps at (1,1)
  EXPECT_EQ(other, 2U);
  // After: (0,0) at 15 ns, (1,1) at 25 ns and at -3 ns, (3,2) at 35 ns, outside both at (3,0).
  feed(view, events("caen", 1, {1, 6, 6, 12, 4}, {15, 25, -3, 35, 45}), kT0 + kS / 2);
  const auto state = view.state(kT0 + kS / 2);
  ASSERT_EQ(state.at("rois").size(), 2U);
  // Over the whole image, before the regions were drawn too: (0,0) 3, (1,1) 3, (3,2) 2.
  EXPECT_EQ(state.at("rois")[0].at("counts"), 6); // (0,0) and (1,1)
  EXPECT_EQ(state.at("rois")[1].at("counts"), 5); // (1,1) and (3,2)
  const auto first = view.tof("caen", id);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->bins, (std::vector<uint64_t>{0, 1, 1, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(first->negative, 1U);
  EXPECT_EQ(first->sinceNs, kT0 + kS / 2);
  const auto second = view.tof("caen", other);
  EXPECT_EQ(second->bins, (std::vector<uint64_t>{0, 0, 1, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(second->negative, 1U);
  EXPECT_FALSE(view.tof("other", id).has_value());
  EXPECT_FALSE(view.tof("caen", 99).has_value());
  // Its rate: the events inside it in the last closed second.
  view.tick(kT0 + kS);
  EXPECT_EQ(view.state(kT0 + kS).at("rois")[0].at("events_per_s"), 3.0);
  EXPECT_EQ(view.state(kT0 + kS).at("rois")[1].at("events_per_s"), 3.0);
  // Deleted, it neither counts nor answers; its slot is free again.
  EXPECT_EQ(view.removeRoi(id), "");
  EXPECT_NE(view.removeRoi(id), "");
  EXPECT_FALSE(view.tof("caen", id).has_value());
  feed(view, events("caen", 2, {1, 6}, {15, 15}), kT0 + kS);
  EXPECT_EQ(view.tof("caen", other)->bins[1], 1U);
  for (uint32_t n = 0; n < 7; ++n) {
    uint32_t more = 0;
    ASSERT_EQ(view.addRoi("caen", Rect{0, 0, 1, 1}, kT0 + kS, more), "") << n;
    EXPECT_EQ(more, 3 + n);
  }
  uint32_t ninth = 0;
  EXPECT_NE(view.addRoi("caen", Rect{0, 0, 1, 1}, kT0 + kS, ninth), ""); // at most 8
}

TEST(ViewState, TheGatedImageHasTheEventsInsideTheGateSinceItWasSet) {
  ViewState view(smallConfig());
  feed(view, events("caen", 0, {1, 1}, {15, 15}), kT0);
  EXPECT_NE(view.setGate(std::pair<int64_t, int64_t>{20, 10}, kT0), "");
  EXPECT_NE(view.setGate(std::pair<int64_t, int64_t>{10, 10}, kT0), "");
  EXPECT_EQ(view.state(kT0).at("gate"), nullptr);
  ASSERT_EQ(view.setGate(std::pair<int64_t, int64_t>{10, 20}, kT0 + 1), "");
  feed(view, events("caen", 1, {1, 2, 3, 3, 14}, {15, 9, 10, 19, 15}), kT0 + 2);
  const auto gated = view.image("caen", true);
  ASSERT_TRUE(gated.has_value());
  EXPECT_EQ(gated->counts, (std::vector<uint64_t>{1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(gated->max, 2U);
  EXPECT_EQ(gated->sinceNs, kT0 + 1);
  EXPECT_EQ(image(view, "caen")[0], 3U); // the plain image has them all
  const auto state = view.state(kT0 + 2);
  EXPECT_EQ(state.at("gate").at("tof_min_ns"), 10);
  EXPECT_EQ(state.at("gate").at("tof_max_ns"), 20);
  // A source that appears after the gate has a gated image too.
  feed(view, events("later", 0, {12}, {12}), kT0 + 3);
  EXPECT_EQ(image(view, "later", true)[11], 1U);
  ASSERT_EQ(view.setGate(std::nullopt, kT0 + 3), "");
  EXPECT_FALSE(view.image("caen", true).has_value());
  EXPECT_EQ(view.state(kT0 + 3).at("gate"), nullptr);
}

TEST(ViewState, TheGateImageOutlivesTheFramesAndKeepsThePlainImage) {
  auto config = smallConfig();
  config.windowS = 10; // frames of 1 s
  ViewState view(config);
  view.tick(kT0);
  feed(view, events("caen", 0, {1, 1}, {5, 15}), kT0);
  ASSERT_EQ(view.setGate(std::pair<int64_t, int64_t>{10, 20}, kT0 + 1), "");
  EXPECT_EQ(image(view, "caen")[0], 2U); // setting the gate keeps the image
  feed(view, events("caen", 1, {1, 2}, {15, 15}), kT0 + 2);
  view.tick(kT0 + 3 * kS); // the gated counts are rolled into the gate's totals
  feed(view, events("caen", 2, {2, 2}, {15, 25}), kT0 + 3 * kS);
  EXPECT_EQ(image(view, "caen", true)[0], 1U);
  EXPECT_EQ(image(view, "caen", true)[1], 2U);
  EXPECT_EQ(image(view, "caen")[0], 3U);
  EXPECT_EQ(image(view, "caen")[1], 3U);
  view.tick(kT0 + 30 * kS); // every frame has left the window; the gate image is not windowed
  EXPECT_EQ(image(view, "caen")[0], 0U);
  EXPECT_EQ(image(view, "caen", true)[0], 1U);
  EXPECT_EQ(image(view, "caen", true)[1], 2U);
  // A new gate starts empty; clearing it keeps the plain image.
  feed(view, events("caen", 3, {3}, {15}), kT0 + 30 * kS);
  ASSERT_EQ(view.setGate(std::pair<int64_t, int64_t>{0, 100}, kT0 + 30 * kS), "");
  EXPECT_EQ(image(view, "caen", true), std::vector<uint64_t>(12, 0));
  EXPECT_EQ(image(view, "caen")[2], 1U);
  ASSERT_EQ(view.setGate(std::nullopt, kT0 + 30 * kS), "");
  EXPECT_EQ(image(view, "caen")[2], 1U);
  feed(view, events("caen", 4, {3}, {15}), kT0 + 30 * kS);
  EXPECT_EQ(image(view, "caen")[2], 2U);
}

TEST(ViewState, MessageIdsOutOfOrderAreNoGapsTheMissingOnesAre) {
  ViewState view(smallConfig());
  // As four partitions deliver them: 12 before 11, 14 late, 13 never, 15 twice.
  for (const int64_t id : {10, 12, 11, 15, 16, 14, 15}) {
    feed(view, events("caen", id, {1}, {5}), kT0);
  }
  const auto state = view.state(kT0);
  const auto &s = sourceState(state, "caen");
  EXPECT_EQ(s.at("message_id_gaps"), 1); // 13
  EXPECT_EQ(s.at("message_id_duplicates"), 1);
  EXPECT_EQ(s.at("message_id_restarts"), 0);
  EXPECT_EQ(s.at("messages"), 7);
}

TEST(ViewState, RatesPerSecondCountEachPulseOnce) {
  ViewState view(smallConfig());
  view.tick(kT0);
  const int64_t a = kT0 - 100, b = kT0 - 50, c = kT0 - 20;
  feed(view, events("caen", 0, {1, 2}, {5, 5}, {a}), kT0 + 1);
  feed(view, events("caen", 1, {1}, {5}, {a}), kT0 + 2); // the same pulse
  feed(view, events("caen", 2, {1, 1, 1}, {5, 5, 5}, {b, c}), kT0 + 3);
  auto state = view.state(kT0 + 3);
  EXPECT_EQ(sourceState(state, "caen").at("events_per_s"), 0.0); // no second closed yet
  EXPECT_EQ(sourceState(state, "caen").at("last_pulse_ns"), c);
  EXPECT_EQ(sourceState(state, "caen").at("last_message_ns"), kT0 + 3);
  view.tick(kT0 + kS + 1);
  state = view.state(kT0 + kS + 1);
  const auto &s = sourceState(state, "caen");
  EXPECT_EQ(s.at("events_per_s"), 6.0);
  EXPECT_EQ(s.at("messages_per_s"), 3.0);
  EXPECT_EQ(s.at("pulses_per_s"), 3.0);
  ASSERT_EQ(s.at("history").size(), 1U);
  EXPECT_EQ(s.at("history")[0].at("t_ns"), kT0);
  EXPECT_EQ(s.at("history")[0].at("events_per_s"), 6);
  EXPECT_EQ(s.at("history")[0].at("pulses_per_s"), 3);
  // A quiet second is a second of zeros; the history keeps historyS (5) of them.
  view.tick(kT0 + 2 * kS);
  EXPECT_EQ(sourceState(view.state(kT0), "caen").at("events_per_s"), 0.0);
  view.tick(kT0 + 100 * kS);
  EXPECT_EQ(sourceState(view.state(kT0), "caen").at("history").size(), 5U);
  EXPECT_EQ(sourceState(view.state(kT0), "caen").at("history")[4].at("t_ns"), kT0 + 99 * kS);
}

TEST(ViewState, BadBuffersAreCountedAndNeverCrash) {
  ViewState view(smallConfig());
  const Bytes good = events("caen", 0, {1, 2, 3}, {5, 5, 5});
  view.ingest("t", Bytes{1, 2, 3}, kT0);                           // too short
  view.ingest("t", Bytes{0, 0, 0, 0, 'z', 'z', 'z', 'z', 0}, kT0); // unknown identifier
  Bytes truncated(good.begin(), good.begin() + static_cast<ptrdiff_t>(good.size() / 2));
  view.ingest("t", truncated, kT0);
  // Pixels and times of different lengths: which time goes with which pixel is unknown.
  view.ingest("t", makeEv44("caen", 0, {kT0}, {0}, {5, 5}, {1, 2, 3}), kT0);
  flatbuffers::FlatBufferBuilder fbb;
  const std::vector<uint8_t> raw{1, 2};
  efu::fb::FinishRawReadoutMessageBuffer(
      fbb, efu::fb::CreateRawReadoutMessageDirect(fbb, "caen", 0, &raw));
  view.ingest("t", Bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize()), kT0);
  auto state = view.state(kT0);
  EXPECT_EQ(state.at("messages").at("total"), 5);
  EXPECT_EQ(state.at("messages").at("undecodable"), 3);
  EXPECT_EQ(state.at("messages").at("unknown"), 2); // zzzz and ar51
  EXPECT_TRUE(state.at("sources").empty());
  // Every prefix and random corruptions of good messages of each kind.
  std::mt19937 random(3);
  const std::vector<Bytes> kinds = {good, efu::test::makeF144Long("efu.x.a", kT0, 1),
                                    efu::test::makeX5f2("{}")};
  uint64_t fed = 5;
  for (const auto &message : kinds) {
    for (size_t n = 0; n <= message.size(); ++n) {
      view.ingest("t", std::span(message.data(), n), kT0);
      ++fed;
    }
    for (int i = 0; i < 2000; ++i) {
      Bytes bad = message;
      bad[8 + random() % (bad.size() - 8)] ^= static_cast<uint8_t>(1 + random() % 255);
      view.ingest("t", bad, kT0);
      ++fed;
    }
  }
  state = view.state(kT0);
  EXPECT_EQ(state.at("messages").at("total"), fed);
}

TEST(ViewState, AMisalignedPayloadReadsTheSame) {
  ViewState view(smallConfig());
  const Bytes message = events("caen", 0, {1, 2, 2}, {5, 15, 25});
  std::vector<uint64_t> storage(message.size() / 8 + 2);
  auto *shifted = reinterpret_cast<uint8_t *>(storage.data()) + 1;
  std::memcpy(shifted, message.data(), message.size());
  view.ingest("t", std::span<const uint8_t>(shifted, message.size()), kT0);
  EXPECT_EQ(image(view, "caen")[1], 2U);
  EXPECT_EQ(view.tof("caen", std::nullopt)->bins[2], 1U);
}

TEST(ViewState, EventsWithoutTimesOrWithoutAGeometry) {
  ViewState view(smallConfig());
  feed(view, makeEv44("pixels", 0, {kT0}, {0}, {}, {1, 1, 5}), kT0);
  EXPECT_EQ(image(view, "pixels")[0], 2U);
  EXPECT_EQ(view.tof("pixels", std::nullopt)->bins, std::vector<uint64_t>(10, 0));

  auto config = smallConfig();
  config.geometry.reset();
  ViewState plain(config);
  feed(plain, events("mon", 0, {1, 999999}, {5, 15}), kT0);
  feed(plain, makeEv44("times", 0, {kT0}, {0}, {25}, {}), kT0);
  EXPECT_FALSE(plain.image("mon", false).has_value());
  EXPECT_EQ(plain.tof("mon", std::nullopt)->bins[0], 1U);
  EXPECT_EQ(plain.tof("times", std::nullopt)->bins[2], 1U);
  const auto state = plain.state(kT0);
  EXPECT_EQ(state.at("geometry"), nullptr);
  EXPECT_EQ(sourceState(state, "mon").at("outside_image"), 0);
  EXPECT_EQ(sourceState(state, "mon").at("events"), 2);
  uint32_t id = 0;
  EXPECT_NE(plain.addRoi("mon", Rect{0, 0, 1, 1}, kT0, id), "");
}

TEST(ViewState, SourcesBeyondTheLimitAreCountedNotKept) {
  auto config = smallConfig();
  config.maxSources = 2;
  ViewState view(config);
  feed(view, events("a", 0, {1}, {5}), kT0);
  feed(view, events("b", 0, {1}, {5}), kT0);
  feed(view, events("c", 0, {1}, {5}), kT0);
  feed(view, events("c", 1, {1}, {5}), kT0);
  feed(view, events("a", 1, {1}, {5}), kT0);
  const auto state = view.state(kT0);
  ASSERT_EQ(state.at("sources").size(), 2U);
  EXPECT_EQ(state.at("sources")[0].at("name"), "a"); // sorted by name
  EXPECT_EQ(state.at("sources")[1].at("name"), "b");
  EXPECT_EQ(state.at("messages").at("sources_dropped"), 2);
  EXPECT_FALSE(view.image("c", false).has_value());
}

// The reader thread ingests and ticks while a page thread reads and changes everything: every
// event is counted once (events_total), whatever the controls did meanwhile.
TEST(ViewState, ReadersAndControlsRunBesideTheReader) {
  ViewState view(smallConfig());
  feed(view, events("caen", 0, {1}, {5}), kT0);
  constexpr int kMessages = 2000;
  std::atomic<bool> done{false};
  std::thread reader([&view, &done] {
    for (int m = 1; m <= kMessages; ++m) {
      const int64_t now = kT0 + int64_t{m} * 10'000'000; // 20 s in steps of 10 ms
      view.ingest("det", events("caen", m, {1, 6, 12}, {5, 15, 25}), now);
      view.tick(now);
    }
    done = true;
  });
  uint64_t rounds = 0;
  while (!done) {
    const int64_t now = kT0 + static_cast<int64_t>(rounds);
    uint32_t id = 0;
    if (view.addRoi("caen", Rect{0, 0, 2, 2}, now, id).empty()) {
      EXPECT_TRUE(view.tof("caen", id).has_value());
      EXPECT_EQ(view.removeRoi(id), "");
    }
    EXPECT_EQ(view.setGate(std::pair<int64_t, int64_t>{0, 20}, now), "");
    EXPECT_TRUE(view.image("caen", true).has_value());
    EXPECT_EQ(view.setGate(std::nullopt, now), "");
    EXPECT_EQ(view.image("caen", false)->counts.size(), 12U);
    view.setPaused(rounds % 2 == 1, now);
    if (rounds % 7 == 0) {
      view.reset(now);
      EXPECT_EQ(view.setWindow(rounds % 14 == 0 ? 0 : 10, now), "");
    }
    EXPECT_EQ(view.state(now).at("sources").size(), 1U);
    ++rounds;
  }
  reader.join();
  EXPECT_EQ(sourceState(view.state(kT0), "caen").at("events_total"), 3 * kMessages + 1);
  EXPECT_EQ(sourceState(view.state(kT0), "caen").at("messages"), kMessages + 1);
}

/// A cbm-like histogram: edges, signal over them, and a per-frame total.
Bytes histogram(int64_t timestampNs, const std::vector<int32_t> &signal) {
  std::vector<int32_t> edges(signal.size() + 1);
  for (size_t i = 0; i < edges.size(); ++i) {
    edges[i] = static_cast<int32_t>(i * 100);
  }
  const std::vector<uint64_t> total{7};
  const auto bytes = [](const auto &v) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(v.data()),
                                    v.size() * sizeof(v[0]));
  };
  const std::string_view t[] = {"frame_time"};
  const std::string_view r[] = {"reference_time"};
  const int64_t edgeShape[] = {static_cast<int64_t>(edges.size())};
  const int64_t signalShape[] = {static_cast<int64_t>(signal.size())};
  const int64_t one[] = {1};
  using efu::sdk::DataType;
  const efu::sdk::DataVariable vars[] = {
      {"frame_time", "ns", t, edgeShape, DataType::Int32, bytes(edges)},
      {"signal", "A", t, signalShape, DataType::Int32, bytes(signal)},
      {"frame_total", "", r, one, DataType::UInt64, bytes(total)}};
  flatbuffers::FlatBufferBuilder fbb;
  const auto span = efu::serialize::buildDa00(fbb, "cbm1", timestampNs, vars);
  return Bytes(span.begin(), span.end());
}

TEST(ViewState, MonitorsKeepTheLatestHistogramAndTheSum) {
  ViewState view(smallConfig());
  feed(view, histogram(11, {1, 2, 3}), kT0, "mon");
  feed(view, histogram(12, {10, 20, 30}), kT0, "mon");
  auto state = view.state(kT0);
  ASSERT_EQ(state.at("monitors").size(), 1U);
  const auto &m = state.at("monitors")[0];
  EXPECT_EQ(m.at("name"), "cbm1");
  EXPECT_EQ(m.at("topic"), "mon");
  EXPECT_EQ(m.at("messages"), 2);
  EXPECT_EQ(m.at("timestamp_ns"), 12);
  ASSERT_EQ(m.at("variables").size(), 2U); // signal and frame_total; the axes are not summed
  const auto &signal = m.at("variables")[0];
  EXPECT_EQ(signal.at("name"), "signal");
  EXPECT_EQ(signal.at("unit"), "A");
  EXPECT_EQ(signal.at("axes"), Json::array({"frame_time"}));
  EXPECT_EQ(signal.at("shape"), Json::array({3}));
  EXPECT_EQ(signal.at("latest"), Json::array({10, 20, 30}));
  EXPECT_EQ(signal.at("sum"), Json::array({11.0, 22.0, 33.0}));
  EXPECT_EQ(m.at("variables")[1].at("sum"), Json::array({14.0}));
  EXPECT_EQ(m.at("axis").at("name"), "frame_time");
  EXPECT_EQ(m.at("axis").at("unit"), "ns");
  EXPECT_EQ(m.at("axis").at("values"), Json::array({0, 100, 200, 300}));
  // Another shape: the sum starts again.
  feed(view, histogram(13, {5, 6}), kT0, "mon");
  state = view.state(kT0);
  EXPECT_EQ(state.at("monitors")[0].at("variables")[0].at("sum"), Json::array({5.0, 6.0}));
  EXPECT_EQ(state.at("monitors")[0].at("variables")[1].at("sum"), Json::array({21.0}));
  view.reset(kT0);
  EXPECT_EQ(view.state(kT0).at("monitors")[0].at("variables")[0].at("sum"),
            Json::array({0.0, 0.0}));
}

TEST(ViewState, CountersHaveTheirRateAndTheirDocs) {
  ViewState view(smallConfig());
  using efu::test::makeF144Long;
  feed(view, makeF144Long("efu.loki.receive.dropped", 1 * kS, 0), kT0, "loki_stats");
  feed(view, makeF144Long("efu.loki.receive.dropped", 3 * kS, 10), kT0, "loki_stats");
  feed(view, makeF144Long("efu.loki.receive.ring_full_waits", kS, 4), kT0, "loki_stats");
  feed(view, makeF144Long("efu.loki.receive.q1.packets", kS, 4), kT0, "loki_stats");
  feed(view, makeF144Long("motor.x", kS, 4), kT0, "other");
  feed(view, efu::test::makeF144Double("efu.loki.made.up", kS, 0.5), kT0, "loki_stats");
  feed(view, efu::test::makeF144ArrayInt("efu.loki.array", kS, {1, 2}), kT0, "loki_stats");
  const auto state = view.state(kT0);
  const auto &counters = state.at("health").at("counters");
  ASSERT_EQ(counters.size(), 6U);
  std::vector<std::string> names;
  for (const auto &c : counters) {
    names.push_back(c.at("name").get<std::string>());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"array", "made.up", "motor.x", "receive.dropped",
                                             "receive.q1.packets", "receive.ring_full_waits"}));
  const auto &dropped = counters[3];
  EXPECT_EQ(dropped.at("source"), "efu.loki.receive.dropped");
  EXPECT_EQ(dropped.at("topic"), "loki_stats");
  EXPECT_EQ(dropped.at("value"), 10);
  EXPECT_EQ(dropped.at("rate"), 5.0); // 10 more in 2 s
  EXPECT_EQ(dropped.at("timestamp_ns"), 3 * kS);
  EXPECT_EQ(dropped.at("kind"), "counter");
  EXPECT_EQ(dropped.at("unit"), "datagrams");
  EXPECT_TRUE(dropped.at("meaning").is_string());
  EXPECT_TRUE(dropped.at("losing").get<bool>());
  EXPECT_EQ(counters[4].at("unit"), "datagrams"); // receive.q<i>.packets
  EXPECT_FALSE(counters[4].at("losing").get<bool>());
  EXPECT_FALSE(counters[5].at("losing").get<bool>()); // ring_full_waits: not a loss
  EXPECT_EQ(counters[5].at("rate"), 0.0);             // one value: no rate yet
  EXPECT_EQ(counters[1].at("kind"), nullptr);         // undocumented
  EXPECT_EQ(counters[1].at("value"), 0.5);
  EXPECT_EQ(counters[0].at("value"), Json::array({1, 2}));
  EXPECT_EQ(counters[2].at("source"), "motor.x");
}

TEST(ViewState, ServicesKeepTheirLatestStatus) {
  ViewState view(smallConfig());
  feed(view, efu::test::makeX5f2(R"({"state":"one"})"), kT0, "loki_status");
  feed(view, efu::test::makeX5f2(R"({"state":"two"})"), kT0 + 5, "loki_status");
  const auto state = view.state(kT0);
  const auto &services = state.at("health").at("services");
  ASSERT_EQ(services.size(), 1U);
  EXPECT_EQ(services[0].at("topic"), "loki_status");
  EXPECT_EQ(services[0].at("service_id"), "udp");
  EXPECT_EQ(services[0].at("software_name"), "efu");
  EXPECT_EQ(services[0].at("software_version"), "0.1.0");
  EXPECT_EQ(services[0].at("host_name"), "daq01");
  EXPECT_EQ(services[0].at("process_id"), 4242);
  EXPECT_EQ(services[0].at("update_interval"), 1000);
  EXPECT_EQ(services[0].at("last_ns"), kT0 + 5);
  EXPECT_EQ(services[0].at("status").at("state"), "two");
}

TEST(ViewState, TheStateHasTheContractsShape) {
  auto config = smallConfig();
  config.bootstrap = "127.0.0.1:9092";
  config.topics = {"loki_detector", "loki_stats"};
  ViewState view(config);
  view.setBroker(true, "", kT0);
  feed(view, events("caen", 0, {1}, {5}), kT0 + 7, "loki_detector");
  uint32_t id = 0;
  ASSERT_EQ(view.addRoi("caen", Rect{0, 0, 1, 1}, kT0, id), "");
  ASSERT_EQ(view.setGate(std::pair<int64_t, int64_t>{0, 50}, kT0), "");
  feed(view, histogram(1, {1}), kT0, "loki_detector");
  feed(view, efu::test::makeF144Long("efu.loki.receive.packets", kT0, 3), kT0, "loki_stats");
  feed(view, efu::test::makeX5f2("{}"), kT0, "loki_status");
  view.tick(kT0 + kS);
  const Json s = view.state(kT0 + kS);
  const auto expectKeys = [](const Json &object, std::initializer_list<const char *> keys) {
    ASSERT_TRUE(object.is_object()) << object.dump();
    EXPECT_EQ(object.size(), keys.size()) << object.dump();
    for (const char *key : keys) {
      EXPECT_TRUE(object.contains(key)) << key << " in " << object.dump();
    }
  };
  expectKeys(s, {"program", "version", "now_ns", "broker", "control", "geometry", "tof", "sources",
                 "rois", "gate", "monitors", "health", "messages"});
  EXPECT_EQ(s.at("program"), "efu-view");
  EXPECT_TRUE(s.at("version").is_string());
  EXPECT_EQ(s.at("now_ns"), kT0 + kS);
  expectKeys(s.at("broker"), {"bootstrap", "topics", "connected", "error", "last_message_ns"});
  EXPECT_EQ(s.at("broker").at("bootstrap"), "127.0.0.1:9092");
  EXPECT_EQ(s.at("broker").at("topics"), Json::array({"loki_detector", "loki_stats"}));
  EXPECT_TRUE(s.at("broker").at("connected").is_boolean());
  EXPECT_TRUE(s.at("broker").at("error").is_string());
  EXPECT_EQ(s.at("broker").at("last_message_ns"), kT0);
  expectKeys(s.at("control"), {"paused", "window_s", "since_ns"});
  EXPECT_TRUE(s.at("control").at("window_s").is_number());
  expectKeys(s.at("geometry"), {"kind", "instrument", "width", "height", "first_pixel"});
  EXPECT_EQ(s.at("geometry").at("width"), 4);
  expectKeys(s.at("tof"), {"bins", "max_ns"});
  ASSERT_EQ(s.at("sources").size(), 1U);
  const auto &source = s.at("sources")[0];
  expectKeys(source, {"name", "topic", "events", "messages", "events_total", "events_per_s",
                      "messages_per_s", "pulses_per_s", "last_pulse_ns", "last_message_ns",
                      "message_id_gaps", "message_id_duplicates", "message_id_restarts",
                      "negative_tof", "tof_above_range", "outside_image", "history"});
  for (const char *rate : {"events_per_s", "messages_per_s", "pulses_per_s"}) {
    EXPECT_TRUE(source.at(rate).is_number_float()) << rate;
  }
  for (const char *count :
       {"events", "messages", "events_total", "message_id_gaps", "message_id_duplicates",
        "message_id_restarts", "negative_tof", "tof_above_range", "outside_image", "last_pulse_ns"}) {
    EXPECT_TRUE(source.at(count).is_number_integer()) << count;
  }
  ASSERT_EQ(source.at("history").size(), 1U);
  expectKeys(source.at("history")[0], {"t_ns", "events_per_s", "pulses_per_s"});
  ASSERT_EQ(s.at("rois").size(), 1U);
  expectKeys(s.at("rois")[0],
             {"id", "source", "x0", "y0", "x1", "y1", "counts", "events_per_s", "since_ns"});
  expectKeys(s.at("gate"), {"tof_min_ns", "tof_max_ns", "since_ns"});
  ASSERT_EQ(s.at("monitors").size(), 1U);
  expectKeys(s.at("monitors")[0],
             {"name", "topic", "messages", "timestamp_ns", "variables", "axis"});
  expectKeys(s.at("monitors")[0].at("variables")[0],
             {"name", "unit", "axes", "shape", "latest", "sum"});
  expectKeys(s.at("monitors")[0].at("axis"), {"name", "unit", "values"});
  expectKeys(s.at("health"), {"services", "counters"});
  ASSERT_EQ(s.at("health").at("services").size(), 1U);
  expectKeys(s.at("health").at("services")[0],
             {"topic", "service_id", "software_name", "software_version", "host_name", "process_id",
              "update_interval", "last_ns", "status"});
  ASSERT_EQ(s.at("health").at("counters").size(), 1U);
  expectKeys(s.at("health").at("counters")[0],
             {"source", "name", "topic", "value", "rate", "timestamp_ns", "kind", "unit", "meaning",
              "losing"});
  EXPECT_TRUE(s.at("health").at("counters")[0].at("rate").is_number_float());
  expectKeys(s.at("messages"), {"total", "undecodable", "unknown", "sources_dropped"});
  EXPECT_EQ(s.at("messages").at("total"), 4);
  // Without a geometry or gate: null; without topics given: those seen.
  auto bare = smallConfig();
  bare.geometry.reset();
  ViewState other(bare);
  feed(other, efu::test::makeX5f2("{}"), kT0, "seen");
  const Json o = other.state(kT0);
  EXPECT_EQ(o.at("geometry"), nullptr);
  EXPECT_EQ(o.at("gate"), nullptr);
  EXPECT_EQ(o.at("broker").at("topics"), Json::array({"seen"}));
}

} // namespace
