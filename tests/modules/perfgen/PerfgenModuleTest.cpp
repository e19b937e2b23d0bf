// SPDX-License-Identifier: BSD-2-Clause
// perfgen in-process, ticked at synthetic wall-clock times: exact batch and event counts for a
// rate over a time whatever the ticks, the reference times, the bound per tick and what it
// skips, the clock going back, the test image and its walk, the times of flight, the keys.
#include "modules/perfgen/PerfgenModule.h"
#include "common/sdk/ModuleConfig.h"
#include "tests/support/FakeModuleContext.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace efu::perfgen {
namespace {

using readout::FakeModuleContext;
using readout::RecordedEvent;

constexpr int64_t kStartNs = 1'700'000'000'123'456'789;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kSecond = 1'000'000'000;

nlohmann::json validated(const nlohmann::json &config, const std::string &source = "pg.json") {
  return validateModuleConfig("perfgen", kPerfgenKeys, std::size(kPerfgenKeys), config, source);
}

class Perfgen : public ::testing::Test {
protected:
  void create(const nlohmann::json &config) {
    module_.reset();
    ctx_ = std::make_unique<FakeModuleContext>(validated(config), "pg.json");
    module_ = std::make_unique<PerfgenModule>(*ctx_);
  }
  /// Ticks every `periodNs` from kStartNs up to and including kStartNs + spanNs.
  void tickEvery(int64_t periodNs, int64_t spanNs) {
    for (int64_t t = 0; t <= spanNs; t += periodNs) {
      module_->tick(kStartNs + t);
    }
  }
  [[nodiscard]] int64_t stat(const std::string &name) const { return ctx_->value(name); }
  [[nodiscard]] const std::vector<RecordedEvent> &events() const { return ctx_->sink.events; }
  /// The reference times of the batches, in order (each batch's events share one).
  [[nodiscard]] std::vector<int64_t> references() const {
    std::vector<int64_t> out;
    for (const RecordedEvent &e : events()) {
      if (out.empty() || out.back() != e.pulseTimeNs) {
        out.push_back(e.pulseTimeNs);
      }
    }
    return out;
  }

  std::unique_ptr<FakeModuleContext> ctx_;
  std::unique_ptr<PerfgenModule> module_;
};

// ---- the schedule -----------------------------------------------------------------------------

TEST_F(Perfgen, FourteenBatchesASecondForTenSecondsAre141WithTheirEvents) {
  create({{"batches_per_second", 14}, {"events_per_batch", 500}});
  tickEvery(10 * kMs, 10 * kSecond);
  // Batch 0 at the first tick, then one every 1/14 s: floor(10 s x 14/s) + 1.
  EXPECT_EQ(stat("perfgen.batches"), 141);
  EXPECT_EQ(stat("events.count"), 141 * 500);
  EXPECT_EQ(stat("events.udder"), 141 * 500);
  EXPECT_EQ(events().size(), 141U * 500);
  EXPECT_EQ(stat("perfgen.skipped_batches"), 0);
  EXPECT_EQ(stat("perfgen.skipped_events"), 0);
}

TEST_F(Perfgen, TheCountDoesNotDependOnTheTicks) {
  // The same 10 s in ticks of 1 to 37 ms (a fixed irregular pattern), ending at the same time.
  create({{"batches_per_second", 14}, {"events_per_batch", 3}});
  int64_t t = 0;
  for (int i = 0; t < 10 * kSecond; ++i) {
    module_->tick(kStartNs + t);
    t += (1 + (i * 7919) % 37) * kMs;
  }
  module_->tick(kStartNs + 10 * kSecond);
  EXPECT_EQ(stat("perfgen.batches"), 141);
  EXPECT_EQ(stat("events.count"), 141 * 3);
}

TEST_F(Perfgen, ReferenceTimesAreTheDueTimesOnTheWallClockWithoutDrift) {
  // 3 batches/s ticked every 7 ms for an hour: a period of 333333333.3 ns summed up per batch
  // would drift; each due time is ceil(k x 1e9 / 3) after the first tick.
  create({{"batches_per_second", 3}, {"events_per_batch", 1}});
  tickEvery(7 * kMs, 3600 * kSecond);
  module_->tick(kStartNs + 3600 * kSecond);
  const int64_t expected = 3600 * 3 + 1;
  EXPECT_EQ(stat("perfgen.batches"), expected);
  const auto refs = references();
  ASSERT_EQ(static_cast<int64_t>(refs.size()), expected);
  for (int64_t k = 0; k < expected; ++k) {
    ASSERT_EQ(refs[k], kStartNs + (k * kSecond + 2) / 3) << "batch " << k;
  }
  EXPECT_EQ(refs[10'800], kStartNs + 3600 * kSecond);
}

TEST_F(Perfgen, FractionalRatesKeepTheirThousandths) {
  create({{"batches_per_second", 2.5}, {"events_per_batch", 1}});
  tickEvery(10 * kMs, 4 * kSecond);
  EXPECT_EQ(stat("perfgen.batches"), 11); // floor(4 x 2.5) + 1
  EXPECT_EQ(references().at(1), kStartNs + 400 * kMs);
  create({{"batches_per_second", 0.001}, {"events_per_batch", 1}});
  tickEvery(10 * kSecond, 2000 * kSecond);
  EXPECT_EQ(stat("perfgen.batches"), 3); // at 0, 1000 s and 2000 s
}

TEST_F(Perfgen, EveryBatchHasAReferenceTimeOfItsOwnAtTheHighestRate) {
  // One ev44 message per pulse: batches must never share a reference time, or the event sink
  // would put two of them in one message. At 1e6 batches/s they are 1 us apart.
  create({{"batches_per_second", 1000000}, {"events_per_batch", 2}});
  tickEvery(kMs, 20 * kMs);
  EXPECT_EQ(stat("perfgen.batches"), 20'001);
  const auto refs = references();
  ASSERT_EQ(refs.size(), 20'001U);
  for (size_t k = 1; k < refs.size(); ++k) {
    ASSERT_EQ(refs[k] - refs[k - 1], 1000) << k;
  }
}

TEST_F(Perfgen, NoTickNoEventsAndATickBeforeTheNextDueTimeMakesNone) {
  create({{"batches_per_second", 10}, {"events_per_batch", 4}});
  EXPECT_TRUE(events().empty());
  module_->tick(kStartNs);
  EXPECT_EQ(stat("perfgen.batches"), 1);
  module_->tick(kStartNs + 100 * kMs - 1);
  EXPECT_EQ(stat("perfgen.batches"), 1);
  module_->tick(kStartNs + 100 * kMs);
  EXPECT_EQ(stat("perfgen.batches"), 2);
  module_->tick(kStartNs + 100 * kMs); // the same time again: nothing new
  EXPECT_EQ(stat("perfgen.batches"), 2);
}

// ---- the bound per tick -------------------------------------------------------------------------

TEST_F(Perfgen, AStallMakesAtMostTheBoundAndCountsTheSkippedBatches) {
  // 100 events per batch, at most 250 per tick: 2 whole batches per tick.
  create({{"batches_per_second", 1000}, {"events_per_batch", 100}, {"max_events_per_tick", 250}});
  module_->tick(kStartNs);
  EXPECT_EQ(stat("perfgen.batches"), 1);
  // A one-second stall: batches 1..1000 are due; the newest two are made, 998 skipped.
  module_->tick(kStartNs + kSecond);
  EXPECT_EQ(stat("perfgen.batches"), 3);
  EXPECT_EQ(stat("perfgen.skipped_batches"), 998);
  EXPECT_EQ(stat("perfgen.skipped_events"), 99'800);
  EXPECT_EQ(stat("events.count"), 300);
  EXPECT_EQ(references(),
            (std::vector<int64_t>{kStartNs, kStartNs + 999 * kMs, kStartNs + 1000 * kMs}));
  // The schedule goes on from there, not from before the stall.
  module_->tick(kStartNs + kSecond + kMs);
  EXPECT_EQ(stat("perfgen.batches"), 4);
  EXPECT_EQ(stat("perfgen.skipped_batches"), 998);
  EXPECT_EQ(references().back(), kStartNs + 1001 * kMs);
  // Made + skipped = every batch due.
  EXPECT_EQ(stat("perfgen.batches") + stat("perfgen.skipped_batches"), 1002);
}

TEST_F(Perfgen, TheBoundIsWholeBatchesAndSkippedBatchesTakeNoPixels) {
  create({{"image_width", 4},
          {"image_height", 4},
          {"batches_per_second", 1000},
          {"events_per_batch", 3},
          {"max_events_per_tick", 3}});
  module_->tick(kStartNs);
  module_->tick(kStartNs + 10 * kMs); // 10 due, 1 made
  EXPECT_EQ(stat("perfgen.batches"), 2);
  EXPECT_EQ(stat("perfgen.skipped_batches"), 9);
  EXPECT_EQ(stat("perfgen.skipped_events"), 27);
  // A 4 x 4 image is the frame and the F's stem at (1, 1) and (1, 2): the walk is 1 2 3 4 5 6 8
  // 9 10 12 13 14 15 16. The batch after the skipped ones goes on where the last one ended.
  std::vector<int32_t> pixels;
  for (const RecordedEvent &e : events()) {
    pixels.push_back(e.pixelId);
  }
  EXPECT_EQ(pixels, (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST_F(Perfgen, SaysAtStartWhenTheBoundCannotKeepUpWithTheRate) {
  create({{"batches_per_second", 1000000}, {"events_per_batch", 500}});
  EXPECT_EQ(ctx_->logged("raise max_events_per_tick").size(), 1U);
  create({{"batches_per_second", 14}});
  EXPECT_TRUE(ctx_->logged("raise max_events_per_tick").empty());
  EXPECT_EQ(ctx_->logged("14 batches/s of 500 events (7000 events/s), a 64 x 64 test image of "
                         "704 lit pixels")
                .size(),
            1U);
}

// ---- the clock going back -----------------------------------------------------------------------

TEST_F(Perfgen, TheScheduleStartsAgainWhenTheClockGoesBack) {
  create({{"batches_per_second", 10}, {"events_per_batch", 1}});
  tickEvery(10 * kMs, 100 * kMs); // batches at 0 and 100 ms
  EXPECT_EQ(stat("perfgen.clock_restarts"), 0);
  module_->tick(kStartNs - 5 * kSecond);
  EXPECT_EQ(stat("perfgen.clock_restarts"), 1);
  module_->tick(kStartNs - 5 * kSecond + 100 * kMs);
  EXPECT_EQ(references(),
            (std::vector<int64_t>{kStartNs, kStartNs + 100 * kMs, kStartNs - 5 * kSecond,
                                  kStartNs - 5 * kSecond + 100 * kMs}));
  EXPECT_EQ(stat("perfgen.skipped_batches"), 0);
}

// ---- the image, the walk and the times of flight ------------------------------------------------

/// The lit pixels of a width x height image as text rows, '#' lit.
std::vector<std::string> picture(uint32_t width, uint32_t height) {
  std::vector<std::string> rows;
  for (uint32_t y = 0; y < height; ++y) {
    std::string row;
    for (uint32_t x = 0; x < width; ++x) {
      row += isLit(x, y, width, height) ? '#' : '.';
    }
    rows.push_back(row);
  }
  return rows;
}

TEST(PerfgenImage, IsAnFInAFrame) {
  // clang-format off
  EXPECT_EQ(picture(10, 10), (std::vector<std::string>{"##########",
                                                       "#........#",
                                                       "#..####..#",
                                                       "#..#.....#",
                                                       "#..###...#",
                                                       "#..#.....#",
                                                       "#..#.....#",
                                                       "#..#.....#",
                                                       "#........#",
                                                       "##########"}));
  // clang-format on
  EXPECT_EQ(picture(3, 2), (std::vector<std::string>{"###", "###"}));
  EXPECT_EQ(picture(1, 1), (std::vector<std::string>{"#"}));
}

TEST(PerfgenImage, SixtyFourSquaredHas704LitPixels) {
  // Frame 252; the stem x 19..25, y 13..50 (266); the top bar x 26..44, y 13..18 (114); the
  // middle bar x 26..37, y 29..34 (72).
  EXPECT_EQ(PixelWalk(64, 64).litPixels(), 704U);
  const auto rows = picture(64, 64);
  const auto lit = [](size_t n) { return std::string(n, '#'); };
  const auto dark = [](size_t n) { return std::string(n, '.'); };
  EXPECT_EQ(rows[13], lit(1) + dark(18) + lit(26) + dark(18) + lit(1)); // the top bar
  EXPECT_EQ(rows[30], lit(1) + dark(18) + lit(19) + dark(25) + lit(1)); // the middle bar
  EXPECT_EQ(rows[40], lit(1) + dark(18) + lit(7) + dark(37) + lit(1));  // the stem alone
  EXPECT_EQ(rows[51], lit(1) + dark(62) + lit(1));                      // below the F
}

TEST(PerfgenImage, TheWalkVisitsTheLitPixelsRowByRowAndStartsAgain) {
  for (const auto &[w, h] :
       std::vector<std::pair<uint32_t, uint32_t>>{{64, 64}, {10, 10}, {7, 3}, {1, 1}, {300, 17}}) {
    std::vector<int32_t> lit;
    for (uint32_t y = 0; y < h; ++y) {
      for (uint32_t x = 0; x < w; ++x) {
        if (isLit(x, y, w, h)) {
          lit.push_back(static_cast<int32_t>(y * w + x + 1));
        }
      }
    }
    PixelWalk walk(w, h);
    ASSERT_EQ(walk.litPixels(), lit.size());
    for (int round = 0; round < 2; ++round) {
      for (size_t i = 0; i < lit.size(); ++i) {
        ASSERT_EQ(walk.next(), lit[i]) << w << " x " << h << ", round " << round << ", step " << i;
      }
    }
  }
}

TEST_F(Perfgen, BatchesCarryTimesOfFlightZeroToNMinusOneAndContinueTheWalk) {
  create({{"batches_per_second", 100}, {"events_per_batch", 300}});
  tickEvery(10 * kMs, 50 * kMs); // 6 batches of 300: 1800 events, 2.6 rounds of the 704 pixels
  ASSERT_EQ(events().size(), 1800U);
  PixelWalk walk(64, 64);
  for (size_t i = 0; i < events().size(); ++i) {
    const RecordedEvent &e = events()[i];
    ASSERT_EQ(e.tofNs, static_cast<int32_t>(i % 300)) << i;
    ASSERT_EQ(e.pixelId, walk.next()) << i;
    ASSERT_EQ(e.pulseTimeNs, kStartNs + static_cast<int64_t>(i / 300) * 10 * kMs) << i;
  }
  // The walk at 64 x 64 begins with the top row, then the frame's two pixels of each row.
  EXPECT_EQ(events()[0].pixelId, 1);
  EXPECT_EQ(events()[63].pixelId, 64);
  EXPECT_EQ(events()[64].pixelId, 65);
  EXPECT_EQ(events()[65].pixelId, 128);
  EXPECT_EQ(events()[66].pixelId, 129);
}

TEST_F(Perfgen, DefaultsAreTheEssPerfgensImageAndBatch) {
  create(nlohmann::json::object());
  const auto g = PerfgenModule::imageGeometry(validated(nlohmann::json::object()), "(defaults)");
  EXPECT_EQ(g.width, 64U);
  EXPECT_EQ(g.height, 64U);
  EXPECT_EQ(g.firstPixel, 1U);
  module_->tick(kStartNs);
  EXPECT_EQ(events().size(), 500U);
  EXPECT_EQ(events().back().tofNs, 499);
}

// ---- counters, input, keys ----------------------------------------------------------------------

TEST_F(Perfgen, RegistersItsCountersOnceAndIgnoresDatagrams) {
  create(nlohmann::json::object());
  std::set<std::string> names;
  for (const auto &[name, value] : ctx_->snapshot()) {
    names.insert(name);
    EXPECT_FALSE(ctx_->isGauge(name)) << name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"readouts.count", "events.count", "events.udder",
                                          "perfgen.batches", "perfgen.skipped_batches",
                                          "perfgen.skipped_events", "perfgen.clock_restarts"}));
  std::array<uint8_t, 64> data{};
  module_->process(sdk::Packet{data.data(), static_cast<uint32_t>(data.size()), 0, kStartNs});
  module_->process(sdk::Packet{data.data(), 0, 0, kStartNs});
  EXPECT_EQ(stat("readouts.count"), 2);
  EXPECT_TRUE(events().empty());
  EXPECT_EQ(stat("events.count"), 0);
}

/// The message validating `config` and building the module gives ("" if none).
std::string refusal(const nlohmann::json &config) {
  try {
    FakeModuleContext ctx(validated(config), "pg.json");
    PerfgenModule module(ctx);
  } catch (const sdk::ConfigError &e) {
    return e.what();
  }
  return "";
}

TEST(PerfgenKeys, BadValuesAreRefusedNamingTheKeyAndTheValue) {
  EXPECT_EQ(refusal({{"image_width", 0}}),
            "pg.json: key 'image_width' = 0 is out of range [1, 4096]");
  EXPECT_EQ(refusal({{"image_height", 4097}}),
            "pg.json: key 'image_height' = 4097 is out of range [1, 4096]");
  EXPECT_EQ(refusal({{"events_per_batch", 0}}),
            "pg.json: key 'events_per_batch' = 0 is out of range [1, 1000000]");
  EXPECT_EQ(refusal({{"batches_per_second", 0}}),
            "pg.json: key 'batches_per_second' = 0 is out of range [0.001, 1000000]");
  EXPECT_EQ(refusal({{"batches_per_second", 2e6}}),
            "pg.json: key 'batches_per_second' = 2000000.0 is out of range [0.001, 1000000]");
  EXPECT_EQ(refusal({{"events_per_batch", "500"}}),
            "pg.json: key 'events_per_batch' must be integer, got \"500\"");
  EXPECT_EQ(refusal({{"events_per_batch", 2.5}}),
            "pg.json: key 'events_per_batch' must be integer, got 2.5");
  EXPECT_NE(refusal({{"width", 64}}).find("pg.json: unknown key 'width' for module 'perfgen'"),
            std::string::npos);
  EXPECT_EQ(refusal({{"events_per_batch", 500}, {"max_events_per_tick", 499}}),
            "pg.json: key 'max_events_per_tick' = 499 is below 'events_per_batch' = 500: a tick "
            "makes whole batches");
  EXPECT_EQ(refusal({{"events_per_batch", 500}, {"max_events_per_tick", 500}}), "");
}

TEST(PerfgenKeys, TheImageGeometryRefusesWhatTheModuleRefuses) {
  EXPECT_THROW(PerfgenModule::imageGeometry(
                   validated({{"events_per_batch", 10}, {"max_events_per_tick", 5}}), "pg.json"),
               sdk::ConfigError);
  const auto g =
      PerfgenModule::imageGeometry(validated({{"image_width", 5}, {"image_height", 9}}), "pg.json");
  EXPECT_EQ(g.width, 5U);
  EXPECT_EQ(g.height, 9U);
}

} // namespace
} // namespace efu::perfgen
