// SPDX-License-Identifier: BSD-2-Clause
// The real efu daemon with the udp module: exact counters, bad input, clean exits.
#include "tests/integration/TestKit.h"
#include "tests/support/ArrivalStamping.h"
#include "tests/support/FakeControlPort.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace efu::testkit;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

/// Runs `efu -d udp` on free ports.
class EfuUdpDaemon : public ::testing::Test {
protected:
  /// Starts efu with `extra` options and waits until its control port answers.
  void start(const std::vector<std::string> &extra) {
    udpPort_ = freeUdpPort();
    cmdPort_ = freeTcpPort();
    std::vector<std::string> argv{EFU_BINARY, "-d", "udp", "-i", "127.0.0.1", "-p",
                                  std::to_string(udpPort_), "-m", std::to_string(cmdPort_),
                                  "--stats-interval", "0.2", "--no-kafka"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    efu_ = std::make_unique<Process>(argv);
    ASSERT_TRUE(eventually([&] { return !control(cmdPort_, "VERSION_GET").empty(); }))
        << efu_->output();
  }

  int64_t stat(const std::string &name) {
    const auto value = counter(cmdPort_, name);
    EXPECT_TRUE(value.has_value()) << "no counter " << name;
    return value.value_or(-1);
  }

  /// Waits until the processing thread has handled `n` datagrams. The module's counters are
  /// written in process(), before processing.packets counts the datagram, so they are final then.
  void waitProcessed(int64_t n) {
    ASSERT_TRUE(eventually([&] { return stat("processing.packets") >= n; })) << efu_->output();
    ASSERT_EQ(stat("processing.packets"), n);
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

  /// After `count` datagrams of `size` bytes from one udpgen: every one counted exactly once.
  void expectExactStream(int64_t count, int64_t size) {
    waitProcessed(count);
    EXPECT_EQ(stat("receive.packets"), count);
    EXPECT_EQ(stat("receive.bytes"), count * size);
    EXPECT_EQ(stat("udp.seq.expected"), count);
    EXPECT_EQ(stat("udp.seq.lost"), 0);
    EXPECT_EQ(stat("udp.seq.reordered"), 0);
    EXPECT_EQ(stat("udp.seq.duplicates"), 0);
    EXPECT_EQ(stat("receive.dropped"), 0);
  }

  /// Runs udpgen to completion with `args` (port added); asserts it succeeded.
  void udpgen(const std::vector<std::string> &args) {
    std::vector<std::string> argv{UDPGEN_BINARY, "-p", std::to_string(udpPort_), "--quiet"};
    argv.insert(argv.end(), args.begin(), args.end());
    Process generator(argv);
    const auto code = generator.wait(60s);
    ASSERT_TRUE(code.has_value());
    ASSERT_EQ(*code, 0) << generator.output();
  }

  uint16_t udpPort_ = 0;
  uint16_t cmdPort_ = 0;
  std::unique_ptr<Process> efu_;
};

/// Every test of this suite runs twice: the module on the rx thread (--threads 1, run to
/// completion) and on a processing thread behind the ring (--threads 2).
class EfuUdp : public EfuUdpDaemon, public ::testing::WithParamInterface<const char *> {
protected:
  void SetUp() override { start({"--threads", GetParam()}); }
};

INSTANTIATE_TEST_SUITE_P(Threads, EfuUdp, ::testing::Values("1", "2"),
                         [](const ::testing::TestParamInfo<const char *> &param) {
                           return std::string(param.param) == "1" ? "RunToCompletion" : "HandOff";
                         });

TEST_P(EfuUdp, UdpgenDatagramsAllArriveInOrder) {
  // Paced (about 12 500 datagrams/s over 1.6 s) so that a loaded CI machine, whose two cores
  // the sender, the receiver and the processing thread share, loses nothing.
  constexpr int kCount = 20000;
  udpgen({"-n", std::to_string(kCount), "-s", "1000", "--bitrate", "100M"});
  expectExactStream(kCount, 1000);
  EXPECT_GT(stat("udp.delay.samples"), 0); // udpgen stamps every datagram >= 16 B
  stopWith("SIGTERM");
}

TEST_P(EfuUdp, InjectedGapsReordersAndDuplicatesAreCountedExactly) {
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

/// The module's report `name` (REPORT_GET) as JSON, polled until `done` holds for it.
nlohmann::json reportWhen(uint16_t cmdPort, const std::string &name,
                          const std::function<bool(const nlohmann::json &)> &done) {
  nlohmann::json report;
  const std::string prefix = "REPORT_GET " + name + ' ';
  eventually([&] {
    const std::string reply = control(cmdPort, "REPORT_GET " + name);
    if (reply.rfind(prefix, 0) != 0) {
      return false;
    }
    report = nlohmann::json::parse(reply.substr(prefix.size()));
    return done(report);
  });
  return report;
}

TEST_P(EfuUdp, LossPatternAndReorderHistogramComeBackOverTheControlPort) {
  UdpSender sender;
  int64_t sent = 0;
  for (uint64_t seq = 0; seq < 400; ++seq) {
    if (seq % 8 != 7) { // every 8th lost: 7, 15, ..., 399
      sender.sendSequence(udpPort_, seq);
      ++sent;
    }
  }
  sender.sendSequence(udpPort_, 400); // closes the last gap
  sender.sendSequence(udpPort_, 399); // late, 1 back: no loss after all
  sent += 2;
  waitProcessed(sent);
  EXPECT_EQ(stat("udp.loss.bursts"), 50);
  const auto pattern = reportWhen(cmdPort_, "udp.loss.pattern",
                                  [](const nlohmann::json &r) { return r.value("gaps_seen", 0) == 50; });
  EXPECT_EQ(pattern["period"], 8);
  ASSERT_EQ(pattern["first_lost"].size(), 50U);
  EXPECT_EQ(pattern["first_lost"][0], 7);
  EXPECT_EQ(pattern["first_lost"][49], 399);
  const auto histograms = reportWhen(cmdPort_, "udp.histograms", [](const nlohmann::json &r) {
    return r.contains("reorder") && r["reorder"]["count"] == 1;
  });
  EXPECT_EQ(histograms["reorder"]["bins"], nlohmann::json::parse("[[1,1]]"));
  EXPECT_EQ(histograms["burst"]["bins"], nlohmann::json::parse("[[1,50]]"));
  EXPECT_EQ(control(cmdPort_, "REPORT_GET udp.nothing"), "Error: <BADARGS>");
  stopWith("EXIT");
}

TEST_F(EfuUdpDaemon, KernelTimestampsGiveEveryDatagramItsOwnInterArrivalTime) {
  // Back to back from one socket: efu's rx thread takes several per recvmmsg batch, which
  // share one clock reading; with --rx-timestamps kernel each has the kernel's own time. Until
  // Linux stamps on arrival, a datagram is stamped when read (tests/support/ArrivalStamping.h):
  // this socket, open for the test, has seen stamping on arrival before efu starts.
  efu::UdpReceiver stamping(efu::test::stampingReceiverOptions());
  ASSERT_TRUE(efu::test::waitForArrivalStamping(stamping));
  start({"--rx-timestamps", "kernel"});
  UdpSender sender;
  for (uint64_t seq = 0; seq < 300; ++seq) {
    sender.sendSequence(udpPort_, seq);
  }
  waitProcessed(300);
  const auto histograms = reportWhen(cmdPort_, "udp.histograms", [](const nlohmann::json &r) {
    return r.contains("interarrival") && r["interarrival"]["count"] == 299;
  });
  ASSERT_FALSE(histograms["interarrival"]["bins"].empty()) << histograms.dump();
  EXPECT_GT(histograms["interarrival"]["bins"][0][0], 0) << histograms.dump(); // no gap of 0
  stopWith("EXIT");
}

TEST_F(EfuUdpDaemon, SweepGivesEachSpacingItsSentAndReceivedCountsInOneStream) {
  start({});
  Process generator({UDPGEN_BINARY, "-p", std::to_string(udpPort_), "-s", "64", "--sweep",
                     "50:150:50", "-n", "200", "-m", std::to_string(cmdPort_), "--json", "-q"});
  const auto code = generator.wait(60s);
  ASSERT_TRUE(code.has_value());
  ASSERT_EQ(*code, 0) << generator.output();
  const std::string out = generator.output();
  const size_t json = out.find("{\"size\"");
  ASSERT_NE(json, std::string::npos) << out;
  const auto summary = nlohmann::json::parse(out.substr(json, out.find('\n', json) - json));
  ASSERT_EQ(summary["sweep"].size(), 3U) << summary.dump();
  double spacing = 50.0;
  for (const auto &step : summary["sweep"]) {
    EXPECT_EQ(step["spacing_us"], spacing);
    EXPECT_EQ(step["sent"], 200);
    EXPECT_EQ(step["received"], 200) << step.dump();
    EXPECT_EQ(step["lost"], 0);
    spacing += 50.0;
  }
  // One stream of numbers 0..599: the receiver saw no restart and no loss.
  waitProcessed(600);
  EXPECT_EQ(stat("udp.seq.expected"), 600);
  EXPECT_EQ(stat("udp.seq.restarts"), 0);
  EXPECT_EQ(stat("udp.seq.lost"), 0);
  stopWith("EXIT");
}

TEST_F(EfuUdpDaemon, EfuDumpPrintsAndDrawsTheHistogramReport) {
  start({});
  UdpSender sender;
  int64_t sent = 0;
  for (uint64_t seq = 0; seq < 100; ++seq) {
    if ((seq < 10 || seq > 12) && seq != 50) { // gaps of 3 and 1
      sender.sendSequence(udpPort_, seq);
      ++sent;
    }
  }
  waitProcessed(sent);
  (void)reportWhen(cmdPort_, "udp.histograms", [](const nlohmann::json &r) {
    return r.contains("burst") && r["burst"]["count"] == 2;
  });
  const fs::path dir = fs::temp_directory_path() / ("efu-report-" + std::to_string(getpid()));
  fs::create_directories(dir);
  Process dump({DUMP_BINARY, "--report", "udp.histograms", "-m", std::to_string(cmdPort_),
                "--report-png", (dir / "h-").string()});
  ASSERT_EQ(dump.wait(30s).value_or(-1), 0) << dump.output();
  const std::string out = dump.output();
  EXPECT_NE(out.find("burst (datagrams): count 2, max 3, p50 1, p90 3, p99 3\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("interarrival (ns): count 95,"), std::string::npos) << out;
  EXPECT_NE(out.find("reorder (datagrams): count 0,"), std::string::npos) << out;
  EXPECT_TRUE(fs::exists(dir / "h-burst.png"));
  EXPECT_TRUE(fs::exists(dir / "h-delay.png"));
  EXPECT_TRUE(fs::exists(dir / "h-interarrival.png"));
  EXPECT_FALSE(fs::exists(dir / "h-reorder.png")) << "an empty histogram has no chart";
  fs::remove_all(dir);

  Process unknown({DUMP_BINARY, "--report", "udp.nosuch", "-m", std::to_string(cmdPort_)});
  EXPECT_EQ(unknown.wait(30s).value_or(-1), 1);
  EXPECT_NE(unknown.output().find("has no report 'udp.nosuch'"), std::string::npos)
      << unknown.output();
  stopWith("EXIT");
}

TEST_P(EfuUdp, RestartedGeneratorIsNotLoss) {
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

TEST_P(EfuUdp, ShortAndEmptyDatagramsAreCountedAndTheDaemonLives) {
  UdpSender sender;
  const uint8_t bytes[7] = {1, 2, 3, 4, 5, 6, 7};
  sender.send(udpPort_, bytes, 0);
  sender.send(udpPort_, bytes, 0);
  sender.send(udpPort_, bytes, 7);
  sender.send(udpPort_, bytes, 1);
  sender.sendSequence(udpPort_, 0, 8); // the shortest valid one
  waitProcessed(5);
  EXPECT_EQ(stat("readouts.errors.short"), 4);
  EXPECT_EQ(stat("udp.seq.expected"), 1);
  EXPECT_EQ(stat("receive.packets"), 5);
  EXPECT_TRUE(efu_->running());
  stopWith("SIGTERM");
}

TEST_F(EfuUdpDaemon, GroSplitsCoalescedDatagramsExactly) {
  start({"--gro", "--rx-cpu", "0", "--proc-cpu", "0"});
  constexpr int kCount = 40007;
  // 16 datagrams per send call (GSO): the kernel hands them over as one GRO message. 40007 is
  // not a multiple of 16, so the last call carries 7. (A short last segment is covered by the
  // runtime's unit tests.)
  udpgen({"-n", std::to_string(kCount), "-s", "1472", "--bitrate", "400M", "--gso", "16"});
  expectExactStream(kCount, 1472);
  EXPECT_LT(stat("receive.messages"), kCount / 2); // coalesced: many datagrams per message
  EXPECT_NE(efu_->output().find("GRO"), std::string::npos) << efu_->output();
  stopWith("SIGTERM");
}

TEST_F(EfuUdpDaemon, TwoRxQueuesTwoSendersExactTotals) {
  start({"--rx-queues", "2", "--rx-cpu", "0,1"});
  // Paced (about 9 000 datagrams/s each over 1.7 s): the kernel may put both senders on one
  // socket, whose rx thread is pinned to one of the two cores the senders also run on.
  constexpr int kEach = 15000;
  std::vector<std::string> args{UDPGEN_BINARY, "-p", std::to_string(udpPort_), "--quiet", "-n",
                                std::to_string(kEach), "-s", "700", "--bitrate", "50M"};
  Process first(args);
  Process second(args);
  for (Process *generator : {&first, &second}) {
    const auto code = generator->wait(60s);
    ASSERT_TRUE(code.has_value());
    ASSERT_EQ(*code, 0) << generator->output();
  }
  waitProcessed(2 * kEach);
  EXPECT_EQ(stat("receive.packets"), 2 * kEach);
  EXPECT_EQ(stat("receive.q0.packets") + stat("receive.q1.packets"), 2 * kEach);
  EXPECT_EQ(stat("receive.bytes"), int64_t{2 * kEach} * 700);
  // Two sequences from 0, one per source: the module tells them apart by source address and
  // port, so both count exactly whether the kernel put them on the same socket or not.
  EXPECT_EQ(stat("udp.seq.sources"), 2);
  EXPECT_EQ(stat("udp.seq.expected"), 2 * kEach);
  EXPECT_EQ(stat("udp.seq.lost"), 0);
  EXPECT_EQ(stat("udp.seq.duplicates"), 0);
  EXPECT_EQ(stat("receive.dropped"), 0);
  stopWith("EXIT");
}

TEST_F(EfuUdpDaemon, SighupReopensTheLogFileAndUsr1StopsCleanly) {
  const fs::path dir = fs::temp_directory_path() / ("efu-log-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path logFile = dir / "efu.log";
  start({"--log-file", logFile.string()});
  ASSERT_TRUE(fs::exists(logFile));
  fs::rename(logFile, dir / "efu.log.1"); // what logrotate does
  efu_->signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return fs::exists(logFile); })) << efu_->output();
  EXPECT_TRUE(efu_->running());
  // Other terminating signals drain and flush like SIGTERM.
  efu_->signal(SIGUSR1);
  const auto code = efu_->wait(10s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0) << efu_->output();
  EXPECT_NE(efu_->output().find("SIGHUP: log file reopened"), std::string::npos) << efu_->output();
  EXPECT_NE(efu_->output().find("stopping (SIGUSR1)"), std::string::npos) << efu_->output();
  std::ifstream reopened(logFile);
  const std::string text((std::istreambuf_iterator<char>(reopened)), {});
  EXPECT_NE(text.find("efu stopped"), std::string::npos) << text;
  fs::remove_all(dir);
}

std::string fileText(const fs::path &path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A reopen that fails is logged (to stderr and to the file still open), counted, and tried
// again on the next SIGHUP; efu keeps receiving and answering. A FIFO in the log's place is
// refused, not waited on (the control port still answers, SIGTERM still stops efu).
TEST_F(EfuUdpDaemon, AFailedLogReopenIsCountedAndRetriedAndEfuKeepsRunning) {
  const fs::path dir = fs::temp_directory_path() / ("efu-badlog-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path logFile = dir / "efu.log";
  const fs::path rotated = dir / "efu.log.1";
  start({"--log-file", logFile.string()});
  ASSERT_EQ(stat("log.reopen_failures"), 0);

  fs::rename(logFile, rotated);
  fs::create_directory(logFile); // a directory where the new file would go
  efu_->signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return counter(cmdPort_, "log.reopen_failures") == 1; }))
      << efu_->output();
  ASSERT_TRUE(eventually([&] {
    return fileText(rotated).find("SIGHUP: cannot open log file") != std::string::npos;
  })) << fileText(rotated);

  fs::remove(logFile);
  ASSERT_EQ(mkfifo(logFile.c_str(), 0600), 0); // nobody reads it: a blocking open would hang
  efu_->signal(SIGHUP);
  ASSERT_TRUE(eventually([&] { return counter(cmdPort_, "log.reopen_failures") == 2; }))
      << efu_->output();
  udpgen({"-n", "100", "-s", "64"}); // still receiving
  waitProcessed(100);

  fs::remove(logFile); // the next SIGHUP succeeds
  efu_->signal(SIGHUP);
  ASSERT_TRUE(eventually([&] {
    return fileText(logFile).find("SIGHUP: log file reopened") != std::string::npos;
  })) << efu_->output();
  EXPECT_EQ(stat("log.reopen_failures"), 2);
  stopWith("SIGTERM");
  const std::string old = fileText(rotated);
  EXPECT_NE(old.find("'" + logFile.string() + "': Is a directory"), std::string::npos) << old;
  EXPECT_NE(old.find("'" + logFile.string() + "' is not a regular file"), std::string::npos)
      << old;
  EXPECT_NE(fileText(logFile).find("efu stopped"), std::string::npos) << fileText(logFile);
  EXPECT_NE(efu_->output().find("SIGHUP: cannot open log file"), std::string::npos); // stderr
  fs::remove_all(dir);
}

// A capture written by an independent tool (tcpdump on lo) replayed by udpgen --pcap at the
// capture's timing: every datagram arrives, in order, byte for byte (exact udp.seq counters).
TEST_F(EfuUdpDaemon, UdpgenReplaysATcpdumpCaptureExactly) {
  constexpr int kCount = 3000;
  const fs::path capture =
      fs::temp_directory_path() / ("efu-lo-" + std::to_string(getpid()) + ".pcap");
  // A listener on the captured port, so the generator gets no ICMP port-unreachable back.
  const int sink = ::socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(sink, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(sink, reinterpret_cast<sockaddr *>(&addr), &len);
  const uint16_t capturedPort = ntohs(addr.sin_port);

  Process tcpdump({"/usr/bin/env", "tcpdump", "-i", "lo", "-U", "-w", capture.string(), "-c",
                   std::to_string(kCount), "udp and dst port " + std::to_string(capturedPort)});
  eventually([&] {
    return tcpdump.output().find("listening on") != std::string::npos || !tcpdump.running();
  });
  if (!tcpdump.running()) {
    ::close(sink);
    GTEST_SKIP() << "tcpdump cannot capture on lo here (not installed or no CAP_NET_RAW): "
                 << tcpdump.output();
  }
  Process generator({UDPGEN_BINARY, "-p", std::to_string(capturedPort), "-n",
                     std::to_string(kCount), "-s", "200", "--pps", "30000", "--quiet"});
  ASSERT_EQ(generator.wait(60s).value_or(-1), 0) << generator.output();
  ASSERT_EQ(tcpdump.wait(30s).value_or(-1), 0) << tcpdump.output();
  ::close(sink);

  start({"--threads", "2"});
  Process replay({UDPGEN_BINARY, "--pcap", capture.string(), "-p", std::to_string(udpPort_),
                  "--json", "--quiet"});
  ASSERT_EQ(replay.wait(60s).value_or(-1), 0) << replay.output();
  EXPECT_NE(replay.output().find(R"("sent":3000)"), std::string::npos) << replay.output();
  expectExactStream(kCount, 200);
  stopWith("SIGTERM");
  fs::remove(capture);
}

// The replies in the shapes the ESS operator scripts (efushell) split and convert them.
TEST_F(EfuUdpDaemon, EssOperatorScriptsCanParseTheReplies) {
  start({});
  const auto words = [](const std::string &line) {
    std::istringstream in(line);
    std::vector<std::string> out;
    for (std::string word; in >> word;) {
      out.push_back(word);
    }
    return out;
  };
  // efubriefstat: "cmd, long, date, time, user, version, hash = VERSION_GET...split()"
  EXPECT_EQ(words(control(cmdPort_, "VERSION_GET")).size(), 7U) << control(cmdPort_, "VERSION_GET");
  // efubriefstat: "cmd, detector = DETECTOR_INFO_GET...split()"
  EXPECT_EQ(words(control(cmdPort_, "DETECTOR_INFO_GET")),
            (std::vector<std::string>{"DETECTOR_INFO_GET", "udp"}));
  // efubriefstat: "cmd, name, uptime = STAT_GET_NAME main.uptime", then int(uptime)
  const auto uptime = words(control(cmdPort_, "STAT_GET_NAME main.uptime"));
  ASSERT_EQ(uptime.size(), 3U);
  EXPECT_GE(std::stoll(uptime[2]), 0);
  // isefurunning: int(STAT_GET 1 .split()[2])
  const auto first = words(control(cmdPort_, "STAT_GET 1"));
  ASSERT_EQ(first.size(), 3U);
  EXPECT_NO_THROW((void)std::stoll(first[2]));
  // RUNTIMESTATS: one unsigned integer; CALIB_MODE_GET: 0 or 1 (without Kafka: 0, which
  // efustatus.py prints; CALIB_MODE_SET is refused then)
  const auto status = words(control(cmdPort_, "RUNTIMESTATS"));
  ASSERT_EQ(status.size(), 2U);
  EXPECT_NO_THROW((void)std::stoul(status[1]));
  EXPECT_EQ(control(cmdPort_, "RUNTIMESTATS_JSON").rfind("RUNTIMESTATS_JSON {", 0), 0U);
  EXPECT_EQ(control(cmdPort_, "CALIB_MODE_GET"), "CALIB_MODE_GET 0");
  EXPECT_EQ(control(cmdPort_, "CALIB_MODE_SET 1").rfind("Error:", 0), 0U);
  stopWith("SIGTERM");
}

// -g/-o/-r against a real carbon-cache (Debian graphite-carbon): the counters land in whisper
// files named efu.<instrument>.<region>.<counter>, read back with whisper-fetch.
TEST_F(EfuUdpDaemon, CountersReachARealCarbonCache) {
  if (::system("command -v carbon-cache >/dev/null 2>&1 && command -v whisper-fetch "
               ">/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "carbon-cache or whisper-fetch not installed (graphite-carbon, python3-whisper)";
  }
  const fs::path dir = fs::temp_directory_path() / ("efu-carbon-" + std::to_string(getpid()));
  fs::remove_all(dir);
  for (const char *sub : {"conf", "whisper", "log", "pid"}) {
    fs::create_directories(dir / sub);
  }
  const uint16_t linePort = freeTcpPort();
  const uint16_t picklePort = freeTcpPort();
  const uint16_t queryPort = freeTcpPort();
  std::ofstream(dir / "conf" / "carbon.conf")
      << "[cache]\nSTORAGE_DIR = " << dir.string() << "/\nLOCAL_DATA_DIR = " << (dir / "whisper").string()
      << "/\nCONF_DIR = " << (dir / "conf").string() << "/\nLOG_DIR = " << (dir / "log").string()
      << "/\nPID_DIR = " << (dir / "pid").string() << "/\nUSER =\n"
      << "LINE_RECEIVER_INTERFACE = 127.0.0.1\nLINE_RECEIVER_PORT = " << linePort
      << "\nENABLE_UDP_LISTENER = False\nPICKLE_RECEIVER_INTERFACE = 127.0.0.1\n"
      << "PICKLE_RECEIVER_PORT = " << picklePort << "\nCACHE_QUERY_INTERFACE = 127.0.0.1\n"
      << "CACHE_QUERY_PORT = " << queryPort << "\nMAX_CACHE_SIZE = inf\n"
      << "MAX_UPDATES_PER_SECOND = inf\nMAX_CREATES_PER_MINUTE = inf\nWHISPER_AUTOFLUSH = True\n";
  std::ofstream(dir / "conf" / "storage-schemas.conf")
      << "[default]\npattern = .*\nretentions = 1s:1h\n";
  Process carbon({"/usr/bin/env", "carbon-cache", "--config=" + (dir / "conf" / "carbon.conf").string(),
                  "--nodaemon", "start"});
  ASSERT_TRUE(eventually([&] {
    return carbon.output().find("starting on " + std::to_string(linePort)) != std::string::npos ||
           !carbon.running();
  }, 30s)) << carbon.output();
  ASSERT_TRUE(carbon.running()) << carbon.output();

  start({"-g", "127.0.0.1", "-o", std::to_string(linePort), "-r", "7"});
  udpgen({"-n", "1000", "-s", "64"});
  expectExactStream(1000, 64);
  const fs::path file = dir / "whisper" / "efu" / "udp" / "7" / "receive" / "packets.wsp";
  const auto lastValue = [&]() -> int64_t {
    if (!fs::exists(file)) {
      return -1;
    }
    Process fetch({"/usr/bin/env", "whisper-fetch", "--from=" + std::to_string(::time(nullptr) - 600),
                   file.string()});
    if (fetch.wait(30s).value_or(-1) != 0) {
      return -1;
    }
    int64_t last = -1;
    std::istringstream lines(fetch.output());
    for (std::string line; std::getline(lines, line);) {
      const auto tab = line.find('\t');
      if (tab != std::string::npos && line.find("None") == std::string::npos) {
        last = static_cast<int64_t>(std::stod(line.substr(tab + 1)));
      }
    }
    return last;
  };
  EXPECT_TRUE(eventually([&] { return lastValue() == 1000; }, 30s))
      << "last receive.packets in whisper: " << lastValue() << "\n" << efu_->output();
  EXPECT_EQ(stat("graphite.failures"), 0);
  EXPECT_GT(stat("graphite.sent"), 0);
  stopWith("SIGTERM");
  carbon.signal(SIGTERM);
  carbon.wait(30s);
  fs::remove_all(dir);
}

TEST_F(EfuUdpDaemon, ReadOnlyControlPortRefusesExit) {
  start({"--cmd-read-only", "--cmdaddr", "0.0.0.0"});
  EXPECT_NE(efu_->output().find("is reachable from the network (counters readable by anyone; "
                                "EXIT refused)"),
            std::string::npos)
      << efu_->output();
  EXPECT_EQ(control(cmdPort_, "EXIT"), "Error: <READONLY>");
  EXPECT_EQ(control(cmdPort_, "STAT_GET_NAME receive.packets"), "STAT_GET_NAME receive.packets 0");
  EXPECT_TRUE(efu_->running());
  stopWith("SIGTERM");
}

TEST_F(EfuUdpDaemon, ASecretFileGuardsExit) {
  const fs::path secret =
      fs::temp_directory_path() / ("efu-secret-" + std::to_string(getpid()));
  std::ofstream(secret) << "c0ffee42\n";
  start({"--cmd-secret-file", secret.string()});
  EXPECT_EQ(control(cmdPort_, "EXIT"), "Error: <NOAUTH>");
  EXPECT_EQ(control(cmdPort_, "AUTH wrong\nEXIT"), "Error: <BADAUTH>")
      << "nothing after a wrong secret runs";
  EXPECT_EQ(stat("control.auth_failures"), 1);
  EXPECT_TRUE(efu_->running());
  EXPECT_EQ(control(cmdPort_, "AUTH c0ffee42\nEXIT"), "<OK>\n<OK>");
  const auto code = efu_->wait(10s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0) << efu_->output();
  fs::remove(secret);
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
      {{"--rx-batch", "1025"}, "--rx-batch"},
      {{"--threads", "4"}, "--threads"},
      {{"--rx-queues", "2", "--rx-cpu", "0,1,0"}, "3 CPUs for 2 rx queues"},
      {{"--rx-queues", "2", "--threads", "1"}, "single rx queue"},
      {{"--stats-interval", "nan"}, "finite"},
      {{"--stopafter", "inf"}, "finite"},
      {{"-b", ""}, "--broker: must not be empty"},
      {{"--config", "/dev/null"}, "not a regular file"},
      {{"--log-file", "/nonexistent-dir/efu.log"}, "does not exist"},
      {{"--ring-slots", "65536", "--gro"}, "4096 MiB of ring buffers; the limit is 1024 MiB"},
      {{"--cmd-idle-timeout", "nan"}, "finite"},
      {{"--cmd-secret-file", "/nonexistent-secret"}, "does not exist"},
      {{"--proc-threads", "17"}, "--proc-threads"},
      {{"--proc-threads", "2", "--threads", "1"}, "2 processing threads need a ring to read"},
      {{"--proc-threads", "2"},
       "--proc-threads 2: module 'udp' cannot be split over processing threads"},
  };
  for (const auto &[args, expected] : cases) {
    std::vector<std::string> argv{EFU_BINARY, "-d", "udp", "--no-kafka"};
    argv.insert(argv.end(), args.begin(), args.end());
    Process efu(argv);
    const auto code = efu.wait(10s);
    ASSERT_TRUE(code.has_value());
    EXPECT_EQ(*code, 1) << args[0] << ": could not start"; // not CLI11's own 105, 109, ...
    EXPECT_NE(efu.output().find(expected), std::string::npos) << efu.output();
  }
}

TEST(EfuCli, AnIllegalTopicNameStopsEfuAtStart) {
  Process efu({EFU_BINARY, "-d", "udp", "-b", "127.0.0.1:1", "-t", "bad topic!"});
  const auto code = efu.wait(10s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 1);
  EXPECT_NE(efu.output().find("--topic 'bad topic!': not a Kafka topic name"), std::string::npos)
      << efu.output();
}

TEST(EfuCli, HelpModulePrintsTheModuleTable) {
  Process efu({EFU_BINARY, "-d", "udp", "--help-module"});
  const auto code = efu.wait(10s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 0);
  EXPECT_NE(efu.output().find("Module udp"), std::string::npos) << efu.output();
  EXPECT_NE(efu.output().find("this module cannot be split"), std::string::npos) << efu.output();
  Process trex({EFU_BINARY, "-d", "trex", "--help-module"});
  ASSERT_EQ(trex.wait(10s), std::optional<int>(0));
  EXPECT_NE(trex.output().find("one partition each, by event builder (ring, FEN)"),
            std::string::npos)
      << trex.output();
}

TEST(EfuDumpReport, AReportNestedHalfAMillionLevelsIsAnErrorNotACrash) {
  // A control port answering REPORT_GET with 500 000 nested arrays: efu-dump died of SIGSEGV.
  FakeControlPort port("REPORT_GET udp.histograms " + std::string(500'000, '[') +
                       std::string(500'000, ']') + "\n");
  Process dump({DUMP_BINARY, "--report", "udp.histograms", "-m", std::to_string(port.port())});
  EXPECT_EQ(dump.wait(30s).value_or(-1), 1) << dump.output();
  EXPECT_NE(dump.output().find("report 'udp.histograms' is not usable JSON: line 1, column 65: "
                               "JSON nested deeper than 64 levels"),
            std::string::npos)
      << dump.output();
}

} // namespace
