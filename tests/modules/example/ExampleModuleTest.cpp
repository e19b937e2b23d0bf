// SPDX-License-Identifier: BSD-2-Clause
// The example module of docs/modules.md, loaded by the real daemon.
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace efu::testkit;
using namespace std::chrono_literals;

namespace {

TEST(ExampleModule, PairsBecomeEventsAndBadOnesAreCounted) {
  const uint16_t udpPort = freeUdpPort();
  const uint16_t cmdPort = freeTcpPort();
  const std::string config =
      std::filesystem::temp_directory_path() / ("example-" + std::to_string(getpid()) + ".json");
  std::ofstream(config) << R"({"max_pixel": 100})";
  Process efu({EFU_BINARY, "-d", "example", "--config", config, "-i", "127.0.0.1", "-p",
               std::to_string(udpPort), "-m", std::to_string(cmdPort), "--no-kafka"});
  ASSERT_TRUE(eventually([&] { return !control(cmdPort, "VERSION_GET").empty(); }))
      << efu.output();

  UdpSender sender;
  const uint32_t good[] = {1, 1000, 100, 2000};        // two good pairs
  const uint32_t mixed[] = {0, 5, 101, 5, 7, 90000000}; // pixel 0, pixel > max, tof > max
  const uint8_t odd[5] = {};
  sender.send(udpPort, good, sizeof(good));
  sender.send(udpPort, mixed, sizeof(mixed));
  sender.send(udpPort, odd, sizeof(odd));
  ASSERT_TRUE(eventually([&] { return counter(cmdPort, "processing.packets") == 3; })) << efu.output();
  EXPECT_EQ(counter(cmdPort, "events.count"), 2);
  EXPECT_EQ(counter(cmdPort, "events.unpublished"), 2); // --no-kafka: counted, not sent
  EXPECT_EQ(counter(cmdPort, "readouts.errors.pixel"), 2);
  EXPECT_EQ(counter(cmdPort, "readouts.errors.tof"), 1);
  EXPECT_EQ(counter(cmdPort, "readouts.errors.size"), 1);
  efu.signal(SIGTERM);
  EXPECT_EQ(efu.wait(10s).value_or(-1), 0);
  std::remove(config.c_str());
}

TEST(ExampleModule, UnknownAndOutOfRangeKeysNameFileKeyAndValue) {
  const std::string config =
      std::filesystem::temp_directory_path() / ("example-bad-" + std::to_string(getpid()) + ".json");
  for (const auto &[text, expected] : std::vector<std::pair<std::string, std::string>>{
           {R"({"max_pixels": 10})", "unknown key 'max_pixels'"},
           {R"({"max_pixel": 0})", "'max_pixel' = 0 is out of range"},
           {R"({"max_pixel": "ten"})", "'max_pixel' must be integer, got \"ten\""},
           {R"({"max_pixel": )", "not valid JSON"}}) {
    std::ofstream(config) << text;
    Process efu({EFU_BINARY, "-d", "example", "--config", config, "--no-kafka"});
    ASSERT_TRUE(efu.wait(10s).has_value());
    const std::string out = efu.output();
    EXPECT_NE(out.find(config), std::string::npos) << out;
    EXPECT_NE(out.find(expected), std::string::npos) << out;
  }
  std::remove(config.c_str());
}

} // namespace
