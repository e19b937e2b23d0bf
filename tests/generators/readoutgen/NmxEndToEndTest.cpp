// SPDX-License-Identifier: BSD-2-Clause
// End to end for ESS NMX: readoutgen --truth → efu -d nmx (the ESS files nmx.json and
// nmx_split.json, unchanged) → efu-broker → efu-dump; every event comes back with the ESS uTPC
// pixel id and time of flight of the truth, and nothing else comes back.
#include "tests/generators/readoutgen/EndToEndKit.h"
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>

#include <unistd.h>

namespace efu::testkit {
namespace {

using namespace std::chrono_literals;

TEST(NmxEndToEnd, EachEssNmxFileMatchesGroundTruth) {
  const fs::path dir = fs::temp_directory_path() / ("nmx-e2e-" + std::to_string(getpid()));
  fs::create_directories(dir);
  DevBroker broker(EFU_BROKER, {"--log-level", "warn"});
  const std::string bootstrap = broker.bootstrap();
  struct Instrument {
    std::string name, config, calibration;
  };
  const std::string configs = std::string(EFU_SOURCE_DIR) + "/modules/nmx/configs/";
  // name is the --instrument (the topic's prefix), so the two runs keep apart.
  for (const Instrument &i :
       std::vector<Instrument>{{"nmx", "nmx.json", ""}, {"nmx_split", "nmx_split.json", ""}}) {
    std::vector<std::string> calibration;
    const std::string config = configs + i.config;
    const uint16_t udp = freeUdpPort();
    const uint16_t cmd = freeTcpPort();
    std::vector<std::string> argv{EFU_BINARY,
                                  "-d",
                                  "nmx",
                                  "--instrument",
                                  i.name,
                                  "-f",
                                  config,
                                  "-p",
                                  std::to_string(udp),
                                  "-m",
                                  std::to_string(cmd),
                                  "-b",
                                  bootstrap,
                                  "--stats-interval",
                                  "0.2"};
    argv.insert(argv.end(), calibration.begin(), calibration.end());
    Process efu(argv);
    ASSERT_TRUE(eventually([&] { return !control(cmd, "VERSION_GET").empty() || !efu.running(); }))
        << efu.output();
    ASSERT_TRUE(efu.running()) << efu.output();
    const auto truthPath = dir / (i.name + "-truth.csv");
    std::vector<std::string> gen{
        READOUTGEN,           "-d",   "nmx",       "-f",      config,    "-p",
        std::to_string(udp),  "-q",   "-n",        "4000",    "--eps",   "100000",
        "--events-per-pulse", "1000", "--pattern", "uniform", "--truth", truthPath.string()};
    gen.insert(gen.end(), calibration.begin(), calibration.end());
    Process generator(gen);
    ASSERT_EQ(generator.wait(120s), std::optional<int>(0)) << generator.output();
    const auto truth = readTruth(truthPath);
    int64_t truthEvents = 0;
    for (const auto &[e, n] : truth) {
      truthEvents += n;
    }
    // Neutrons too close to the previous one of their panel are not drawn; most are.
    ASSERT_GE(truthEvents, 2000) << i.name;
    ASSERT_TRUE(eventually([&] { return counter(cmd, "events.count") == truthEvents; }))
        << i.name << ": " << counter(cmd, "events.count").value_or(-1) << " of " << truthEvents;
    // Every datagram's header accepted: readoutgen keeps to the file's MaxPulseTimeNS.
    EXPECT_EQ(counter(cmd, "parser.essheader.errors.timehigh"), 0) << i.name;
    EXPECT_EQ(counter(cmd, "cluster.no_coincidence"), 0) << i.name;
    EXPECT_EQ(counter(cmd, "geometry.validation_errors"), 0) << i.name;
    efu.signal(SIGTERM);
    ASSERT_EQ(efu.wait(20s), std::optional<int>(0)) << efu.output();
    Process dump({EFU_DUMP, "-b", bootstrap, "-t", i.name + "_detector", "--from", "beginning",
                  "--timeout", "3", "--log-level", "warn"});
    ASSERT_TRUE(dump.wait(60s).has_value());
    int64_t dumped = 0;
    EXPECT_EQ(dumpedEvents(dump.output(), dumped), truth) << i.name;
    EXPECT_EQ(dumped, truthEvents) << i.name;
  }
  fs::remove_all(dir);
}

} // namespace
} // namespace efu::testkit
