// SPDX-License-Identifier: BSD-2-Clause
// End to end for the ESS CDT instruments: readoutgen --truth → efu -d dream / -d magic /
// -d heimdal (the ESS files, unchanged) → efu-broker → efu-dump; every event comes back with the
// ESS pixel id and time of flight of the truth, and nothing else comes back. Real binaries on
// loopback.
#include "tests/generators/readoutgen/EndToEndKit.h"

#include <gtest/gtest.h>

namespace efu::testkit {
namespace {

TEST(DreamEndToEnd, DreamMagicAndHeimdalMatchGroundTruth) {
  EndToEnd e2e("dream");
  const std::string configs = std::string(EFU_SOURCE_DIR) + "/modules/dream/configs/";
  struct Instrument {
    std::string name, file;
  };
  for (const Instrument &i : std::vector<Instrument>{{"dream", "DreamInst.json"},
                                                     {"magic", "MagicInst.json"},
                                                     {"heimdal", "HeimdalInst.json"}}) {
    const std::string config = configs + i.file;
    EndToEnd::Run run;
    ASSERT_NO_FATAL_FAILURE(e2e.start(
        run, i.name, {"-d", i.name, "-f", config},
        {"-d", i.name, "-f", config, "-n", "30000", "--eps", "200000", "--pattern", "uniform"}));
    ASSERT_EQ(run.truthEvents, 30000) << i.name;
    EXPECT_EQ(run.counter("readouts.count"), run.truthEvents) << i.name;
    EXPECT_EQ(run.counter("parser.essheader.errors.timehigh"), 0) << i.name;
    EXPECT_EQ(run.counter("geometry.pixel_errors"), 0) << i.name;
    EXPECT_EQ(run.counter("geometry.validation_errors"), 0) << i.name;
    // Under the ESS EFU's source name, the binary's detector name (src/modules/dream/DreamBase.h,
    // main.cpp, main_magic.cpp, main_heimdal.cpp): dream, magic, heimdal.
    ASSERT_NO_FATAL_FAILURE(e2e.expectPublishedTruth(run, i.name + "_detector", i.name));
  }
}

// Beyond one core (docs/deploy.md): two efu processes share one UDP port (--reuse-port) and one
// topic, each under its own source name. Two readoutgen streams go to the port; the kernel keeps
// each stream whole on one process; the topic holds exactly both truths, and each process's
// events under its source name.
TEST(DreamEndToEnd, TwoProcessesShareOnePortAndOneTopic) {
  using namespace std::chrono_literals;
  EndToEnd e2e("dream-two");
  const std::string config = std::string(EFU_SOURCE_DIR) + "/modules/dream/configs/DreamInst.json";
  const uint16_t udp = freeUdpPort();
  struct Instance {
    std::string source;
    uint16_t cmd = 0;
    std::unique_ptr<Process> efu;
  };
  std::vector<Instance> efus(2);
  for (size_t k = 0; k < efus.size(); ++k) {
    Instance &i = efus[k];
    i.source = k == 0 ? "dream-a" : "dream-b";
    i.cmd = freeTcpPort();
    i.efu = std::make_unique<Process>(std::vector<std::string>{
        EFU_BINARY, "-d", "dream", "-f", config, "-p", std::to_string(udp), "-m",
        std::to_string(i.cmd), "-b", e2e.bootstrap(), "--reuse-port", "--source-name", i.source,
        "--stats-topic", "dream_stats_" + std::to_string(k), "--stats-interval", "0.2"});
    ASSERT_TRUE(eventually([&] {
      return !control(i.cmd, "VERSION_GET").empty() || !i.efu->running();
    })) << i.efu->output();
    ASSERT_TRUE(i.efu->running()) << i.efu->output();
  }
  // Without --reuse-port a third process cannot bind the port the two share.
  Process third({EFU_BINARY, "-d", "dream", "-f", config, "-p", std::to_string(udp), "-m",
                 std::to_string(freeTcpPort()), "--no-kafka"});
  ASSERT_EQ(third.wait(20s), std::optional<int>(1)) << third.output();

  std::vector<std::unique_ptr<Process>> generators;
  std::vector<fs::path> truthPaths;
  for (const std::string seed : {"1", "2"}) {
    truthPaths.push_back(e2e.dir() / ("truth-" + seed + ".csv"));
    generators.push_back(std::make_unique<Process>(
        std::vector<std::string>{READOUTGEN, "-d", "dream", "-f", config, "-p", std::to_string(udp),
                                 "-q", "-n", "10000", "--eps", "100000", "--seed", seed,
                                 "--pattern", "uniform", "--truth", truthPaths.back().string()}));
  }
  std::map<Event, int64_t> truth;
  std::vector<int64_t> streamEvents;
  for (size_t k = 0; k < generators.size(); ++k) {
    ASSERT_EQ(generators[k]->wait(120s), std::optional<int>(0)) << generators[k]->output();
    int64_t n = 0;
    for (const auto &[e, count] : readTruth(truthPaths[k])) {
      truth[e] += count;
      n += count;
    }
    ASSERT_EQ(n, 10000);
    streamEvents.push_back(n);
  }
  const auto formed = [&](const Instance &i) { return counter(i.cmd, "events.count").value_or(0); };
  ASSERT_TRUE(eventually([&] { return formed(efus[0]) + formed(efus[1]) == 20000; }))
      << formed(efus[0]) << " + " << formed(efus[1]);
  std::vector<int64_t> perProcess;
  for (Instance &i : efus) {
    perProcess.push_back(formed(i));
    // A stream is never split: a process formed none, one or both streams' events.
    EXPECT_TRUE(perProcess.back() == 0 || perProcess.back() == 10000 || perProcess.back() == 20000)
        << i.source << " formed " << perProcess.back();
    i.efu->signal(SIGTERM);
    ASSERT_EQ(i.efu->wait(20s), std::optional<int>(0)) << i.efu->output();
  }
  // One consumer reads both sources from the one topic and merges them.
  Process dump({EFU_DUMP, "-b", e2e.bootstrap(), "-t", "dream_detector", "--from", "beginning",
                "--timeout", "3", "--log-level", "warn"});
  ASSERT_TRUE(dump.wait(60s).has_value());
  std::map<Event, int64_t> merged;
  for (size_t k = 0; k < efus.size(); ++k) {
    int64_t dumped = 0;
    for (const auto &[e, count] : dumpedEvents(dump.output(), dumped, false, efus[k].source)) {
      merged[e] += count;
    }
    EXPECT_EQ(dumped, perProcess[k]) << efus[k].source;
  }
  EXPECT_EQ(merged, truth);
}

} // namespace
} // namespace efu::testkit
