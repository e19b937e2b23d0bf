// SPDX-License-Identifier: BSD-2-Clause
// End to end through Kafka: efu-broker, efu -d udp, udpgen, then efu-dump and kcat read it back.
#include "tests/integration/TestKit.h"
#include "efu/tools/dump/Decode.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

using namespace efu::testkit;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

/// The shutdown log gives Kafka's counts three times: "Kafka: all N messages delivered" (when
/// so), the "whole run:" line (delivered, failed, queued) and "efu stopped: Kafka messages
/// produced P, delivered D, failed F (discarded at shutdown X)". They must tell one story:
/// nothing left queued, the same delivered and failed everywhere, P = D + F.
void expectOneFinalAccount(const std::string &out) {
  std::smatch whole;
  ASSERT_TRUE(std::regex_search(
      out, whole, std::regex(R"(whole run: .*kafka delivered (\d+) failed (\d+) queued (\d+))")))
      << out;
  std::smatch last;
  ASSERT_TRUE(std::regex_search(
      out, last,
      std::regex(R"(efu stopped: Kafka messages produced (\d+), delivered (\d+), failed (\d+))")))
      << out;
  EXPECT_LT(whole.position(0), last.position(0)) << out;
  const int64_t produced = std::stoll(last[1]);
  const int64_t delivered = std::stoll(last[2]);
  const int64_t failed = std::stoll(last[3]);
  EXPECT_EQ(std::stoll(whole[1]), delivered) << out;
  EXPECT_EQ(std::stoll(whole[2]), failed) << out;
  EXPECT_EQ(std::stoll(whole[3]), 0) << "queued after the end:\n" << out;
  EXPECT_EQ(produced, delivered + failed) << out;
  std::smatch all;
  if (std::regex_search(out, all, std::regex(R"(Kafka: all (\d+) messages delivered)"))) {
    EXPECT_EQ(std::stoll(all[1]), delivered) << out;
    EXPECT_EQ(failed, 0) << out;
  }
}

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
                  "256", "--bitrate", "100M", "--quiet"});
  ASSERT_EQ(udpgen.wait(60s).value_or(-1), 0) << udpgen.output();
  ASSERT_TRUE(eventually([&] { return counter(cmdPort, "processing.packets") == kCount; }))
      << efu.output();
  ASSERT_TRUE(eventually([&] { return counter(cmdPort, "kafka.delivered") > 0; }))
      << efu.output();
  efu.signal(SIGTERM); // the final publication carries the final counter values
  ASSERT_EQ(efu.wait(30s).value_or(-1), 0) << efu.output();
  expectOneFinalAccount(efu.output());

  const auto messages = dump({"udp_stats", "udp_status"});
  int64_t lastRxPackets = -1;
  int64_t lastLost = -1;
  int statusMessages = 0;
  for (const auto &message : messages) {
    if (message.value("kind", "") == "f144") {
      const std::string source = message.at("source_name");
      if (source == "efu.udp.receive.packets") {
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

// --monitor-every 10: one datagram in ten arrives on <instrument>_samples as ar51, byte for byte;
// CALIB_MODE_SET 1 sends all of them; efu-dump writes the samples to a pcap file that tcpdump
// (an independent reader) reads back.
TEST_F(EfuKafka, RawSamplesAreTheDatagramsByteForByte) {
  const uint16_t udpPort = freeUdpPort();
  const uint16_t cmdPort = freeTcpPort();
  Process efu({EFU_BINARY, "-d", "udp", "--instrument", "lab", "-i", "127.0.0.1", "-p",
               std::to_string(udpPort), "-m", std::to_string(cmdPort), "-b", bootstrap_,
               "--stats-interval", "0.2", "--monitor-every", "10"});
  ASSERT_TRUE(eventually([&] { return !control(cmdPort, "VERSION_GET").empty(); }))
      << efu.output();
  // Datagrams the udp module accepts: sequence number, then any bytes (here: a pattern per i).
  const auto datagram = [](uint64_t i) {
    std::vector<uint8_t> bytes(64 + i % 50);
    std::memcpy(bytes.data(), &i, sizeof(i));
    for (size_t k = 16; k < bytes.size(); ++k) {
      bytes[k] = static_cast<uint8_t>(i * 7 + k);
    }
    return bytes;
  };
  UdpSender sender;
  int64_t sent = 0;
  const auto sendUpTo = [&](int64_t last) {
    for (; sent < last; ++sent) {
      const auto bytes = datagram(static_cast<uint64_t>(sent));
      sender.send(udpPort, bytes.data(), bytes.size());
      if (sent % 20 == 19) { // paced on the receiver: no datagram may be lost
        ASSERT_TRUE(eventually([&] { return counter(cmdPort, "processing.packets") == sent + 1; }));
      }
    }
    ASSERT_TRUE(eventually([&] { return counter(cmdPort, "processing.packets") == last; }));
  };
  sendUpTo(100); // samples: 0, 10, ..., 90
  EXPECT_EQ(control(cmdPort, "CALIB_MODE_GET"), "CALIB_MODE_GET 0");
  EXPECT_EQ(control(cmdPort, "CALIB_MODE_SET 1"), "<OK>");
  EXPECT_EQ(control(cmdPort, "CALIB_MODE_GET"), "CALIB_MODE_GET 1");
  sendUpTo(105); // all five
  // Repeated and toggled: only changes are logged, at most one line per 10 s (issue 37: 100 000
  // commands wrote 100 000 lines).
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(control(cmdPort, "CALIB_MODE_SET 1"), "<OK>");
  }
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(control(cmdPort, i % 2 == 0 ? "CALIB_MODE_SET 0" : "CALIB_MODE_SET 1"), "<OK>");
  }
  EXPECT_EQ(control(cmdPort, "CALIB_MODE_SET 0"), "<OK>");
  sendUpTo(120); // one in ten again, counting on from before calibration mode: 105, 115
  ASSERT_TRUE(eventually([&] { return counter(cmdPort, "kafka.ar51.messages") == 17; }))
      << counter(cmdPort, "kafka.ar51.messages").value_or(-1);
  EXPECT_EQ(counter(cmdPort, "kafka.ar51.dropped"), 0);
  efu.signal(SIGTERM);
  ASSERT_EQ(efu.wait(30s).value_or(-1), 0) << efu.output();
  int calibLines = 0;
  int calibOn = 0;
  std::istringstream log(efu.output());
  for (std::string line; std::getline(log, line);) {
    calibLines += line.find("CALIB_MODE_SET") != std::string::npos ? 1 : 0;
    calibOn += line.find("CALIB_MODE_SET 1: every datagram") != std::string::npos ? 1 : 0;
  }
  EXPECT_GE(calibOn, 1) << efu.output();
  // One line per change would be 101; a slow machine may open a few 10-s windows.
  EXPECT_LE(calibLines, 10) << efu.output();
  EXPECT_NE(efu.output().find("further CALIB_MODE_SET changes not logged"), std::string::npos)
      << efu.output();

  const auto pcap = fs::temp_directory_path() / ("efu-samples-" + std::to_string(getpid()) + ".pcap");
  std::vector<std::string> argv{DUMP_BINARY, "-b",         bootstrap_, "--from", "beginning",
                                "--timeout", "3",          "-t",       "lab_samples",
                                "--pcap",    pcap.string(), "--pcap-port", "9000"};
  Process dump(argv);
  ASSERT_TRUE(dump.wait(60s).has_value());
  std::vector<uint64_t> sampled;          // datagram sequence numbers in consumption order
  std::map<int64_t, uint64_t> byMessageId; // the topic has several partitions: order by id
  std::istringstream lines(dump.output());
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line.front() != '{') {
      continue;
    }
    const auto message = nlohmann::json::parse(line);
    ASSERT_EQ(message.at("kind"), "ar51");
    EXPECT_EQ(message.at("source_name"), "lab");
    const auto bytes = efu::tools::ar51Datagram(message);
    ASSERT_GE(bytes.size(), 8u);
    uint64_t seq = 0;
    std::memcpy(&seq, bytes.data(), sizeof(seq));
    EXPECT_EQ(bytes, datagram(seq)) << "sample of datagram " << seq;
    sampled.push_back(seq);
    EXPECT_TRUE(byMessageId.emplace(message.at("message_id").get<int64_t>(), seq).second);
  }
  std::vector<uint64_t> inOrder;
  for (const auto &[id, seq] : byMessageId) {
    EXPECT_EQ(id, static_cast<int64_t>(inOrder.size())) << "message ids 0, 1, 2, ...";
    inOrder.push_back(seq);
  }
  EXPECT_EQ(inOrder, (std::vector<uint64_t>{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 101, 102,
                                            103, 104, 105, 115}));

  if (::system("command -v tcpdump >/dev/null 2>&1") != 0) {
    fs::remove(pcap);
    GTEST_SKIP() << "tcpdump is not installed: the pcap file is not read back";
  }
  Process tcpdump({"/usr/bin/env", "tcpdump", "-nn", "-r", pcap.string()});
  ASSERT_EQ(tcpdump.wait(30s).value_or(-1), 0) << tcpdump.output();
  std::istringstream packets(tcpdump.output());
  size_t udpLines = 0;
  size_t index = 0;
  for (std::string line; std::getline(packets, line);) {
    if (line.find("127.0.0.1.9000 > 127.0.0.1.9000: UDP, length ") == std::string::npos) {
      continue;
    }
    const auto length = std::stoul(line.substr(line.rfind(' ') + 1));
    ASSERT_LT(index, sampled.size());
    EXPECT_EQ(length, datagram(sampled[index++]).size()) << line;
    ++udpLines;
  }
  EXPECT_EQ(udpLines, sampled.size()) << tcpdump.output();
  fs::remove(pcap);
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
  expectOneFinalAccount(out);
}

// Issue 37 item 6: a second stop signal during the stop killed efu at once (exit 143, no final
// line, no discard accounting). Here the stop waits for a broker nobody runs, bounded by
// --kafka-flush-timeout; the repeated signals are logged, and the stop ends as it would have.
TEST(EfuStop, RepeatedStopSignalsDuringTheStopChangeNothing) {
  const uint16_t udpPort = freeUdpPort();
  const uint16_t cmdPort = freeTcpPort();
  const uint16_t nobody = freeTcpPort();
  Process efu({EFU_BINARY, "-d", "udp", "-i", "127.0.0.1", "-p", std::to_string(udpPort), "-m",
               std::to_string(cmdPort), "-b", "127.0.0.1:" + std::to_string(nobody),
               "--kafka-flush-timeout", "3000", "--stats-interval", "0.2"});
  ASSERT_TRUE(eventually([&] { return !control(cmdPort, "VERSION_GET").empty(); })) << efu.output();
  efu.signal(SIGTERM);
  ASSERT_TRUE(eventually([&] {
    return efu.output().find("stopping (SIGTERM)") != std::string::npos;
  })) << efu.output();
  efu.signal(SIGTERM);
  efu.signal(SIGINT);
  const auto code = efu.wait(30s);
  ASSERT_TRUE(code.has_value()) << efu.output();
  const std::string out = efu.output();
  EXPECT_EQ(*code, 3) << "the status messages were not delivered: " << out;
  EXPECT_NE(out.find("stop signal again"), std::string::npos) << out;
  expectOneFinalAccount(out);
}

// Issue 37 item 7: a stop signal while efu starts killed it without a word. Here SIGTERM is
// pending (the parent blocked it) when efu starts: it arrives once efu's handlers are in place,
// and start-up ends at its next step with a log line and exit code 0.
TEST(EfuStop, AStopSignalDuringStartUpEndsItWithALogLine) {
  Process efu({EFU_BINARY, "-d", "udp", "-i", "127.0.0.1", "-p", std::to_string(freeUdpPort()),
               "-m", std::to_string(freeTcpPort()), "--no-kafka"},
              {SIGTERM});
  const auto code = efu.wait(30s);
  ASSERT_TRUE(code.has_value()) << efu.output();
  const std::string out = efu.output();
  EXPECT_EQ(*code, 0) << out;
  EXPECT_NE(out.find("SIGTERM during start-up (setting up logging): stopping before receiving "
                     "anything"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("receiving UDP"), std::string::npos) << out;
}

} // namespace
