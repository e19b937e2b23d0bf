// SPDX-License-Identifier: BSD-2-Clause
// The example module of docs/modules.md, which is only its own folder: the real daemon loads it,
// readoutgen generates for it and efu-dump draws it, none of them naming it anywhere.
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>

using namespace efu::testkit;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

TEST(ExampleModule, GeneratedReadoutsBecomeEventsAndAPicture) {
  const fs::path dir = fs::temp_directory_path() / ("efu-example-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string config = dir / "grid.json";
  std::ofstream(config) << R"({"width": 24, "height": 12})";
  DevBroker broker(BROKER_BINARY);
  const uint16_t udpPort = freeUdpPort();
  const uint16_t cmdPort = freeTcpPort();
  Process efu({EFU_BINARY, "-d", "example", "-f", config, "-i", "127.0.0.1", "-p",
               std::to_string(udpPort), "-m", std::to_string(cmdPort), "-b", broker.bootstrap(),
               "--stats-interval", "0.2"});
  ASSERT_TRUE(eventually([&] { return !control(cmdPort, "VERSION_GET").empty(); }))
      << efu.output();

  Process gen({READOUTGEN_BINARY, "-d", "example", "-f", config, "-p", std::to_string(udpPort),
               "-n", "3000", "-r", "50000", "-q"});
  ASSERT_EQ(gen.wait(60s), std::optional<int>(0)) << gen.output();
  ASSERT_TRUE(eventually([&] { return counter(cmdPort, "events.count") == 3000; }))
      << efu.output();
  EXPECT_EQ(counter(cmdPort, "readouts.count"), 3000);
  EXPECT_EQ(counter(cmdPort, "readouts.errors.position"), 0);
  EXPECT_EQ(counter(cmdPort, "parser.essheader.seq.lost"), 0);
  efu.signal(SIGTERM);
  ASSERT_EQ(efu.wait(30s), std::optional<int>(0)) << efu.output();

  // efu-dump finds the geometry by asking the modules (no --det): the example one takes it.
  const std::string png = dir / "grid.png";
  Process dump({DUMP_BINARY, "-b", broker.bootstrap(), "-t", "example_detector", "--timeout",
                "5", "--image", png, "--geometry", config, "--format", "json"});
  ASSERT_EQ(dump.wait(60s), std::optional<int>(0)) << dump.output();
  EXPECT_NE(dump.output().find("example geometry 24 x 12"), std::string::npos) << dump.output();
  EXPECT_TRUE(fs::exists(png));
  fs::remove_all(dir);
}

} // namespace
