// SPDX-License-Identifier: BSD-2-Clause
// End to end for the ESS CDT instruments: readoutgen --truth → efu -d dream / -d magic /
// -d heimdal (the ESS files, unchanged) → efu-broker → efu-dump; every event comes back with the
// ESS pixel id and time of flight of the truth, and nothing else comes back. Real binaries on
// loopback.
#include "tests/generators/readoutgen/EndToEndKit.h"
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>

#include <csignal>
#include <unistd.h>

namespace efu::testkit {
namespace {

using namespace std::chrono_literals;

TEST(DreamEndToEnd, DreamMagicAndHeimdalMatchGroundTruth) {
  const fs::path dir = fs::temp_directory_path() / ("dream-e2e-" + std::to_string(getpid()));
  fs::create_directories(dir);
  DevBroker broker(EFU_BROKER, {"--log-level", "warn"});
  const std::string bootstrap = broker.bootstrap();
  const std::string configs = std::string(EFU_SOURCE_DIR) + "/modules/dream/configs/";
  struct Run {
    std::string name, file;
  };
  for (const Run &r : std::vector<Run>{{"dream", "DreamInst.json"},
                                       {"magic", "MagicInst.json"},
                                       {"heimdal", "HeimdalInst.json"}}) {
    const std::string config = configs + r.file;
    const uint16_t udp = freeUdpPort();
    const uint16_t cmd = freeTcpPort();
    Process efu({EFU_BINARY, "-d", r.name, "-f", config, "-p", std::to_string(udp), "-m",
                 std::to_string(cmd), "-b", bootstrap, "--stats-interval", "0.2"});
    ASSERT_TRUE(eventually([&] { return !control(cmd, "VERSION_GET").empty() || !efu.running(); }))
        << efu.output();
    ASSERT_TRUE(efu.running()) << efu.output();
    const auto truthPath = dir / (r.name + "-truth.csv");
    Process generator({READOUTGEN, "-d", r.name, "-f", config, "-p", std::to_string(udp), "-q",
                       "-n", "30000", "--eps", "200000", "--pattern", "uniform", "--truth",
                       truthPath.string()});
    ASSERT_EQ(generator.wait(120s), std::optional<int>(0)) << generator.output();
    const auto truth = readTruth(truthPath);
    int64_t truthEvents = 0;
    for (const auto &[e, n] : truth) {
      truthEvents += n;
    }
    ASSERT_EQ(truthEvents, 30000) << r.name;
    ASSERT_TRUE(eventually([&] { return counter(cmd, "events.count") == truthEvents; }))
        << r.name << ": " << counter(cmd, "events.count").value_or(-1) << " of " << truthEvents;
    EXPECT_EQ(counter(cmd, "readouts.count"), truthEvents) << r.name;
    EXPECT_EQ(counter(cmd, "parser.essheader.errors.timehigh"), 0) << r.name;
    EXPECT_EQ(counter(cmd, "geometry.pixel_errors"), 0) << r.name;
    EXPECT_EQ(counter(cmd, "geometry.validation_errors"), 0) << r.name;
    efu.signal(SIGTERM);
    ASSERT_EQ(efu.wait(20s), std::optional<int>(0)) << efu.output();
    Process dump({EFU_DUMP, "-b", bootstrap, "-t", r.name + "_detector", "--from", "beginning",
                  "--timeout", "3", "--log-level", "warn"});
    ASSERT_TRUE(dump.wait(60s).has_value());
    int64_t dumped = 0;
    EXPECT_EQ(dumpedEvents(dump.output(), dumped), truth) << r.name;
    EXPECT_EQ(dumped, truthEvents) << r.name;
  }
  fs::remove_all(dir);
}

} // namespace
} // namespace efu::testkit
