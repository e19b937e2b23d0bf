// SPDX-License-Identifier: BSD-2-Clause
// The real efu daemon with the udp module: exact counters, bad input, clean exits.
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>

#include <csignal>

using namespace efu::testkit;
using namespace std::chrono_literals;

namespace {

/// Starts `efu -d udp` on free ports and waits until its control port answers.
class EfuUdp : public ::testing::Test {
protected:
  void SetUp() override {
    udpPort_ = freeUdpPort();
    cmdPort_ = freeTcpPort();
    efu_ = std::make_unique<Process>(std::vector<std::string>{
        EFU_BINARY, "-d", "udp", "-i", "127.0.0.1", "-p", std::to_string(udpPort_), "-m",
        std::to_string(cmdPort_), "--stats-interval", "0.2", "--no-kafka"});
    ASSERT_TRUE(eventually([&] { return !control(cmdPort_, "VERSION_GET").empty(); }))
        << efu_->output();
  }

  int64_t stat(const std::string &name) {
    const auto value = counter(cmdPort_, name);
    EXPECT_TRUE(value.has_value()) << "no counter " << name;
    return value.value_or(-1);
  }

  /// Waits until the processing thread has handled `n` datagrams. The module's counters are
  /// written in process(), before proc.packets counts the datagram, so they are final then.
  void waitProcessed(int64_t n) {
    ASSERT_TRUE(eventually([&] { return stat("proc.packets") >= n; })) << efu_->output();
    ASSERT_EQ(stat("proc.packets"), n);
  }

  void stopWith(const std::string &how) {
    if (how == "EXIT") {
      EXPECT_EQ(control(cmdPort_, "EXIT"), "<OK>");
    } else {
      efu_->signal(how == "SIGINT" ? SIGINT : SIGTERM);
    }
    const auto code = efu_->wait(10s);
    ASSERT_TRUE(code.has_value()) << "efu did not stop on " << how;
    EXPECT_EQ(*code, 0) << efu_->output();
  }

  uint16_t udpPort_ = 0;
  uint16_t cmdPort_ = 0;
  std::unique_ptr<Process> efu_;
};

TEST_F(EfuUdp, UdpgenDatagramsAllArriveInOrder) {
  constexpr int kCount = 50000;
  Process udpgen({UDPGEN_BINARY, "-p", std::to_string(udpPort_), "-n", std::to_string(kCount),
                  "-s", "1000", "--rate", "400M", "--quiet"});
  const auto code = udpgen.wait(60s);
  ASSERT_TRUE(code.has_value());
  ASSERT_EQ(*code, 0) << udpgen.output();
  waitProcessed(kCount);
  EXPECT_EQ(stat("rx.packets"), kCount);
  EXPECT_EQ(stat("rx.bytes"), int64_t{kCount} * 1000);
  EXPECT_EQ(stat("udp.seq.expected"), kCount);
  EXPECT_EQ(stat("udp.seq.lost"), 0);
  EXPECT_EQ(stat("udp.seq.reordered"), 0);
  EXPECT_EQ(stat("udp.seq.duplicates"), 0);
  EXPECT_EQ(stat("rx.dropped.ring_full"), 0);
  EXPECT_GT(stat("udp.delay.samples"), 0); // udpgen stamps every datagram >= 16 B
  stopWith("SIGTERM");
}

TEST_F(EfuUdp, InjectedGapsReordersAndDuplicatesAreCountedExactly) {
  UdpSender sender;
  int64_t sent = 0;
  auto send = [&](uint64_t seq) {
    sender.sendSequence(udpPort_, seq);
    ++sent;
  };
  for (uint64_t seq = 0; seq < 100; ++seq) {
    send(seq);
  }
  for (uint64_t seq = 105; seq < 200; ++seq) { // 100..104 skipped
    send(seq);
  }
  send(102);   // late: fills one hole
  send(150);   // duplicate
  send(102);   // duplicate of the late one
  send(210);   // 200..209 skipped
  send(205);   // late
  send(199);   // duplicate
  waitProcessed(sent);
  EXPECT_EQ(stat("udp.seq.expected"), 211);
  EXPECT_EQ(stat("udp.seq.lost"), 4 + 9);
  EXPECT_EQ(stat("udp.seq.reordered"), 2);
  EXPECT_EQ(stat("udp.seq.duplicates"), 3);
  EXPECT_EQ(stat("udp.seq.restarts"), 0);
  stopWith("EXIT");
}

TEST_F(EfuUdp, RestartedGeneratorIsNotLoss) {
  UdpSender sender;
  for (uint64_t seq = 1'000'000; seq < 1'000'010; ++seq) {
    sender.sendSequence(udpPort_, seq);
  }
  for (uint64_t seq = 0; seq < 10; ++seq) {
    sender.sendSequence(udpPort_, seq);
  }
  waitProcessed(20);
  EXPECT_EQ(stat("udp.seq.restarts"), 1);
  EXPECT_EQ(stat("udp.seq.lost"), 0);
  EXPECT_EQ(stat("udp.seq.expected"), 20);
  stopWith("SIGINT");
}

TEST_F(EfuUdp, ShortAndEmptyDatagramsAreCountedAndTheDaemonLives) {
  UdpSender sender;
  const uint8_t bytes[7] = {1, 2, 3, 4, 5, 6, 7};
  sender.send(udpPort_, bytes, 0);
  sender.send(udpPort_, bytes, 0);
  sender.send(udpPort_, bytes, 7);
  sender.send(udpPort_, bytes, 1);
  sender.sendSequence(udpPort_, 0, 8); // the shortest valid one
  waitProcessed(5);
  EXPECT_EQ(stat("udp.rx.short"), 4);
  EXPECT_EQ(stat("udp.seq.expected"), 1);
  EXPECT_EQ(stat("rx.packets"), 5);
  EXPECT_TRUE(efu_->running());
  stopWith("SIGTERM");
}

TEST(EfuCli, UnknownModuleListsTheAvailableOnes) {
  Process efu({EFU_BINARY, "-d", "nosuchdetector", "--no-kafka"});
  const auto code = efu.wait(10s);
  ASSERT_TRUE(code.has_value());
  EXPECT_NE(*code, 0);
  const std::string out = efu.output();
  EXPECT_NE(out.find("unknown module 'nosuchdetector'"), std::string::npos) << out;
  EXPECT_NE(out.find("Available modules: "), std::string::npos) << out;
  EXPECT_NE(out.find("udp"), std::string::npos) << out;
}

TEST(EfuCli, BadValuesAreRejectedByName) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"-p", "70000"}, "--port"},
      {{"--ring-slots", "1000"}, "power of two"},
      {{"--dip", "1.2.3"}, "1.2.3"},
      {{"--log-level", "loud"}, "loud"},
      {{"--rx-batch", "0"}, "--rx-batch"},
  };
  for (const auto &[args, expected] : cases) {
    std::vector<std::string> argv{EFU_BINARY, "-d", "udp", "--no-kafka"};
    argv.insert(argv.end(), args.begin(), args.end());
    Process efu(argv);
    const auto code = efu.wait(10s);
    ASSERT_TRUE(code.has_value());
    EXPECT_NE(*code, 0) << args[0];
    EXPECT_NE(efu.output().find(expected), std::string::npos) << efu.output();
  }
}

TEST(EfuCli, HelpModulePrintsTheModuleTable) {
  Process efu({EFU_BINARY, "-d", "udp", "--help-module"});
  const auto code = efu.wait(10s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0);
  EXPECT_NE(efu.output().find("Module udp"), std::string::npos) << efu.output();
}

} // namespace
