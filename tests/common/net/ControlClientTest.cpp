// SPDX-License-Identifier: BSD-2-Clause
// ControlClient against a fake control port: replies in pieces, the reply bound, one look at
// each byte.
#include "common/net/ControlClient.h"

#include "common/system/StopSignals.h"
#include "tests/support/FakeControlPort.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

namespace efu {
namespace {

using testkit::FakeControlPort;

TEST(ControlClient, OneReplyLinePerCommandWithoutLineEnds) {
  FakeControlPort port("STAT_GET_NAME a 1\r\nSTAT_GET_NAME b 2\nextra\n");
  const auto lines = controlExchange("127.0.0.1", port.port(), {"STAT_GET_NAME a", "x"});
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[0], "STAT_GET_NAME a 1");
  EXPECT_EQ(lines[1], "STAT_GET_NAME b 2");
  EXPECT_EQ(port.request(), "STAT_GET_NAME a");
}

TEST(ControlClient, AReplyThatArrivesInManyPiecesIsLookedAtOnce) {
  ControlReply reply(2, kMaxControlReplyBytes);
  const std::string chunk(4096, 'x');
  size_t total = 0;
  for (int i = 0; i < 1000; ++i) { // 4 MB of one line, as a REPORT_GET reply comes in
    ASSERT_TRUE(reply.append(chunk));
    total += chunk.size();
    EXPECT_FALSE(reply.complete());
    // Every byte is searched for the line end once: the old loop counted line ends over the
    // whole reply again for every piece (4 MB in 4 KB reads: 2 GB looked at).
    ASSERT_EQ(reply.bytesScanned(), total);
  }
  ASSERT_TRUE(reply.append("\nsecond"));
  EXPECT_FALSE(reply.complete());
  ASSERT_TRUE(reply.append("\r\n"));
  EXPECT_TRUE(reply.complete());
  EXPECT_EQ(reply.bytesScanned(), reply.size());
  const auto lines = reply.lines();
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[0].size(), total);
  EXPECT_EQ(lines[1], "second");
}

TEST(ControlClient, TheReplyBoundIsExact) {
  ControlReply reply(1, 10);
  EXPECT_TRUE(reply.append("0123456"));
  EXPECT_FALSE(reply.append("7890")) << "11 bytes";
  EXPECT_EQ(reply.size(), 7U) << "nothing of a refused piece is taken";
  EXPECT_TRUE(reply.append("78\n"));
  EXPECT_TRUE(reply.complete());
  EXPECT_EQ(reply.lines().front(), "012345678");
}

TEST(ControlClient, AReplyOverTheBoundIsRefusedNotCollected) {
  // 4 MiB without a line end, then the port closes: a bound of 1 MiB stops reading there.
  FakeControlPort port("REPORT_GET x ", std::string(64 * 1024, '['), 64);
  try {
    (void)controlExchange("127.0.0.1", port.port(), {"REPORT_GET x"}, 2000, 1 << 20);
    FAIL() << "a reply over the bound was taken";
  } catch (const ControlError &e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("answered 'REPORT_GET x' with more than 1048576 bytes"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("127.0.0.1:" + std::to_string(port.port())), std::string::npos)
        << message;
  }
}

TEST(ControlClient, ThePortClosingBeforeTheReplyIsNoAnswer) {
  FakeControlPort port("STAT_GET_COUNT 3"); // no line end
  try {
    (void)controlExchange("127.0.0.1", port.port(), {"STAT_GET_COUNT"});
    FAIL() << "accepted";
  } catch (const ControlError &e) {
    EXPECT_NE(std::string(e.what()).find("did not answer 'STAT_GET_COUNT'"), std::string::npos)
        << e.what();
  }
}

/// A port that takes connections (the kernel completes them) and never answers.
int silentPort(uint16_t &port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0 ||
      listen(fd, 4) != 0 || getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0) {
    return -1;
  }
  port = ntohs(addr.sin_port);
  return fd;
}

// Every wait of a tool wakes for a stop signal, even one the kernel hands to another thread:
// a control port that never answers, with a 10-minute timeout, and SIGTERM raised on a second
// thread once the connection is pending. In a child process (the stop cannot be undone).
TEST(ControlClient, AStopSignalOnAnotherThreadEndsTheWait) {
  EXPECT_EXIT(
      {
        installStopSignals();
        uint16_t port = 0;
        const int listener = silentPort(port);
        std::thread signaller([listener] {
          pollfd pfd{listener, POLLIN, 0};
          while (poll(&pfd, 1, -1) != 1) {
          }
          std::raise(SIGTERM); // to this thread, not to the one waiting in controlExchange
        });
        try {
          (void)controlExchange("127.0.0.1", port, {"STAT_GET_COUNT"}, 600'000);
        } catch (const ControlError &e) {
          signaller.join();
          std::fprintf(stderr, "%s\n", e.what());
          _exit(0);
        }
        _exit(1);
      },
      // The signal may come while the client still waits for the connection to complete.
      ::testing::ExitedWithCode(0),
      "stopped while (connecting to|waiting for) efu's control port");
}

} // namespace
} // namespace efu
