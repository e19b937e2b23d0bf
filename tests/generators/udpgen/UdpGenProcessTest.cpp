// SPDX-License-Identifier: BSD-2-Clause
// Runs the real udpgen binary against a loopback socket: sequences, timestamps, GSO, --json,
// SIGINT, and bad arguments.
#include "tests/generators/udpgen/LoopbackReceiver.h"

#include "common/net/PcapWriter.h"
#include "common/time/Time.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef EFU_UDPGEN_PATH
#error "EFU_UDPGEN_PATH must name the udpgen binary"
#endif

extern char **environ;

namespace efu::test {
namespace {

struct Finished {
  int exitCode = -1;
  std::string out;
  std::string err;
};

/// A running udpgen with its stdout and stderr on pipes.
class UdpgenProcess {
public:
  explicit UdpgenProcess(std::vector<std::string> args) {
    args.insert(args.begin(), EFU_UDPGEN_PATH);
    int outPipe[2];
    int errPipe[2];
    if (pipe2(outPipe, O_CLOEXEC) != 0 || pipe2(errPipe, O_CLOEXEC) != 0) {
      throw std::runtime_error("pipe failed");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, outPipe[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, errPipe[1], STDERR_FILENO);
    std::vector<char *> argv;
    for (auto &arg : args) {
      argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(outPipe[1]);
    close(errPipe[1]);
    outFd_ = outPipe[0];
    errFd_ = errPipe[0];
    if (rc != 0) {
      throw std::runtime_error(std::string("cannot start udpgen: ") + std::strerror(rc));
    }
  }
  ~UdpgenProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(outFd_);
    close(errFd_);
  }
  UdpgenProcess(const UdpgenProcess &) = delete;
  UdpgenProcess &operator=(const UdpgenProcess &) = delete;

  void interrupt() const { kill(pid_, SIGINT); }
  void terminate() const { kill(pid_, SIGTERM); }
  [[nodiscard]] pid_t pid() const { return pid_; }

  /// Reads both pipes to their end, then reaps the process. With a hang bound (a safety net for
  /// tests of hangs, not a timing check): exitCode -1 when the pipes stay open that long (the
  /// destructor then kills the process).
  Finished finish(int hangBoundMs = -1) {
    Finished result;
    pollfd fds[2] = {{outFd_, POLLIN, 0}, {errFd_, POLLIN, 0}};
    std::string *sinks[2] = {&result.out, &result.err};
    int open = 2;
    char buffer[4096];
    const int64_t giveUpNs = monotonicNs() + int64_t{hangBoundMs} * kNsPerMs;
    while (open > 0) {
      int waitMs = -1;
      if (hangBoundMs >= 0) {
        const int64_t leftNs = giveUpNs - monotonicNs();
        if (leftNs <= 0) {
          result.exitCode = -1;
          return result;
        }
        waitMs = static_cast<int>(leftNs / kNsPerMs) + 1;
      }
      if (poll(fds, 2, waitMs) < 0) {
        continue;
      }
      for (int i = 0; i < 2; ++i) {
        if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP)) != 0) {
          const ssize_t n = read(fds[i].fd, buffer, sizeof(buffer));
          if (n > 0) {
            sinks[i]->append(buffer, static_cast<size_t>(n));
          } else {
            fds[i].fd = -1;
            --open;
          }
        }
      }
    }
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return result;
  }

private:
  pid_t pid_ = -1;
  int outFd_ = -1;
  int errFd_ = -1;
};

Finished runUdpgen(std::vector<std::string> args) {
  return UdpgenProcess(std::move(args)).finish();
}

/// Receive-buffer bytes `count` datagrams of `sizeBytes` may occupy (skb overhead included,
/// generously: measured 832 B for 64 B and 16.6 KiB for 8972 B datagrams on loopback).
int64_t bufferNeed(uint64_t count, uint32_t sizeBytes) {
  return static_cast<int64_t>(count) * (2 * static_cast<int64_t>(sizeBytes) + 1024);
}

struct Variant {
  std::string name;
  uint32_t sizeBytes;
  uint64_t count;
  std::vector<std::string> extra;
  uint32_t expectedGso; // datagrams per message the summary must report
};

void PrintTo(const Variant &variant, std::ostream *os) {
  *os << variant.name;
}

class UdpgenDelivers : public ::testing::TestWithParam<Variant> {};

TEST_P(UdpgenDelivers, EverySequenceNumberOnceWithValidTimestamps) {
  const Variant &variant = GetParam();
  LoopbackReceiver receiver;
  if (receiver.rcvbufBytes() < bufferNeed(variant.count, variant.sizeBytes)) {
    GTEST_SKIP() << "receive buffer " << receiver.rcvbufBytes() << " B is too small; run as root "
                 << "or raise net.core.rmem_max";
  }
  std::vector<std::string> args = {
      "-p", std::to_string(receiver.port()), "-s",    std::to_string(variant.sizeBytes),
      "-n", std::to_string(variant.count),   "--json"};
  args.insert(args.end(), variant.extra.begin(), variant.extra.end());
  const int64_t beforeNs = realtimeNs();
  const Finished run = runUdpgen(args);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const std::vector<Datagram> got = receiver.collect(variant.count);
  const int64_t afterNs = realtimeNs();

  ASSERT_EQ(got.size(), variant.count) << run.err;
  uint64_t lastTxNs = 0;
  for (uint64_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].sequence, i);
    ASSERT_EQ(got[i].sizeBytes, variant.sizeBytes);
    if (variant.sizeBytes >= 16) {
      ASSERT_GE(got[i].txNs, static_cast<uint64_t>(beforeNs)) << "sequence " << i;
      ASSERT_LE(got[i].txNs, static_cast<uint64_t>(afterNs)) << "sequence " << i;
      ASSERT_GE(got[i].txNs, lastTxNs) << "sequence " << i;
      lastTxNs = got[i].txNs;
    }
  }

  const auto json = nlohmann::json::parse(run.out); // exactly one JSON document on stdout
  EXPECT_EQ(json.at("sent").get<uint64_t>(), variant.count);
  EXPECT_EQ(json.at("bytes").get<uint64_t>(), variant.count * variant.sizeBytes);
  EXPECT_EQ(json.at("next_sequence").get<uint64_t>(), variant.count);
  EXPECT_EQ(json.at("errors").at("total").get<uint64_t>(), 0U);
  EXPECT_EQ(json.at("gso_segments").get<uint32_t>(), variant.expectedGso) << run.err;
  EXPECT_GE(json.at("seconds").get<double>(), 0.0);
  EXPECT_NE(run.err.find("udpgen summary"), std::string::npos) << run.err;
}

INSTANTIATE_TEST_SUITE_P(
    Loopback, UdpgenDelivers,
    ::testing::Values(Variant{"plain64", 64, 1000, {}, 1},
                      Variant{"batch7_64", 64, 1000, {"--batch", "7"}, 1},
                      Variant{"min8", 8, 1000, {}, 1},
                      Variant{"gso16_64", 64, 1000, {"--gso", "16", "--batch", "5"}, 16},
                      Variant{"gso64_64", 64, 1000, {"--gso", "64"}, 64},
                      Variant{"gso10_1472", 1472, 1000, {"--gso", "10"}, 10},
                      Variant{"gso_clamped_8972", 8972, 300, {"--gso", "64"}, 7},
                      Variant{"paced_gso_64", 64, 1000, {"--gso", "8", "--pps", "200000"}, 8}),
    [](const ::testing::TestParamInfo<Variant> &param) { return param.param.name; });

/// While it lives, this thread is in a network namespace of its own whose loopback is up with a
/// 1500-byte MTU; sockets made and processes started meanwhile are in it too. There a UDP GSO
/// message of 8972-byte segments is larger than the route's MTU and the kernel refuses it, while
/// a lone 8972-byte datagram is fragmented and reassembled: the way to make loopback refuse GSO
/// without touching the host's. Needs CAP_SYS_ADMIN (why() says what failed).
class SmallMtuLoopback {
public:
  SmallMtuLoopback() {
    original_ = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (original_ < 0 || unshare(CLONE_NEWNET) != 0) {
      why_ = std::string("unshare(CLONE_NEWNET): ") + std::strerror(errno);
      return;
    }
    entered_ = true;
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ifreq request{};
    std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
    request.ifr_mtu = 1500;
    if (fd < 0 || ioctl(fd, SIOCSIFMTU, &request) != 0 || ioctl(fd, SIOCGIFFLAGS, &request) != 0) {
      why_ = std::string("loopback MTU: ") + std::strerror(errno);
    } else {
      request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
      if (ioctl(fd, SIOCSIFFLAGS, &request) != 0) {
        why_ = std::string("loopback up: ") + std::strerror(errno);
      }
    }
    if (fd >= 0) {
      close(fd);
    }
  }
  ~SmallMtuLoopback() {
    if (entered_ && setns(original_, CLONE_NEWNET) != 0) {
      std::abort(); // the rest of the test binary must not run in the namespace
    }
    if (original_ >= 0) {
      close(original_);
    }
  }
  SmallMtuLoopback(const SmallMtuLoopback &) = delete;
  SmallMtuLoopback &operator=(const SmallMtuLoopback &) = delete;

  /// Empty when the namespace is ready.
  [[nodiscard]] const std::string &why() const { return why_; }

private:
  int original_ = -1;
  bool entered_ = false;
  std::string why_;
};

size_t occurrences(const std::string &text, const std::string &what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

// A route that refuses GSO: the generator warns once, goes on with one datagram per message,
// and loses nothing (the refused call is sent again datagram by datagram).
TEST(UdpgenProcess, GsoRefusedByTheRouteFallsBackToOneDatagramPerMessage) {
  const SmallMtuLoopback space;
  if (!space.why().empty()) {
    GTEST_SKIP() << "no network namespace of our own: " << space.why();
  }
  LoopbackReceiver receiver;
  if (receiver.rcvbufBytes() < bufferNeed(300, 8972)) {
    GTEST_SKIP() << "receive buffer " << receiver.rcvbufBytes() << " B is too small; run as root";
  }
  const Finished run = runUdpgen({"-p", std::to_string(receiver.port()), "-s", "8972", "-n",
                                  "300", "--gso", "7", "--json", "-q"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_EQ(occurrences(run.err, "the kernel refused a UDP GSO send"), 1U) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json.at("gso_segments").get<uint32_t>(), 1U) << run.out;
  EXPECT_EQ(json.at("sent").get<uint64_t>(), 300U) << run.out;
  const std::vector<Datagram> got = receiver.collect(300);
  ASSERT_EQ(got.size(), 300U);
  for (uint64_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].sizeBytes, 8972U) << "datagram " << i;
    ASSERT_EQ(got[i].sequence, i) << "datagram " << i;
  }
}

TEST(UdpgenProcess, GsoClampIsAnnounced) {
  LoopbackReceiver receiver;
  const Finished run = runUdpgen(
      {"-p", std::to_string(receiver.port()), "-s", "8972", "-n", "7", "--gso", "64", "-q"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  EXPECT_NE(run.err.find("--gso 64 clamped to 7"), std::string::npos) << run.err;
  EXPECT_EQ(receiver.collect(7).size(), 7U);
}

TEST(UdpgenProcess, SigintEndsTheRunWithASummary) {
  LoopbackReceiver receiver;
  UdpgenProcess udpgen(
      {"-p", std::to_string(receiver.port()), "-s", "64", "--pps", "1000", "--json", "-q"});
  ASSERT_TRUE(receiver.waitReadable(10'000)) << "udpgen sent nothing";
  udpgen.interrupt();
  const Finished run = udpgen.finish();
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  const auto sent = json.at("sent").get<uint64_t>();
  EXPECT_GE(sent, 1U);
  EXPECT_EQ(json.at("next_sequence").get<uint64_t>(), sent);
  const std::vector<Datagram> got = receiver.collect(sent);
  ASSERT_EQ(got.size(), sent);
  for (uint64_t i = 0; i < sent; ++i) {
    EXPECT_EQ(got[i].sequence, i);
  }
}

TEST(UdpgenProcess, NobodyListeningIsCountedNotFatal) {
  uint16_t port = 0;
  {
    LoopbackReceiver closed;
    port = closed.port();
  }
  const Finished run = runUdpgen({"-p", std::to_string(port), "-s", "64", "-n", "500", "--json"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_GE(json.at("errors").at("econnrefused").get<uint64_t>(), 1U);
  EXPECT_EQ(json.at("sent").get<uint64_t>() + json.at("errors").at("total").get<uint64_t>(), 500U);
  EXPECT_EQ(json.at("next_sequence").get<uint64_t>(), 500U);
  EXPECT_NE(run.err.find("ECONNREFUSED"), std::string::npos) << run.err;
}

/// Hang bound of the replay tests: far beyond what they take; reaching it is the failure.
constexpr int kHangBoundMs = 30'000;

/// A capture of datagrams carrying sequence numbers 0.. to `port`, at the given capture times.
std::string writeCapture(const std::string &name, uint16_t port, const std::vector<int64_t> &timesNs) {
  const std::string path = "/tmp/udpgen-test-" + std::to_string(getpid()) + "-" + name + ".pcap";
  PcapWriter writer(path, 40000, port);
  std::vector<uint8_t> payload(64, 0);
  for (size_t i = 0; i < timesNs.size(); ++i) {
    payload[0] = static_cast<uint8_t>(i);
    writer.write(payload, timesNs[i]);
  }
  return path;
}

// The second record 10 years after the first: a stop signal still ends the replay at once
// (it used to sleep through the whole gap in one sleep_for).
TEST(UdpgenReplay, SigtermEndsAWaitForAFarCaptureTime) {
  LoopbackReceiver receiver;
  constexpr int64_t kTenYearsNs = int64_t{10} * 365 * 24 * 3600 * kNsPerSec;
  const int64_t t0 = int64_t{1'700'000'000} * kNsPerSec;
  const std::string capture = writeCapture("gap", receiver.port(), {t0, t0 + kTenYearsNs});
  for (const int sig : {SIGTERM, SIGINT}) {
    UdpgenProcess udpgen({"--pcap", capture, "-p", std::to_string(receiver.port()), "--json"});
    ASSERT_TRUE(receiver.waitReadable(kHangBoundMs)) << "the first datagram never came";
    ASSERT_EQ(receiver.collect(1).size(), 1U);
    kill(udpgen.pid(), sig); // udpgen now waits for the second record's time
    const Finished run = udpgen.finish(kHangBoundMs);
    ASSERT_NE(run.exitCode, -1) << "udpgen ignored signal " << sig << " in a long wait";
    EXPECT_EQ(run.exitCode, 0) << run.err;
    EXPECT_EQ(nlohmann::json::parse(run.out).at("sent").get<uint64_t>(), 1U) << run.out;
  }
  std::remove(capture.c_str());
}

// Nothing in the capture passes the filter: said once, exit 1, instead of reading the file
// again and again (--loop 0) at 100 % CPU.
TEST(UdpgenReplay, ACaptureWithNothingToSendIsAnError) {
  LoopbackReceiver receiver;
  const int64_t t0 = int64_t{1'700'000'000} * kNsPerSec;
  const std::string capture = writeCapture("nothing", receiver.port(), {t0, t0 + kNsPerMs});
  const Finished run = UdpgenProcess({"--pcap", capture, "--pcap-filter", "port 1", "--loop", "0",
                                      "-p", std::to_string(receiver.port())})
                           .finish(kHangBoundMs);
  ASSERT_NE(run.exitCode, -1) << "udpgen --loop 0 with nothing to send did not end";
  EXPECT_EQ(run.exitCode, 1) << run.err;
  EXPECT_NE(run.err.find("--pcap " + capture + ": nothing to send"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("--pcap-filter 'port 1'"), std::string::npos) << run.err;
  EXPECT_FALSE(receiver.waitReadable(0));
  std::remove(capture.c_str());
}

// --stopafter ends an endless (--loop 0) replay, as it ends every other udpgen run.
TEST(UdpgenReplay, StopafterEndsAnEndlessReplay) {
  LoopbackReceiver receiver;
  const int64_t t0 = int64_t{1'700'000'000} * kNsPerSec;
  const std::string capture = writeCapture("loop", receiver.port(), {t0, t0 + 1, t0 + 2});
  const Finished run =
      UdpgenProcess({"--pcap", capture, "--loop", "0", "--stopafter", "0.3", "--pps", "1000",
                     "-p", std::to_string(receiver.port()), "--json"})
          .finish(kHangBoundMs);
  ASSERT_NE(run.exitCode, -1) << "--stopafter was ignored by the replay";
  EXPECT_EQ(run.exitCode, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_GE(json.at("sent").get<uint64_t>(), 1U);
  EXPECT_EQ(receiver.collect(json.at("sent").get<uint64_t>()).size(),
            json.at("sent").get<uint64_t>());
  std::remove(capture.c_str());
}

/// A capture whose datagrams test --pcap's grouping: each carries its index in its first 8
/// bytes and a pattern of the index after it; the sizes come in runs that a GSO message must
/// hold (7 jumbo datagrams by bytes, 64 small ones by count), end with a shorter datagram,
/// and break at a larger one.
struct MixedCapture {
  std::string path;
  std::vector<std::vector<uint8_t>> payloads;
};

MixedCapture writeMixedCapture(const std::string &name, uint16_t port) {
  std::vector<uint32_t> sizes;
  const auto run = [&](uint32_t size, int count) { sizes.insert(sizes.end(), count, size); };
  run(8972, 20); // messages of 7, 7 and 6 jumbo datagrams; the 100 B one ends the third
  run(100, 4);   // then 3 x 100 B, a 200 B one starts a message that a 64 B one ends
  run(200, 1);
  run(64, 70);   // 69 x 64 B more: 64 in one message, 5 in the next
  run(65507, 1); // the largest, alone
  run(8, 1);     // no room after it: a message of its own
  run(1472, 5);  // 5 x 1472 and 1000 B in one message, the next 1472 in a new one
  run(1000, 1);
  run(1472, 1);
  MixedCapture capture;
  capture.path = "/tmp/udpgen-test-" + std::to_string(getpid()) + "-" + name + ".pcap";
  PcapWriter writer(capture.path, 40000, port);
  const int64_t t0 = int64_t{1'700'000'000} * kNsPerSec;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<uint8_t> payload(sizes[i]);
    for (size_t j = 0; j < payload.size(); ++j) {
      payload[j] = j < 8 ? static_cast<uint8_t>(i >> (8 * j)) : static_cast<uint8_t>(i * 31 + j);
    }
    writer.write(payload, t0 + static_cast<int64_t>(i));
    capture.payloads.push_back(std::move(payload));
  }
  return capture;
}

/// Messages writeMixedCapture's datagrams make per pass with --gso 64 (see its comments).
constexpr uint64_t kMixedMessages = 11;

/// Replays `capture` twice, unpaced, with --gso 64 --batch 4 into `receiver`; every datagram
/// must arrive once, in order, byte for byte. `run` gets udpgen's output (--json).
void replayTwiceByteForByte(LoopbackReceiver &receiver, const MixedCapture &capture,
                            Finished &run) {
  const uint64_t n = capture.payloads.size();
  run = UdpgenProcess({"--pcap", capture.path, "--speed", "0", "--loop", "2", "--gso", "64",
                       "--batch", "4", "-p", std::to_string(receiver.port()), "--json"})
            .finish(kHangBoundMs);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const std::vector<Datagram> got = receiver.collect(2 * n);
  ASSERT_EQ(got.size(), 2 * n);
  for (uint64_t i = 0; i < got.size(); ++i) {
    const std::vector<uint8_t> &want = capture.payloads[i % n];
    ASSERT_EQ(got[i].sizeBytes, want.size()) << "datagram " << i;
    ASSERT_EQ(got[i].hash, payloadHash(want.data(), want.size())) << "datagram " << i;
  }
}

// Unpaced with --gso and --batch: every datagram arrives once, in order, byte for byte, in the
// grouping the comments of writeMixedCapture give; a pass ends its last call.
TEST(UdpgenReplay, GsoMessagesAndBatchesDeliverEveryDatagramByteForByte) {
  LoopbackReceiver receiver;
  const MixedCapture capture = writeMixedCapture("mixed", receiver.port());
  const uint64_t n = capture.payloads.size();
  if (receiver.rcvbufBytes() < bufferNeed(2 * n, 65507)) {
    GTEST_SKIP() << "receive buffer " << receiver.rcvbufBytes() << " B is too small; run as root";
  }
  Finished run;
  ASSERT_NO_FATAL_FAILURE(replayTwiceByteForByte(receiver, capture, run));
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json.at("sent").get<uint64_t>(), 2 * n);
  EXPECT_EQ(json.at("send_errors").get<uint64_t>(), 0U);
  EXPECT_EQ(json.at("messages").get<uint64_t>(), 2 * kMixedMessages) << run.out;
  EXPECT_EQ(json.at("send_calls").get<uint64_t>(), 2 * ((kMixedMessages + 3) / 4)) << run.out;
  std::remove(capture.path.c_str());
}

// Paced (--pps), the same datagrams arrive in the same order: a batch holds only datagrams
// already due, and a burst after falling behind stays within a millisecond of the rate.
TEST(UdpgenReplay, PacedGsoReplayDeliversEveryDatagramInOrder) {
  LoopbackReceiver receiver;
  const MixedCapture capture = writeMixedCapture("paced", receiver.port());
  const uint64_t n = capture.payloads.size();
  if (receiver.rcvbufBytes() < bufferNeed(n, 65507)) {
    GTEST_SKIP() << "receive buffer " << receiver.rcvbufBytes() << " B is too small; run as root";
  }
  const Finished run = UdpgenProcess({"--pcap", capture.path, "--pps", "20000", "--gso", "64",
                                      "-p", std::to_string(receiver.port()), "--json"})
                           .finish(kHangBoundMs);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const std::vector<Datagram> got = receiver.collect(n);
  ASSERT_EQ(got.size(), n);
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i].hash, payloadHash(capture.payloads[i].data(), capture.payloads[i].size()))
        << "datagram " << i;
  }
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json.at("sent").get<uint64_t>(), n);
  EXPECT_GE(json.at("messages").get<uint64_t>(), kMixedMessages);
  EXPECT_LE(json.at("messages").get<uint64_t>(), n);
  std::remove(capture.path.c_str());
}

// Nobody listening: the replay goes on, and its summary splits the refused datagrams by errno
// as the generator's does; every datagram is either sent or refused.
TEST(UdpgenReplay, RefusedDatagramsAreCountedByErrno) {
  uint16_t port = 0;
  {
    LoopbackReceiver closed;
    port = closed.port();
  }
  // Small datagrams: the kernel answered none of a few hundred 8972-byte ones with an ICMP
  // error here, while 64-byte ones get theirs (within ICMP's rate limit).
  const std::string path = "/tmp/udpgen-test-" + std::to_string(getpid()) + "-closed.pcap";
  const uint64_t n = 500;
  {
    PcapWriter writer(path, 40000, port);
    for (uint64_t i = 0; i < n; ++i) {
      writer.write(std::vector<uint8_t>(64, static_cast<uint8_t>(i)),
                   int64_t{1'700'000'000} * kNsPerSec + static_cast<int64_t>(i));
    }
  }
  const Finished run =
      UdpgenProcess({"--pcap", path, "--speed", "0", "-p", std::to_string(port), "--json"})
          .finish(kHangBoundMs);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  const nlohmann::json &errors = json.at("errors");
  EXPECT_GE(errors.at("econnrefused").get<uint64_t>(), 1U) << run.out;
  EXPECT_EQ(errors.at("other").get<uint64_t>(), 0U) << run.out;
  EXPECT_EQ(errors.at("total").get<uint64_t>(), json.at("send_errors").get<uint64_t>());
  EXPECT_EQ(json.at("sent").get<uint64_t>() + errors.at("total").get<uint64_t>(), n) << run.out;
  std::remove(path.c_str());
}

// A route that refuses GSO: the replay warns once and sends the held batch and the rest of the
// capture one datagram per message, every datagram once, in order, byte for byte.
TEST(UdpgenReplay, GsoRefusedByTheRouteFallsBackToOneDatagramPerMessage) {
  const SmallMtuLoopback space;
  if (!space.why().empty()) {
    GTEST_SKIP() << "no network namespace of our own: " << space.why();
  }
  LoopbackReceiver receiver;
  const MixedCapture capture = writeMixedCapture("refused", receiver.port());
  const uint64_t n = capture.payloads.size();
  if (receiver.rcvbufBytes() < bufferNeed(2 * n, 65507)) {
    GTEST_SKIP() << "receive buffer " << receiver.rcvbufBytes() << " B is too small; run as root";
  }
  Finished run;
  ASSERT_NO_FATAL_FAILURE(replayTwiceByteForByte(receiver, capture, run));
  EXPECT_EQ(occurrences(run.err, "the kernel refused a UDP GSO send"), 1U) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json.at("sent").get<uint64_t>(), 2 * n);
  EXPECT_EQ(json.at("send_errors").get<uint64_t>(), 0U);
  EXPECT_EQ(json.at("messages").get<uint64_t>(), 2 * n) << run.out;
  std::remove(capture.path.c_str());
}

TEST(UdpgenProcess, BadSizeIsRefusedByValue) {
  const Finished run = runUdpgen({"--size", "7", "-n", "1"});
  EXPECT_NE(run.exitCode, 0);
  EXPECT_NE(run.err.find("--size"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("7"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
}

TEST(UdpgenProcess, BadRateIsRefusedByValue) {
  const Finished run = runUdpgen({"--bitrate", "10X", "-n", "1"});
  EXPECT_NE(run.exitCode, 0);
  EXPECT_NE(run.err.find("'10X'"), std::string::npos) << run.err;
}

TEST(UdpgenProcess, RateAndPpsTogetherAreRefused) {
  const Finished run = runUdpgen({"--bitrate", "1G", "--pps", "10", "-n", "1"});
  EXPECT_NE(run.exitCode, 0);
  EXPECT_NE(run.err.find("--pps"), std::string::npos) << run.err;
}

// --ip, --rate and --duration work for one more release, each with a warning naming its
// replacement (docs/tools.md, "Option vocabulary").
TEST(UdpgenProcess, OldSpellingsStillWorkAndWarn) {
  LoopbackReceiver receiver;
  const Finished run = runUdpgen({"--ip", "127.0.0.1", "-p", std::to_string(receiver.port()), "-s",
                                  "1000", "--rate", "8M", "--duration", "0.2", "--json", "-q"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_DOUBLE_EQ(json.at("target_pps").get<double>(), 1000.0) << "--rate 8M of 1000 B datagrams";
  EXPECT_GE(json.at("seconds").get<double>(), 0.15) << "--duration 0.2";
  EXPECT_LT(json.at("seconds").get<double>(), 10.0) << "--duration 0.2";
  EXPECT_GT(json.at("sent").get<uint64_t>(), 0U);
  EXPECT_TRUE(receiver.waitReadable(10'000)) << "nothing arrived at --ip 127.0.0.1";
  for (const char *line :
       {"warning: --ip is deprecated and goes in the next release; use -i/--dip",
        "warning: --rate is deprecated and goes in the next release; use --bitrate",
        "warning: --duration is deprecated and goes in the next release; use "
        "--stopafter"}) {
    EXPECT_NE(run.err.find(line), std::string::npos) << line << " missing in\n" << run.err;
  }
}

TEST(UdpgenProcess, TheoryPrintsTable1) {
  const Finished run = runUdpgen({"--theory"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  for (const char *cell : {"14.881", "8.446", "0.813", "0.138", "98.8", "0.7", "9018", "9.927"}) {
    EXPECT_NE(run.out.find(cell), std::string::npos) << cell << " missing in\n" << run.out;
  }
  const Finished at1G = runUdpgen({"--theory", "--link", "1G"});
  ASSERT_EQ(at1G.exitCode, 0) << at1G.err;
  EXPECT_NE(at1G.out.find("1.488"), std::string::npos) << at1G.out;
}

TEST(UdpgenProcess, DocsShowTheCurrentTheoryTable) {
  const Finished run = runUdpgen({"--theory"});
  ASSERT_EQ(run.exitCode, 0) << run.err;
  std::ifstream doc(EFU_SOURCE_DIR "/docs/udpgen.md");
  ASSERT_TRUE(doc) << "cannot read docs/udpgen.md";
  std::stringstream text;
  text << doc.rdbuf();
  EXPECT_NE(text.str().find(run.out), std::string::npos)
      << "docs/udpgen.md is stale; paste the output of `udpgen --theory`:\n"
      << run.out;
}

} // namespace
} // namespace efu::test
