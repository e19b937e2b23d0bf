// SPDX-License-Identifier: BSD-2-Clause
// End to end: readoutgen (vmm3 source, --truth) → efu -d vmm3 (freia.json) → efu-broker →
// efu-dump; at least 99 % of the ground-truth events come back with the right pixel (±1 strip
// in x and y) and the right time of flight.
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

using namespace efu::testkit;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kNx = 128; // freia.json
/// freia.json has fine_time on: the generator encodes each hit's ns offset in the TDC exactly
/// and the module floors it back, so the time of flight comes back to the ns.
constexpr int64_t kTofToleranceNs = 1;

struct Event {
  int64_t tofNs;
  int32_t pixelId;
};

class Vmm3EndToEnd : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("efu-vmm3-e2e-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    broker_ = std::make_unique<DevBroker>(BROKER_BINARY,
                                          std::vector<std::string>{"--topic", "vmm3_detector"});
    bootstrap_ = broker_->bootstrap();
  }

  void TearDown() override {
    EXPECT_EQ(broker_->stop().value_or(-1), 0);
    fs::remove_all(dir_);
  }

  fs::path dir_;
  std::string bootstrap_;
  std::unique_ptr<DevBroker> broker_;
};

/// Truth CSV (pulse_time_ns,tof_ns,pixel_id) grouped by pulse.
std::multimap<int64_t, Event> readTruth(const fs::path &path) {
  std::multimap<int64_t, Event> out;
  std::ifstream in(path);
  std::string line;
  std::getline(in, line); // header
  while (std::getline(in, line)) {
    int64_t pulse = 0;
    int64_t tof = 0;
    int32_t pixel = 0;
    if (std::sscanf(line.c_str(), "%ld,%ld,%d", &pulse, &tof, &pixel) == 3) {
      out.emplace(pulse, Event{tof, pixel});
    }
  }
  return out;
}

bool samePixelWithinOneStrip(int32_t a, int32_t b) {
  const int64_t ax = (a - 1) % kNx;
  const int64_t ay = (a - 1) / kNx;
  const int64_t bx = (b - 1) % kNx;
  const int64_t by = (b - 1) / kNx;
  return std::llabs(ax - bx) <= 1 && std::llabs(ay - by) <= 1;
}

TEST_F(Vmm3EndToEnd, GroundTruthComesBackThroughKafka) {
  constexpr int kEvents = 20000;
  const std::string config = std::string(EFU_SOURCE_DIR) + "/modules/vmm3/configs/freia.json";
  const uint16_t udpPort = freeUdpPort();
  const uint16_t cmdPort = freeTcpPort();
  Process efu({EFU_BINARY, "-d", "vmm3", "--config", config, "-i", "127.0.0.1", "-p",
               std::to_string(udpPort), "-m", std::to_string(cmdPort), "-b", bootstrap_,
               "--stats-interval", "0.2",
               // The module and Kafka output on the rx thread (the caen end-to-end test covers
               // the processing thread).
               "--threads", "1"});
  ASSERT_TRUE(eventually([&] { return !control(cmdPort, "VERSION_GET").empty(); })) << efu.output();

  // One event per pulse at 1 kHz: event times increase from one event to the next, as VMM3
  // front ends deliver them (see modules/vmm3/README.md, "Time order").
  const fs::path truthPath = dir_ / "truth.csv";
  Process gen({READOUTGEN_BINARY,
               "-d",
               "vmm3",
               "-f",
               config,
               "-p",
               std::to_string(udpPort),
               "-n",
               std::to_string(kEvents),
               "--events-per-pulse",
               "1",
               "--pulse-hz",
               "1000",
               "--eps",
               "50000",
               "--truth",
               truthPath.string(),
               "--inject-errors",
               "cookie:20",
               "--inject-errors",
               "length:20",
               "--inject-errors",
               "type:20",
               "--inject-every",
               "500",
               "--json",
               "-q"});
  ASSERT_EQ(gen.wait(120s).value_or(-1), 0) << gen.output();
  const nlohmann::json summary = nlohmann::json::parse(gen.output().substr(gen.output().find('{')));
  const int64_t datagrams =
      summary.at("datagrams").get<int64_t>() + summary.at("injected").get<int64_t>();
  ASSERT_EQ(summary.at("injected").get<int64_t>(), 60);
  ASSERT_TRUE(eventually([&] { return counter(cmdPort, "processing.packets") == datagrams; }, 60s))
      << efu.output();
  EXPECT_EQ(counter(cmdPort, "parser.essheader.seq.lost"), 0);
  EXPECT_EQ(counter(cmdPort, "readouts.count"), summary.at("readouts").get<int64_t>());
  EXPECT_EQ(counter(cmdPort, "hits.rejected.threshold"), kEvents); // one noise hit per event
  EXPECT_EQ(counter(cmdPort, "hits.late"), 0);
  // Malformed datagrams mixed in are counted once each and change nothing else.
  EXPECT_EQ(counter(cmdPort, "parser.essheader.errors.cookie"), 20);
  EXPECT_EQ(counter(cmdPort, "parser.essheader.errors.size"), 20);
  EXPECT_EQ(counter(cmdPort, "parser.essheader.errors.type"), 20);
  EXPECT_EQ(counter(cmdPort, "parser.essheader.ok"), summary.at("datagrams").get<int64_t>());
  efu.signal(SIGTERM); // flush() forms the last event; the final publication carries it
  ASSERT_EQ(efu.wait(30s).value_or(-1), 0) << efu.output();

  Process dump({DUMP_BINARY, "-b", bootstrap_, "-t", "vmm3_detector", "--from", "beginning",
                "--timeout", "3"});
  ASSERT_TRUE(dump.wait(120s).has_value());
  std::multimap<int64_t, Event> received;
  std::istringstream lines(dump.output());
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.front() != '{') {
      continue;
    }
    const nlohmann::json m = nlohmann::json::parse(line);
    if (m.value("kind", "") != "ev44") {
      continue;
    }
    const auto &refs = m.at("reference_time");
    const auto &index = m.at("reference_time_index");
    const auto &tofs = m.at("time_of_flight");
    const auto &pixels = m.at("pixel_id");
    for (size_t r = 0; r < refs.size(); ++r) {
      const size_t end = r + 1 < index.size() ? index[r + 1].get<size_t>() : tofs.size();
      for (size_t i = index[r].get<size_t>(); i < end; ++i) {
        received.emplace(refs[r].get<int64_t>(), Event{tofs[i].get<int64_t>(), pixels[i]});
      }
    }
  }

  const auto truth = readTruth(truthPath);
  ASSERT_EQ(truth.size(), static_cast<size_t>(kEvents));
  size_t matched = 0;
  for (const auto &[pulse, t] : truth) {
    auto [first, last] = received.equal_range(pulse);
    for (auto it = first; it != last; ++it) {
      if (std::llabs(it->second.tofNs - t.tofNs) <= kTofToleranceNs &&
          samePixelWithinOneStrip(it->second.pixelId, t.pixelId)) {
        ++matched;
        received.erase(it); // each received event matches one truth event
        break;
      }
    }
  }
  RecordProperty("matched", static_cast<int>(matched));
  std::printf("vmm3 end to end: %zu of %zu truth events matched, %zu received events left\n",
              matched, truth.size(), received.size());
  EXPECT_GE(matched * 100, truth.size() * 99)
      << matched << " of " << truth.size() << " truth events came back; " << received.size()
      << " received events unmatched";
}

} // namespace
