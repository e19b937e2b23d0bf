// SPDX-License-Identifier: BSD-2-Clause
// efu -d perfgen, the real daemon with no input, publishing into the development broker: its
// ev44 messages come back through efu-dump one batch each, in the walk's order, with times of
// flight 0..N-1, reference times on the schedule, and every event the final counters count;
// efu-dump draws the image from the perfgen file alone (no --det).
#include "modules/perfgen/PerfgenImage.h"
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace efu::testkit;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

TEST(PerfgenDaemon, PublishesBatchesWalkingTheImageThroughTheBroker) {
  constexpr int kEventsPerBatch = 50;
  constexpr int64_t kPeriodNs = 5'000'000; // 200 batches/s
  const fs::path dir = fs::temp_directory_path() / ("efu-perfgen-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string config = dir / "perfgen.json";
  std::ofstream(config) << R"({"image_width": 16, "image_height": 12, "events_per_batch": 50,
                               "batches_per_second": 200})";
  DevBroker broker(BROKER_BINARY);
  const uint16_t cmdPort = freeTcpPort();
  Process efu({EFU_BINARY, "-d", "perfgen", "-f", config, "-i", "127.0.0.1", "-p",
               std::to_string(freeUdpPort()), "-m", std::to_string(cmdPort), "-b",
               broker.bootstrap(), "--stats-interval", "0.2"});
  // No input: the events come by themselves, and reach the broker.
  ASSERT_TRUE(eventually([&] { return counter(cmdPort, "kafka.delivered").value_or(0) >= 20; }))
      << efu.output();
  ASSERT_TRUE(eventually([&] { return counter(cmdPort, "kafka.ev44.messages").value_or(0) >= 20; }))
      << efu.output();
  EXPECT_EQ(counter(cmdPort, "readouts.count"), 0);
  efu.signal(SIGTERM); // the final publication carries the final counts
  ASSERT_EQ(efu.wait(30s), std::optional<int>(0)) << efu.output();
  EXPECT_NE(efu.output().find("perfgen: 200 batches/s of 50 events (10000 events/s), a 16 x 12 "
                              "test image"),
            std::string::npos)
      << efu.output();

  const std::string png = dir / "perfgen.png";
  Process dump({DUMP_BINARY, "-b", broker.bootstrap(), "-t", "perfgen_detector", "-t",
                "perfgen_stats", "--from", "beginning", "--timeout", "3", "--image", png,
                "--geometry", config, "--format", "json"});
  ASSERT_EQ(dump.wait(60s), std::optional<int>(0)) << dump.output();
  EXPECT_NE(dump.output().find("perfgen geometry 16 x 12"), std::string::npos) << dump.output();
  EXPECT_TRUE(fs::exists(png));

  std::map<int64_t, nlohmann::json> batches; // by message id (the topic may have partitions)
  int64_t finalEvents = -1;
  int64_t finalBatches = -1;
  int64_t finalSkipped = -1;
  std::istringstream lines(dump.output());
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.front() != '{') {
      continue;
    }
    auto message = nlohmann::json::parse(line);
    if (message.at("kind") == "ev44") {
      const int64_t id = message.at("message_id");
      ASSERT_TRUE(batches.emplace(id, std::move(message)).second)
          << "message id " << id << " twice";
    } else if (message.at("kind") == "f144") {
      const std::string source = message.at("source_name");
      const int64_t value = message.at("value");
      if (source == "efu.perfgen.events.count") {
        finalEvents = std::max(finalEvents, value);
      } else if (source == "efu.perfgen.perfgen.batches") {
        finalBatches = std::max(finalBatches, value);
      } else if (source == "efu.perfgen.perfgen.skipped_batches") {
        finalSkipped = std::max(finalSkipped, value);
      }
    }
  }
  ASSERT_GE(batches.size(), 20U);
  EXPECT_EQ(static_cast<int64_t>(batches.size()), finalBatches) << "one message per batch";
  EXPECT_EQ(finalSkipped, 0);

  efu::perfgen::PixelWalk walk(16, 12);
  int64_t expectedId = 0;
  int64_t firstReference = 0;
  int64_t events = 0;
  for (const auto &[id, m] : batches) {
    ASSERT_EQ(id, expectedId++) << "message ids 0, 1, 2, ... without a gap";
    EXPECT_EQ(m.at("source_name"), "perfgen");
    const auto reference = m.at("reference_time").get<std::vector<int64_t>>();
    ASSERT_EQ(reference.size(), 1U) << "one batch, one pulse per message";
    EXPECT_EQ(m.at("reference_time_index").get<std::vector<int32_t>>(), std::vector<int32_t>{0});
    if (id == 0) {
      firstReference = reference[0];
    }
    EXPECT_EQ(reference[0] - firstReference, id * kPeriodNs) << "batch " << id;
    const auto tof = m.at("time_of_flight").get<std::vector<int32_t>>();
    const auto pixel = m.at("pixel_id").get<std::vector<int32_t>>();
    ASSERT_EQ(tof.size(), static_cast<size_t>(kEventsPerBatch));
    ASSERT_EQ(pixel.size(), static_cast<size_t>(kEventsPerBatch));
    for (int i = 0; i < kEventsPerBatch; ++i) {
      ASSERT_EQ(tof[i], i) << "batch " << id;
      ASSERT_EQ(pixel[i], walk.next()) << "batch " << id << ", event " << i;
    }
    events += kEventsPerBatch;
  }
  EXPECT_EQ(events, finalEvents) << "every event counted arrived";
  fs::remove_all(dir);
}

} // namespace
