// SPDX-License-Identifier: BSD-2-Clause
// efu::Daemon in-process: build, serve until a stop reason, stop. The udp module is found in
// the build tree as the efu binary finds it; no Kafka; every socket on 127.0.0.1, ports chosen
// by the kernel. Waits poll a counter or a reply; a generous --stopafter only bounds a failing
// test (it then stops with the wrong reason instead of hanging).
#include "efu/Daemon.h"

#include "common/time/Time.h"
#include "efu/Options.h"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace efu {
namespace {

/// A failing test gives up after this long: it ends serve() with "--stopafter".
constexpr double kSafetyStopS = 60;

/// The daemon's options from `args` as efu parses them, on loopback with kernel-chosen ports
/// (the command line refuses port 0, so they are set after parsing).
DaemonOptions daemonOptions(std::vector<std::string> args) {
  CLI::App app{"efu"};
  DaemonOptions options;
  addDaemonOptions(app, options);
  std::vector<std::string> all{"-d", "udp", "--no-kafka", "--dip", "127.0.0.1"};
  all.insert(all.end(), args.begin(), args.end());
  std::reverse(all.begin(), all.end()); // CLI11 takes the vector reversed
  app.parse(all);
  options.dataPort = 0;
  options.cmdPort = 0;
  return options;
}

sockaddr_in loopback(uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

/// Connects to the control port, sends `line` and returns the reply line (blocking; the
/// daemon's serve() answers it on another thread).
std::string controlRequest(uint16_t port, const std::string &line) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  }
  const sockaddr_in addr = loopback(port);
  std::string reply;
  if (::connect(fd, reinterpret_cast<const sockaddr *>(&addr), sizeof(addr)) == 0) {
    const std::string request = line + "\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      std::array<char, 256> buffer{};
      while (reply.find('\n') == std::string::npos) {
        const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
        if (n <= 0) {
          break;
        }
        reply.append(buffer.data(), static_cast<size_t>(n));
      }
    }
  }
  ::close(fd);
  return reply;
}

/// Sends `count` datagrams of `size` bytes to 127.0.0.1:`port`; returns how many went out.
int sendDatagrams(uint16_t port, int count, size_t size) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return 0;
  }
  const sockaddr_in addr = loopback(port);
  const std::vector<char> payload(size, 'x');
  int sent = 0;
  for (int i = 0; i < count; ++i) {
    if (::sendto(fd, payload.data(), payload.size(), 0, reinterpret_cast<const sockaddr *>(&addr),
                 sizeof(addr)) == static_cast<ssize_t>(payload.size())) {
      ++sent;
    }
  }
  ::close(fd);
  return sent;
}

/// Polls `counter` until it reaches `target`; false if it has not after the safety bound.
bool waitForCount(const Counter &counter, int64_t target) {
  const int64_t giveUpNs = monotonicNs() + static_cast<int64_t>(kSafetyStopS * 1e9);
  while (counter.get() < target) {
    if (monotonicNs() >= giveUpNs) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(Daemon, StopAfterEndsServeAndStopExitsZero) {
  Daemon daemon(daemonOptions({"--stopafter", "0.2"}));
  const std::string reason = daemon.serve();
  EXPECT_EQ(reason, "--stopafter");
  EXPECT_EQ(daemon.stop(reason), 0);
}

TEST(Daemon, ExitOnTheControlPortEndsServe) {
  Daemon daemon(daemonOptions({"--stopafter", std::to_string(kSafetyStopS)}));
  ASSERT_NE(daemon.controlPort(), 0);
  // The listening socket exists since the constructor: the client connects through the
  // backlog and its request waits until serve() polls.
  std::string reply;
  std::thread client([&] { reply = controlRequest(daemon.controlPort(), "EXIT"); });
  const std::string reason = daemon.serve();
  client.join();
  EXPECT_EQ(reply, "<OK>\n");
  EXPECT_EQ(reason, "EXIT command");
  EXPECT_EQ(daemon.stop(reason), 0);
}

TEST(Daemon, RequestExitFromAnotherThreadEndsServe) {
  Daemon daemon(daemonOptions({"--stopafter", std::to_string(kSafetyStopS)}));
  std::string reason;
  std::thread server([&] { reason = daemon.serve(); });
  daemon.requestExit();
  server.join();
  EXPECT_EQ(reason, "EXIT command");
  EXPECT_EQ(daemon.stop(reason), 0);
}

TEST(Daemon, DatagramsAreReceivedAndProcessedBeforeStop) {
  constexpr int kDatagrams = 64;
  Daemon daemon(daemonOptions({"--stopafter", std::to_string(kSafetyStopS)}));
  ASSERT_NE(daemon.dataPort(), 0);
  const Counter *received = daemon.stats().find("receive.packets");
  const Counter *processed = daemon.stats().find("processing.packets");
  const Counter *bytes = daemon.stats().find("receive.bytes");
  ASSERT_NE(received, nullptr);
  ASSERT_NE(processed, nullptr);
  ASSERT_NE(bytes, nullptr);
  std::string reason;
  std::thread server([&] { reason = daemon.serve(); });
  // Sent before or after the rx thread starts, they wait in the socket's buffer (64 small
  // datagrams fit any receive buffer).
  const int sent = sendDatagrams(daemon.dataPort(), kDatagrams, 100);
  EXPECT_EQ(sent, kDatagrams);
  EXPECT_TRUE(waitForCount(*received, kDatagrams)) << "received " << received->get();
  daemon.requestExit();
  server.join();
  EXPECT_EQ(reason, "EXIT command");
  EXPECT_EQ(daemon.stop(reason), 0);
  // The stop drained the ring: the module saw every datagram, no more arrived.
  EXPECT_EQ(received->get(), kDatagrams);
  EXPECT_EQ(processed->get(), kDatagrams);
  EXPECT_EQ(bytes->get(), int64_t{kDatagrams} * 100);
}

} // namespace
} // namespace efu
