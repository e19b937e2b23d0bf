// SPDX-License-Identifier: BSD-2-Clause
// udpgen in-process: option defaults and validation, and the sender against a loopback socket.
#include "generators/udpgen/UdpGenOptions.h"
#include "generators/udpgen/UdpSender.h"
#include "tests/generators/udpgen/LoopbackReceiver.h"

#include "common/time/Time.h"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <string>
#include <vector>

namespace efu::udpgen {
namespace {

UdpGenOptions parse(std::vector<std::string> args) {
  CLI::App app;
  UdpGenOptions options;
  addUdpGenOptions(app, options);
  args.insert(args.begin(), "udpgen");
  std::vector<const char *> argv;
  for (const auto &arg : args) {
    argv.push_back(arg.c_str());
  }
  app.parse(static_cast<int>(argv.size()), argv.data());
  return options;
}

TEST(UdpGenOptions, Defaults) {
  const UdpGenOptions options = parse({});
  EXPECT_EQ(options.address, "127.0.0.1");
  EXPECT_EQ(options.port, 9000);
  EXPECT_EQ(options.sizeBytes, 8972U);
  EXPECT_EQ(options.rateBps, 0.0);
  EXPECT_EQ(options.pps, 0U);
  EXPECT_EQ(options.count, 0U);
  EXPECT_EQ(options.durationS, 0.0);
  EXPECT_EQ(options.cpu, -1);
  EXPECT_EQ(options.batch, 64U);
  EXPECT_EQ(options.gso, 0U);
  EXPECT_EQ(options.sndbufBytes, 0U);
  EXPECT_FALSE(options.json);
  EXPECT_FALSE(options.quiet);
  EXPECT_FALSE(options.theory);
  EXPECT_EQ(options.linkBps, 10e9);
  EXPECT_EQ(options.targetPps(), 0.0);
}

TEST(UdpGenOptions, HelpShowsTheRealDefaults) {
  CLI::App app;
  UdpGenOptions options;
  addUdpGenOptions(app, options);
  const std::string help = app.help();
  for (const char *shown : {"=127.0.0.1", "=9000", "=8972", "=64", "=-1"}) {
    EXPECT_NE(help.find(shown), std::string::npos) << shown << " missing in\n" << help;
  }
}

TEST(UdpGenOptions, BitrateTakesSuffixesAndSetsPps) {
  const UdpGenOptions options = parse({"--bitrate", "2G", "-s", "1000"});
  EXPECT_DOUBLE_EQ(options.rateBps, 2e9);
  EXPECT_DOUBLE_EQ(options.targetPps(), 2e9 / 8000.0);
  EXPECT_DOUBLE_EQ(parse({"--pps", "5000"}).targetPps(), 5000.0);
  EXPECT_DOUBLE_EQ(parse({"--link", "1.5G"}).linkBps, 1.5e9);
}

TEST(UdpGenOptions, BitrateAndPpsExcludeEachOther) {
  EXPECT_THROW(parse({"--bitrate", "1G", "--pps", "10"}), CLI::ExcludesError);
}

// The spellings before docs/tools.md's vocabulary still set the same fields, with the same
// checks (the warnings they print are checked in udpgen_process_test).
TEST(UdpGenOptions, SpacingAndBurstSetTheGroupRate) {
  const UdpGenOptions options = parse({"--spacing", "10", "--burst", "4"});
  EXPECT_DOUBLE_EQ(options.spacingUs, 10.0);
  EXPECT_EQ(options.burst, 4U);
  EXPECT_DOUBLE_EQ(options.targetPps(), 400'000.0);
  EXPECT_DOUBLE_EQ(parse({"--spacing", "2.5"}).targetPps(), 400'000.0);
  EXPECT_THROW(parse({"--burst", "4"}), CLI::RequiresError);
  EXPECT_THROW(parse({"--spacing", "10", "--pps", "10"}), CLI::ExcludesError);
  EXPECT_THROW(parse({"--spacing", "10", "--bitrate", "1G"}), CLI::ExcludesError);
  EXPECT_THROW(parse({"--spacing", "10", "--burst", "0"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--spacing", "-1"}), CLI::ValidationError);
}

TEST(UdpGenOptions, OldSpellingsSetTheSameFields) {
  const UdpGenOptions options = parse({"--ip", "10.1.2.3", "--rate", "2G", "--duration", "7"});
  EXPECT_EQ(options.address, "10.1.2.3");
  EXPECT_DOUBLE_EQ(options.rateBps, 2e9);
  EXPECT_DOUBLE_EQ(options.durationS, 7.0);
  EXPECT_THROW(parse({"--rate", "1G", "--pps", "10"}), CLI::ExcludesError);
  EXPECT_THROW(parse({"--rate", "10X"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--duration", "-1"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--rate", "1G", "--bitrate", "2G"}), CLI::ParseError) << "one value, twice";
}

TEST(UdpGenOptions, BadValuesAreNamed) {
  try {
    parse({"--bitrate", "10X"});
    FAIL() << "accepted --bitrate 10X";
  } catch (const CLI::ValidationError &e) {
    EXPECT_NE(std::string(e.what()).find("10X"), std::string::npos) << e.what();
  }
  try {
    parse({"--size", "7"});
    FAIL() << "accepted --size 7";
  } catch (const CLI::ValidationError &e) {
    EXPECT_NE(std::string(e.what()).find("7"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse({"--size", "65508"}), CLI::ValidationError);
  EXPECT_NO_THROW(parse({"--size", "8"}));
  EXPECT_NO_THROW(parse({"--size", "65507"}));
  EXPECT_THROW(parse({"--batch", "0"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--link", "0"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--stopafter", "-1"}), CLI::ValidationError);
}

UdpGenOptions senderOptions(uint16_t port) {
  UdpGenOptions options;
  options.port = port;
  options.sizeBytes = 16;
  return options;
}

void expectSequence(const std::vector<test::Datagram> &got, uint64_t count, uint32_t sizeBytes) {
  ASSERT_EQ(got.size(), count);
  for (uint64_t i = 0; i < count; ++i) {
    EXPECT_EQ(got[i].sequence, i);
    EXPECT_EQ(got[i].sizeBytes, sizeBytes);
  }
}

TEST(UdpSender, GsoWithPartialLastMessageSendsEverySequenceOnce) {
  test::LoopbackReceiver receiver;
  UdpGenOptions options = senderOptions(receiver.port());
  options.count = 100; // 4 messages x 3 datagrams per call: 8 full calls, then 4 datagrams
  options.gso = 3;
  options.batch = 4;
  UdpSender sender(options);
  EXPECT_EQ(sender.gsoSegments(), 3U);
  EXPECT_EQ(sender.messagesPerCall(), 4U);
  const int64_t beforeNs = realtimeNs();
  const std::atomic<bool> stop{false};
  const SendSummary summary = sender.run(stop, {});
  const auto got = receiver.collect(100);
  const int64_t afterNs = realtimeNs();
  expectSequence(got, 100, 16);
  for (const auto &datagram : got) {
    EXPECT_GE(datagram.txNs, static_cast<uint64_t>(beforeNs));
    EXPECT_LE(datagram.txNs, static_cast<uint64_t>(afterNs));
  }
  EXPECT_EQ(summary.counters.sent, 100U);
  EXPECT_EQ(summary.counters.bytes, 1600U);
  EXPECT_EQ(summary.counters.errors(), 0U);
  EXPECT_EQ(summary.counters.nextSequence(), 100U);
  EXPECT_EQ(summary.counters.sendCalls, 9U);
  EXPECT_EQ(summary.gsoSegments, 3U);
}

TEST(UdpSender, GsoIsClampedToWhatFitsInOneMessage) {
  test::LoopbackReceiver receiver;
  UdpGenOptions options = senderOptions(receiver.port());
  options.sizeBytes = 8972;
  options.gso = 64;
  EXPECT_EQ(UdpSender(options).gsoSegments(), 7U); // 7 x 8972 = 62804 <= 65507
  options.sizeBytes = 64;
  options.gso = 1000;
  EXPECT_EQ(UdpSender(options).gsoSegments(), kMaxGsoSegments);
}

TEST(UdpSender, PacingKeepsBurstsShort) {
  test::LoopbackReceiver receiver;
  UdpGenOptions options = senderOptions(receiver.port());
  options.pps = 10'000; // 10 datagrams per millisecond
  options.batch = 64;
  EXPECT_EQ(UdpSender(options).messagesPerCall(), 10U);
  options.gso = 4;
  EXPECT_EQ(UdpSender(options).messagesPerCall(), 2U);
  options.pps = 1; // never less than one message per call
  EXPECT_EQ(UdpSender(options).messagesPerCall(), 1U);
}

TEST(UdpSender, PacedRunDeliversEverything) {
  test::LoopbackReceiver receiver;
  UdpGenOptions options = senderOptions(receiver.port());
  options.count = 50;
  options.pps = 1'000'000;
  UdpSender sender(options);
  const std::atomic<bool> stop{false};
  const SendSummary summary = sender.run(stop, {});
  expectSequence(receiver.collect(50), 50, 16);
  EXPECT_EQ(summary.counters.sent, 50U);
  EXPECT_DOUBLE_EQ(summary.targetPps, 1e6);
}

TEST(UdpSender, SpacingSendsOneGroupOfBurstPerCallInSequence) {
  test::LoopbackReceiver receiver;
  UdpGenOptions options = senderOptions(receiver.port());
  options.count = 103; // 25 groups of 4, then 3
  options.spacingUs = 10.0;
  options.burst = 4;
  options.batch = 2; // grows to hold a burst
  UdpSender sender(options);
  EXPECT_EQ(sender.messagesPerCall(), 4U);
  const std::atomic<bool> stop{false};
  const SendSummary summary = sender.run(stop, {});
  expectSequence(receiver.collect(103), 103, 16);
  EXPECT_EQ(summary.counters.sent, 103U);
  EXPECT_EQ(summary.counters.sendCalls, 26U);
  EXPECT_DOUBLE_EQ(summary.targetPps, 400'000.0);
}

TEST(UdpSender, SpacingWithGsoCarriesTheBurstInFewerMessages) {
  test::LoopbackReceiver receiver;
  UdpGenOptions options = senderOptions(receiver.port());
  options.count = 40;
  options.spacingUs = 5.0;
  options.burst = 8;
  options.gso = 4;
  UdpSender sender(options);
  EXPECT_EQ(sender.messagesPerCall(), 2U);
  const std::atomic<bool> stop{false};
  const SendSummary summary = sender.run(stop, {});
  expectSequence(receiver.collect(40), 40, 16);
  EXPECT_EQ(summary.counters.sendCalls, 5U);
}

TEST(UdpSender, StopBeforeStartSendsNothing) {
  test::LoopbackReceiver receiver;
  UdpSender sender(senderOptions(receiver.port()));
  const std::atomic<bool> stop{true};
  const SendSummary summary = sender.run(stop, {});
  EXPECT_EQ(summary.counters.nextSequence(), 0U);
  EXPECT_TRUE(receiver.collect(0, 0).empty());
}

TEST(UdpSender, RefusedDatagramsAreCountedAndKeepTheirNumbers) {
  uint16_t port = 0;
  {
    test::LoopbackReceiver closed; // take a free port, then close it: nobody listens there
    port = closed.port();
  }
  UdpGenOptions options = senderOptions(port);
  options.count = 200;
  UdpSender sender(options);
  const std::atomic<bool> stop{false};
  const SendSummary summary = sender.run(stop, {});
  EXPECT_GE(summary.counters.refused.connRefused, 1U);
  EXPECT_EQ(summary.counters.refused.other, 0U);
  EXPECT_EQ(summary.counters.sent + summary.counters.errors(), 200U);
  EXPECT_EQ(summary.counters.nextSequence(), 200U);
}

TEST(UdpSender, BadAddressIsASetupError) {
  UdpGenOptions options;
  options.address = "not-an-address";
  try {
    UdpSender sender(options);
    FAIL() << "accepted a bad address";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("not-an-address"), std::string::npos) << e.what();
  }
}

TEST(UdpSender, SummaryJsonHasEveryField) {
  SendSummary summary;
  summary.counters.sent = 10;
  summary.counters.bytes = 640;
  summary.counters.refused.connRefused = 2;
  summary.elapsedS = 2.0;
  summary.sizeBytes = 64;
  const auto json = nlohmann::json::parse(summaryJson(summary));
  EXPECT_EQ(json.at("sent"), 10);
  EXPECT_EQ(json.at("bytes"), 640);
  EXPECT_EQ(json.at("next_sequence"), 12);
  EXPECT_EQ(json.at("errors").at("econnrefused"), 2);
  EXPECT_EQ(json.at("errors").at("total"), 2);
  EXPECT_DOUBLE_EQ(json.at("mbps").get<double>(), 640 * 8 / 2.0 / 1e6);
  EXPECT_DOUBLE_EQ(json.at("kpps").get<double>(), 10 / 2.0 / 1e3);
  for (const char *key : {"seconds", "send_calls", "size_bytes", "gso_segments", "batch",
                          "target_pps", "cpu_user_s", "cpu_sys_s"}) {
    EXPECT_TRUE(json.contains(key)) << key;
  }
}

} // namespace
} // namespace efu::udpgen
