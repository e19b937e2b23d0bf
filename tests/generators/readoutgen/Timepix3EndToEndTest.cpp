// SPDX-License-Identifier: BSD-2-Clause
// End to end for ODIN's Timepix3 camera: readoutgen -d odin --truth (an EVR datagram per pulse,
// camera datagrams of TDC and pixel words, no ESS headers) → efu -d odin (module timepix3, the
// ESS file) → efu-broker → efu-dump; every event comes back with the pixel id and time of flight
// of the truth, and nothing else comes back. The run starts 0.3 s before the camera's pixel
// clock wraps, so some pulses' pixels are timed across the wrap.
#include "tests/generators/readoutgen/EndToEndKit.h"
#include "tests/integration/TestKit.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <unistd.h>

namespace efu::testkit {
namespace {

using namespace std::chrono_literals;

TEST(Timepix3EndToEnd, OdinMatchesGroundTruth) {
  const fs::path dir = fs::temp_directory_path() / ("timepix3-e2e-" + std::to_string(getpid()));
  fs::create_directories(dir);
  DevBroker broker(EFU_BROKER, {"--log-level", "warn"});
  const std::string bootstrap = broker.bootstrap();
  // The ESS file, with the EVR/TDC pairing window widened from the ESS's 20 ms to 10 s: the
  // pairing is by arrival time, and a sender or receiver stalled for 20 ms between a pulse's
  // EVR datagram and its first camera datagram must not make the run fail. (A wide window also
  // pairs a pulse's EVR with the previous pulse's TDC, harmlessly: that pulse's TDC follows
  // before any of its pixels.)
  nlohmann::json config;
  std::ifstream(std::string(EFU_SOURCE_DIR) + "/modules/timepix3/configs/timepix3.json") >> config;
  config["EvrTdcPairWindowNS"] = 10'000'000'000LL;
  const fs::path configPath = dir / "timepix3.json";
  std::ofstream(configPath) << config.dump(2);

  const uint16_t udp = freeUdpPort();
  const uint16_t cmd = freeTcpPort();
  Process efu({EFU_BINARY, "-d", "odin", "-f", configPath.string(), "-p", std::to_string(udp), "-m",
               std::to_string(cmd), "-b", bootstrap, "--stats-interval", "0.2"});
  ASSERT_TRUE(eventually([&] { return !control(cmd, "VERSION_GET").empty() || !efu.running(); }))
      << efu.output();
  ASSERT_TRUE(efu.running()) << efu.output();
  const auto truthPath = dir / "truth.csv";
  const std::string count = "6000";
  Process generator({READOUTGEN, "-d", "odin", "-f", configPath.string(), "-p", std::to_string(udp),
                     "-q", "-n", count, "--eps", "50000", "--events-per-pulse", "500", "--pattern",
                     "uniform", "--truth", truthPath.string()});
  ASSERT_EQ(generator.wait(120s), std::optional<int>(0)) << generator.output();
  const auto truth = readTruth(truthPath);
  int64_t truthEvents = 0;
  for (const auto &[e, n] : truth) {
    truthEvents += n;
  }
  ASSERT_EQ(truthEvents, std::stoll(count));
  ASSERT_TRUE(eventually([&] { return counter(cmd, "events.count") == truthEvents; }))
      << counter(cmd, "events.count").value_or(-1) << " of " << truthEvents;
  EXPECT_EQ(counter(cmd, "readouts.pixel_readout_count"), 9 * truthEvents);
  EXPECT_EQ(counter(cmd, "readouts.evr.evr_readout_count"), 12); // 6000 / 500 pulses
  EXPECT_EQ(counter(cmd, "readouts.tdc.tdc1rising_readout_count"), 12);
  EXPECT_EQ(counter(cmd, "handlers.timeingevent.miss_tdc_count"), 0);
  EXPECT_EQ(counter(cmd, "handlers.pixelevent.no_global_time_error"), 0);
  EXPECT_EQ(counter(cmd, "handlers.pixelevent.cluster_size_to_small"), 0);
  EXPECT_EQ(counter(cmd, "handlers.pixelevent.event_time_next_pulse_count"), 0);
  EXPECT_EQ(counter(cmd, "events.pixel_errors"), 0);
  efu.signal(SIGTERM);
  ASSERT_EQ(efu.wait(20s), std::optional<int>(0)) << efu.output();
  Process dump({EFU_DUMP, "-b", bootstrap, "-t", "odin_detector", "--from", "beginning",
                "--timeout", "3", "--log-level", "warn"});
  ASSERT_TRUE(dump.wait(60s).has_value());
  int64_t dumped = 0;
  EXPECT_EQ(dumpedEvents(dump.output(), dumped), truth);
  EXPECT_EQ(dumped, truthEvents);
  fs::remove_all(dir);
}

} // namespace
} // namespace efu::testkit
