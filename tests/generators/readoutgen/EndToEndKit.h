// SPDX-License-Identifier: BSD-2-Clause
// Shared by the readoutgen end-to-end tests: readoutgen's truth CSV and efu-dump's ev44 lines as
// multisets of (pulse ns, tof ns, pixel), and EndToEnd, the run readoutgen --truth → efu →
// efu-broker → efu-dump of one instrument file. A test including it defines EFU_BINARY,
// READOUTGEN, EFU_BROKER and EFU_DUMP (tests/generators/readoutgen/CMakeLists.txt).
#pragma once

#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace efu::testkit {

namespace fs = std::filesystem;
using Event = std::tuple<int64_t, int64_t, int64_t>; // pulse ns, tof ns, pixel

inline std::string readFile(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    out.push_back(l);
  }
  return out;
}

inline std::map<Event, int64_t> readTruth(const fs::path &p) {
  std::map<Event, int64_t> out;
  const auto ls = lines(readFile(p));
  EXPECT_FALSE(ls.empty());
  EXPECT_EQ(ls.at(0), "pulse_time_ns,tof_ns,pixel_id");
  for (size_t i = 1; i < ls.size(); ++i) {
    long long pulse = 0, tof = 0, pixel = 0;
    EXPECT_EQ(std::sscanf(ls[i].c_str(), "%lld,%lld,%lld", &pulse, &tof, &pixel), 3) << ls[i];
    ++out[{pulse, tof, pixel}];
  }
  return out;
}

/// The events of efu-dump's JSON lines (ev44 only), expanded with their reference times; with
/// `source`, only those of messages from that source. With `firstPulseOnly`, every event of a
/// message gets its first reference time, as just-bin-it's ev44 reader does (correct only when
/// messages hold one pulse each).
inline std::map<Event, int64_t> dumpedEvents(const std::string &output, int64_t &total,
                                             bool firstPulseOnly = false,
                                             const std::string &source = "") {
  std::map<Event, int64_t> out;
  total = 0;
  for (const auto &l : lines(output)) {
    if (l.empty() || l[0] != '{') {
      continue;
    }
    const auto j = nlohmann::json::parse(l, nullptr, false);
    if (j.is_discarded() || !j.contains("time_of_flight") || !j.contains("pixel_id") ||
        (!source.empty() && j.value("source_name", "") != source)) {
      continue;
    }
    const auto &ref = j.at("reference_time");
    const auto &idx = j.at("reference_time_index");
    const auto &tof = j.at("time_of_flight");
    const auto &pix = j.at("pixel_id");
    size_t r = 0;
    for (size_t i = 0; i < tof.size(); ++i) {
      while (!firstPulseOnly && r + 1 < idx.size() && idx[r + 1].get<size_t>() <= i) {
        ++r;
      }
      ++out[{ref[r].get<int64_t>(), tof[i].get<int64_t>(), pix[i].get<int64_t>()}];
      ++total;
    }
  }
  return out;
}

/// One dev broker and a scratch folder, for a test's runs of readoutgen → efu → efu-broker →
/// efu-dump, one instrument file at a time.
class EndToEnd {
public:
  explicit EndToEnd(const std::string &name)
      : dir_(fs::temp_directory_path() / (name + "-e2e-" + std::to_string(getpid()))),
        broker_(EFU_BROKER, {"--log-level", "warn"}), bootstrap_(broker_.bootstrap()) {
    fs::create_directories(dir_);
  }
  ~EndToEnd() { fs::remove_all(dir_); }
  EndToEnd(const EndToEnd &) = delete;
  EndToEnd &operator=(const EndToEnd &) = delete;

  /// One instrument's run: efu, its control port and readoutgen's truth.
  struct Run {
    std::string label;
    std::unique_ptr<Process> efu;
    uint16_t cmd = 0;
    std::map<Event, int64_t> truth;
    int64_t truthEvents = 0;
    [[nodiscard]] std::optional<int64_t> counter(const std::string &name) const {
      return testkit::counter(cmd, name);
    }
  };

  [[nodiscard]] const fs::path &dir() const { return dir_; }
  [[nodiscard]] const std::string &bootstrap() const { return bootstrap_; }

  /// Starts efu with `efuArgs` (-d, -f, ...; the ports, the broker and a 0.2-s stats interval
  /// are added), sends readoutgen's neutrons with `generatorArgs` (-d, -f, -n, ...; the port, -q
  /// and --truth are added) and waits until efu has formed as many events as the truth holds.
  /// A failure is fatal: call it in ASSERT_NO_FATAL_FAILURE.
  void start(Run &run, const std::string &label, std::vector<std::string> efuArgs,
             std::vector<std::string> generatorArgs) {
    using namespace std::chrono_literals;
    run.label = label;
    const uint16_t udp = freeUdpPort();
    run.cmd = freeTcpPort();
    efuArgs.insert(efuArgs.begin(), EFU_BINARY);
    efuArgs.insert(efuArgs.end(), {"-p", std::to_string(udp), "-m", std::to_string(run.cmd), "-b",
                                   bootstrap_, "--stats-interval", "0.2"});
    run.efu = std::make_unique<Process>(efuArgs);
    ASSERT_TRUE(eventually([&] {
      return !control(run.cmd, "VERSION_GET").empty() || !run.efu->running();
    })) << run.efu->output();
    ASSERT_TRUE(run.efu->running()) << run.efu->output();
    const fs::path truthPath = dir_ / (label + "-truth.csv");
    generatorArgs.insert(generatorArgs.begin(), READOUTGEN);
    generatorArgs.insert(generatorArgs.end(),
                         {"-p", std::to_string(udp), "-q", "--truth", truthPath.string()});
    Process generator(generatorArgs);
    ASSERT_EQ(generator.wait(120s), std::optional<int>(0)) << generator.output();
    run.truth = readTruth(truthPath);
    for (const auto &[e, n] : run.truth) {
      run.truthEvents += n;
    }
    ASSERT_TRUE(eventually([&] { return run.counter("events.count") == run.truthEvents; }))
        << label << ": " << run.counter("events.count").value_or(-1) << " of " << run.truthEvents;
  }

  /// Stops efu (it must exit 0, having flushed) and reads `topic` back from the beginning with
  /// efu-dump: exactly the truth, no event more; with `source`, every ev44 message under that
  /// source_name.
  void expectPublishedTruth(Run &run, const std::string &topic, const std::string &source = "") {
    using namespace std::chrono_literals;
    run.efu->signal(SIGTERM);
    ASSERT_EQ(run.efu->wait(20s), std::optional<int>(0)) << run.efu->output();
    Process dump({EFU_DUMP, "-b", bootstrap_, "-t", topic, "--from", "beginning", "--timeout", "3",
                  "--log-level", "warn"});
    ASSERT_TRUE(dump.wait(60s).has_value());
    int64_t dumped = 0;
    EXPECT_EQ(dumpedEvents(dump.output(), dumped), run.truth) << run.label;
    EXPECT_EQ(dumped, run.truthEvents) << run.label;
    // Every source's message ids are 0, 1, 2, ... without a gap or a repeat (in any order: with
    // several processing threads a source's messages come from several threads).
    std::set<std::string> sources;
    std::map<std::string, std::vector<int64_t>> ids;
    for (const auto &l : lines(dump.output())) {
      const auto j = nlohmann::json::parse(l, nullptr, false);
      if (!j.is_discarded() && j.value("kind", "") == "ev44") {
        sources.insert(j.value("source_name", ""));
        ids[j.value("source_name", "")].push_back(j.value("message_id", int64_t{-1}));
      }
    }
    for (auto &[name, list] : ids) {
      std::sort(list.begin(), list.end());
      for (size_t i = 0; i < list.size(); ++i) {
        ASSERT_EQ(list[i], static_cast<int64_t>(i)) << run.label << ": source " << name;
      }
    }
    if (!source.empty()) {
      EXPECT_EQ(sources, std::set<std::string>{source}) << run.label;
    }
  }

private:
  fs::path dir_;
  DevBroker broker_;
  std::string bootstrap_;
};

} // namespace efu::testkit
