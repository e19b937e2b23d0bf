// SPDX-License-Identifier: BSD-2-Clause
// Past one process (docs/deploy.md, "Past one host: ring ranges"): one readoutgen capture of LoKI
// replayed to two efu processes whose files hold disjoint ring sets (rings 0-4 and 5-9 of the ESS
// LokiFull.json), publishing into one topic under a source name each; what they publish together
// is exactly what one efu with the whole file published from the same capture (and the truth).
#include "tests/generators/readoutgen/EndToEndKit.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

namespace efu::testkit {
namespace {

using namespace std::chrono_literals;

/// LokiFull.json with only the `Config` entries (ring → bank) whose ring is in [first, last].
std::string ringSubset(const fs::path &dir, int first, int last) {
  nlohmann::json config;
  std::ifstream(std::string(EFU_SOURCE_DIR) + "/modules/caen/configs/LokiFull.json") >> config;
  nlohmann::json kept = nlohmann::json::array();
  for (const auto &entry : config.at("Config")) {
    const int ring = entry.at("Ring").get<int>();
    if (ring >= first && ring <= last) {
      kept.push_back(entry);
    }
  }
  config["Config"] = kept;
  const fs::path path =
      dir / ("loki-rings-" + std::to_string(first) + "-" + std::to_string(last) + ".json");
  std::ofstream(path) << config.dump(2);
  return path.string();
}

/// An efu publishing into `topic` under `source`, started and answering its control port.
struct Efu {
  Efu(const std::string &config, const std::string &bootstrap, const std::string &topic,
      const std::string &source)
      : udp(freeUdpPort()), cmd(freeTcpPort()),
        process({EFU_BINARY, "-d", "loki", "-f", config, "-p", std::to_string(udp), "-m",
                 std::to_string(cmd), "-b", bootstrap, "-t", topic, "--source-name", source,
                 "--stats-topic", source + "_stats", "--status-topic", source + "_status",
                 "--stats-interval", "0.2"}) {}
  uint16_t udp;
  uint16_t cmd;
  Process process;
};

/// Replays the capture into `port` at a rate efu takes on a busy 2-vCPU machine.
void replay(const fs::path &pcap, uint16_t port) {
  Process udpgen({UDPGEN, "--pcap", pcap.string(), "-p", std::to_string(port), "--pps", "20000",
                  "-q"});
  ASSERT_EQ(udpgen.wait(60s), std::optional<int>(0)) << udpgen.output();
}

/// Every ev44 event of `topic` under `source`, read back with efu-dump.
std::map<Event, int64_t> published(const std::string &bootstrap, const std::string &topic,
                                   const std::string &source, int64_t &total) {
  Process dump({EFU_DUMP, "-b", bootstrap, "-t", topic, "--from", "beginning", "--timeout", "3",
                "--log-level", "warn"});
  EXPECT_TRUE(dump.wait(60s).has_value());
  return dumpedEvents(dump.output(), total, false, source);
}

TEST(DeployEndToEnd, TwoProcessesOnDisjointRingSetsPublishWhatOneDoes) {
  EndToEnd e2e("deploy-rings");
  const std::string full = std::string(EFU_SOURCE_DIR) + "/modules/caen/configs/LokiFull.json";
  const fs::path pcap = e2e.dir() / "loki.pcap";
  // The reference: one efu with the whole file, fed by readoutgen, which also writes the capture.
  EndToEnd::Run one;
  ASSERT_NO_FATAL_FAILURE(e2e.start(one, "loki", {"-d", "loki", "-f", full},
                                    {"-d", "loki", "-f", full, "-n", "20000", "--eps", "100000",
                                     "--pattern", "uniform", "--pcap-out", pcap.string()}));
  ASSERT_GT(one.truthEvents, 0);

  Efu a(ringSubset(e2e.dir(), 0, 4), e2e.bootstrap(), "loki_split", "loki-rings-0-4");
  Efu b(ringSubset(e2e.dir(), 5, 9), e2e.bootstrap(), "loki_split", "loki-rings-5-9");
  for (Efu *efu : {&a, &b}) {
    ASSERT_TRUE(eventually([&] {
      return !control(efu->cmd, "VERSION_GET").empty() || !efu->process.running();
    }));
    ASSERT_TRUE(efu->process.running()) << efu->process.output();
  }
  ASSERT_NO_FATAL_FAILURE(replay(pcap, a.udp));
  ASSERT_NO_FATAL_FAILURE(replay(pcap, b.udp));
  ASSERT_TRUE(eventually([&] {
    return counter(a.cmd, "events.count").value_or(0) + counter(b.cmd, "events.count").value_or(0) ==
           one.truthEvents;
  })) << counter(a.cmd, "events.count").value_or(-1) << " + "
      << counter(b.cmd, "events.count").value_or(-1) << " of " << one.truthEvents;
  // Each formed some: the capture's neutrons fall on both ring sets.
  EXPECT_GT(counter(a.cmd, "events.count").value_or(0), 0);
  EXPECT_GT(counter(b.cmd, "events.count").value_or(0), 0);
  for (Efu *efu : {&a, &b}) {
    efu->process.signal(SIGTERM);
    ASSERT_EQ(efu->process.wait(20s), std::optional<int>(0)) << efu->process.output();
  }
  one.efu->signal(SIGTERM);
  ASSERT_EQ(one.efu->wait(20s), std::optional<int>(0)) << one.efu->output();

  int64_t oneTotal = 0, aTotal = 0, bTotal = 0;
  const auto reference = published(e2e.bootstrap(), "loki_detector", "", oneTotal);
  EXPECT_EQ(reference, one.truth);
  auto merged = published(e2e.bootstrap(), "loki_split", "loki-rings-0-4", aTotal);
  for (const auto &[event, n] : published(e2e.bootstrap(), "loki_split", "loki-rings-5-9", bTotal)) {
    merged[event] += n;
  }
  EXPECT_GT(aTotal, 0);
  EXPECT_GT(bTotal, 0);
  EXPECT_EQ(aTotal + bTotal, oneTotal);
  EXPECT_EQ(merged, reference) << "the two processes together publish what one does";
}

} // namespace
} // namespace efu::testkit
