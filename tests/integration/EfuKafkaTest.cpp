// SPDX-License-Identifier: BSD-2-Clause
// End to end through Kafka: efu-broker, efu -d udp, udpgen, then efu-dump and kcat read it back.
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace efu::testkit;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

class EfuKafka : public ::testing::Test {
protected:
  void SetUp() override {
    broker_ = std::make_unique<DevBroker>(BROKER_BINARY);
    bootstrap_ = broker_->bootstrap();
  }

  void TearDown() override { EXPECT_EQ(broker_->stop().value_or(-1), 0); }

  /// Reads every message of the topics with efu-dump (JSON lines), stopping after 3 s of quiet.
  std::vector<nlohmann::json> dump(const std::vector<std::string> &topics) {
    std::vector<std::string> argv{DUMP_BINARY, "-b", bootstrap_, "--from", "beginning",
                                  "--timeout", "3"};
    for (const auto &topic : topics) {
      argv.insert(argv.end(), {"-t", topic});
    }
    Process dump(argv);
    EXPECT_TRUE(dump.wait(60s).has_value());
    std::vector<nlohmann::json> messages;
    std::istringstream lines(dump.output());
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty() && line.front() == '{') {
        messages.push_back(nlohmann::json::parse(line));
      }
    }
    return messages;
  }

  std::string bootstrap_;
  std::unique_ptr<DevBroker> broker_;
};

TEST_F(EfuKafka, CountersAndStatusArriveThroughTheBroker) {
  constexpr int kCount = 5000;
  const uint16_t udpPort = freeUdpPort();
  const uint16_t cmdPort = freeTcpPort();
  Process efu({EFU_BINARY, "-d", "udp", "-i", "127.0.0.1", "-p", std::to_string(udpPort), "-m",
               std::to_string(cmdPort), "-b", bootstrap_, "--stats-interval", "0.2",
               "--threads", "1"}); // publishing from the rx thread (run to completion)
  ASSERT_TRUE(eventually([&] { return !control(cmdPort, "VERSION_GET").empty(); }))
      << efu.output();
  Process udpgen({UDPGEN_BINARY, "-p", std::to_string(udpPort), "-n", std::to_string(kCount), "-s",
                  "256", "--rate", "100M", "--quiet"});
  ASSERT_EQ(udpgen.wait(60s).value_or(-1), 0) << udpgen.output();
  ASSERT_TRUE(eventually([&] { return counter(cmdPort, "proc.packets") == kCount; }))
      << efu.output();
  ASSERT_TRUE(eventually([&] { return counter(cmdPort, "kafka.delivered") > 0; }))
      << efu.output();
  efu.signal(SIGTERM); // the final publication carries the final counter values
  ASSERT_EQ(efu.wait(30s).value_or(-1), 0) << efu.output();

  const auto messages = dump({"udp_stats", "udp_status"});
  int64_t lastRxPackets = -1;
  int64_t lastLost = -1;
  int statusMessages = 0;
  for (const auto &message : messages) {
    if (message.value("kind", "") == "f144") {
      const std::string source = message.at("source_name");
      if (source == "efu.udp.rx.packets") {
        lastRxPackets = message.at("value").get<int64_t>();
      } else if (source == "efu.udp.udp.seq.lost") {
        lastLost = message.at("value").get<int64_t>();
      }
    } else if (message.value("kind", "") == "x5f2") {
      ++statusMessages;
      EXPECT_EQ(message.at("service_id"), "udp");
      EXPECT_EQ(message.at("software_name"), "efu");
    }
  }
  EXPECT_EQ(lastRxPackets, kCount);
  EXPECT_EQ(lastLost, 0);
  EXPECT_GT(statusMessages, 0);
}

TEST_F(EfuKafka, KcatReadsTheSameStatsTopic) {
  if (std::system("command -v kcat >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "kcat is not installed";
  }
  const uint16_t udpPort = freeUdpPort();
  const uint16_t cmdPort = freeTcpPort();
  Process efu({EFU_BINARY, "-d", "udp", "-i", "127.0.0.1", "-p", std::to_string(udpPort), "-m",
               std::to_string(cmdPort), "-b", bootstrap_, "--stats-interval", "0.2"});
  ASSERT_TRUE(eventually([&] { return counter(cmdPort, "kafka.delivered") > 0; }))
      << efu.output();
  efu.signal(SIGTERM);
  ASSERT_EQ(efu.wait(30s).value_or(-1), 0);
  // kcat's -e exits at the end of the partitions; %s prints the payload, whose bytes 4..7 are
  // the flatbuffer file identifier.
  Process kcat({"/usr/bin/kcat", "-C", "-b", bootstrap_, "-t", "udp_status", "-e", "-q", "-f",
                "%s\n"});
  ASSERT_EQ(kcat.wait(60s).value_or(-1), 0) << kcat.output();
  EXPECT_NE(kcat.output().find("x5f2"), std::string::npos);
}

/// No broker at all: nothing is delivered, and efu must say so and exit non-zero (3), within
/// the flush bound, instead of claiming delivery.
TEST(EfuKafkaTruth, UndeliveredMessagesGiveExitCode3AndTheCounts) {
  const uint16_t udpPort = freeUdpPort();
  const uint16_t cmdPort = freeTcpPort();
  const uint16_t nobody = freeTcpPort(); // nothing listens there
  Process efu({EFU_BINARY, "-d", "udp", "-i", "127.0.0.1", "-p", std::to_string(udpPort), "-m",
               std::to_string(cmdPort), "-b", "127.0.0.1:" + std::to_string(nobody), "-X",
               "message.timeout.ms=500", "--kafka-flush-timeout", "1000", "--stats-interval",
               "0.2"});
  ASSERT_TRUE(eventually([&] { return !control(cmdPort, "VERSION_GET").empty(); }))
      << efu.output();
  Process udpgen({UDPGEN_BINARY, "-p", std::to_string(udpPort), "-n", "100", "-s", "64",
                  "--quiet"});
  ASSERT_EQ(udpgen.wait(30s).value_or(-1), 0) << udpgen.output();
  ASSERT_TRUE(eventually([&] { return counter(cmdPort, "kafka.failed").value_or(0) > 0; }))
      << efu.output();
  efu.signal(SIGTERM);
  const auto code = efu.wait(30s);
  ASSERT_TRUE(code.has_value()) << efu.output();
  EXPECT_EQ(*code, 3) << efu.output();
  const std::string out = efu.output();
  EXPECT_EQ(out.find("all messages delivered"), std::string::npos) << out;
  EXPECT_NE(out.find("delivered 0"), std::string::npos) << out;
  EXPECT_NE(out.find("exit code 3"), std::string::npos) << out;
}

} // namespace
