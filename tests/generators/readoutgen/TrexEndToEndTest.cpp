// SPDX-License-Identifier: BSD-2-Clause
// End to end for the ESS Multi-Grid instruments: readoutgen --truth → efu -d trex / -d let (the
// ESS files) → efu-broker → efu-dump; every event comes back with the ESS pixel id and time of
// flight of the truth, and nothing else comes back. efu is stopped with SIGTERM before the
// topic is read: what still waits in the event builders is formed by the shutdown flush.
#include "tests/generators/readoutgen/EndToEndKit.h"
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>

#include <unistd.h>

namespace efu::testkit {
namespace {

using namespace std::chrono_literals;

TEST(TrexEndToEnd, TrexAndLetMatchGroundTruth) {
  const fs::path dir = fs::temp_directory_path() / ("trex-e2e-" + std::to_string(getpid()));
  fs::create_directories(dir);
  DevBroker broker(EFU_BROKER, {"--log-level", "warn"});
  const std::string bootstrap = broker.bootstrap();
  const std::string configs = std::string(EFU_SOURCE_DIR) + "/modules/trex/configs/";
  // LET has two event builders: a neutron too close to the last one of both is refused and
  // readoutgen retries its time for ever, so LET gets fewer neutrons per pulse (readoutgen is
  // seeded: the run is the same every time).
  struct Run {
    std::string name, file, count, perPulse;
  };
  for (const Run &r :
       std::vector<Run>{{"trex", "trex.json", "4000", "1000"}, {"let", "let.json", "1000", "50"}}) {
    const std::string &name = r.name;
    const std::string &file = r.file;
    const std::string config = configs + file;
    const uint16_t udp = freeUdpPort();
    const uint16_t cmd = freeTcpPort();
    Process efu({EFU_BINARY, "-d", name, "-f", config, "-p", std::to_string(udp), "-m",
                 std::to_string(cmd), "-b", bootstrap, "--stats-interval", "0.2"});
    ASSERT_TRUE(eventually([&] { return !control(cmd, "VERSION_GET").empty() || !efu.running(); }))
        << efu.output();
    ASSERT_TRUE(efu.running()) << efu.output();
    const auto truthPath = dir / (name + "-truth.csv");
    Process generator({READOUTGEN, "-d", name, "-f", config, "-p", std::to_string(udp), "-q", "-n",
                       r.count, "--eps", "100000", "--events-per-pulse", r.perPulse, "--pattern",
                       "uniform", "--truth", truthPath.string()});
    ASSERT_EQ(generator.wait(120s), std::optional<int>(0)) << generator.output();
    const auto truth = readTruth(truthPath);
    int64_t truthEvents = 0;
    for (const auto &[e, n] : truth) {
      truthEvents += n;
    }
    ASSERT_EQ(truthEvents, std::stoll(r.count)) << name;
    // Each neutron is formed in its own datagram (TrexSource's trailing groups), so all are
    // published while efu runs; only trailing groups wait for the shutdown flush.
    ASSERT_TRUE(eventually([&] { return counter(cmd, "events.count") == truthEvents; }))
        << name << ": " << counter(cmd, "events.count").value_or(-1) << " of " << truthEvents;
    EXPECT_EQ(counter(cmd, "parser.essheader.errors.timehigh"), 0) << name;
    EXPECT_EQ(counter(cmd, "cluster.no_coincidence"), 0) << name;
    EXPECT_EQ(counter(cmd, "events.pixel_errors"), 0) << name;
    EXPECT_EQ(counter(cmd, "cluster.matched_clusters"), truthEvents) << name;
    efu.signal(SIGTERM);
    ASSERT_EQ(efu.wait(20s), std::optional<int>(0)) << efu.output();
    Process dump({EFU_DUMP, "-b", bootstrap, "-t", name + "_detector", "--from", "beginning",
                  "--timeout", "3", "--log-level", "warn"});
    ASSERT_TRUE(dump.wait(60s).has_value());
    int64_t dumped = 0;
    EXPECT_EQ(dumpedEvents(dump.output(), dumped), truth) << name;
    EXPECT_EQ(dumped, truthEvents) << name;
  }
  fs::remove_all(dir);
}

} // namespace
} // namespace efu::testkit
