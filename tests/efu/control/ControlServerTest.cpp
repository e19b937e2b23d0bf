// SPDX-License-Identifier: BSD-2-Clause
// ControlServer on 127.0.0.1 (port 0): clients are non-blocking sockets in the test thread,
// which also drives poll(); every wait is a bounded loop over poll(), never a sleep.
#include "efu/control/ControlServer.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace efu {
namespace {

// poll(10 ms) per iteration: a generous bound that only matters when a test is failing.
constexpr int kMaxIterations = 2000;
constexpr int kPollMs = 10;

bool pumpUntil(ControlServer &server, const std::function<bool()> &done) {
  for (int i = 0; i < kMaxIterations; ++i) {
    if (done()) {
      return true;
    }
    server.poll(kPollMs);
  }
  return done();
}

/// A loopback client socket, connected (blocking) and then switched to non-blocking.
class TestClient {
public:
  explicit TestClient(uint16_t port, int rcvbufBytes = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    }
    if (rcvbufBytes > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbufBytes, sizeof(rcvbufBytes));
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    // Completes through the listen backlog, before the server accepts.
    if (::connect(fd_, reinterpret_cast<const sockaddr *>(&addr), sizeof(addr)) != 0) {
      const int error = errno;
      ::close(fd_);
      throw std::runtime_error(std::string("connect: ") + std::strerror(error));
    }
  }
  ~TestClient() { close(); }
  TestClient(const TestClient &) = delete;
  TestClient &operator=(const TestClient &) = delete;

  void close() {
    if (fd_ >= 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  void shutdownWrite() { ::shutdown(fd_, SHUT_WR); }

  /// Sends all of `data`, letting the server run while the socket is full.
  void send(ControlServer &server, std::string_view data) {
    ASSERT_TRUE(pumpUntil(server, [&] {
      while (!data.empty()) {
        const ssize_t sent = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent <= 0) {
          return false;
        }
        data.remove_prefix(static_cast<size_t>(sent));
      }
      return true;
    }));
  }

  /// Sends what the socket takes right now; returns the bytes sent.
  size_t trySend(std::string_view data) {
    const ssize_t sent = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    return sent > 0 ? static_cast<size_t>(sent) : 0;
  }

  /// Reads what has arrived; false once the connection is closed (EOF or reset).
  bool drain() {
    char buffer[4096];
    for (;;) {
      const ssize_t got = ::recv(fd_, buffer, sizeof(buffer), MSG_DONTWAIT);
      if (got > 0) {
        received_.append(buffer, static_cast<size_t>(got));
        continue;
      }
      if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        closed_ = true;
      }
      return !closed_;
    }
  }

  /// The next complete reply line (without "\n"), pumping the server until it arrives.
  std::optional<std::string> readLine(ControlServer &server) {
    if (!pumpUntil(server, [&] {
          drain();
          return received_.find('\n') != std::string::npos || closed_;
        })) {
      return std::nullopt;
    }
    const size_t newline = received_.find('\n');
    if (newline == std::string::npos) {
      return std::nullopt;
    }
    std::string line = received_.substr(0, newline);
    received_.erase(0, newline + 1);
    return line;
  }

  /// Pumps the server until this client sees the connection closed.
  bool waitClosed(ControlServer &server) {
    return pumpUntil(server, [&] { return !drain(); });
  }

  std::string ask(ControlServer &server, const std::string &command) {
    send(server, command + "\n");
    return readLine(server).value_or("<no reply>");
  }

  [[nodiscard]] const std::string &received() const { return received_; }

private:
  int fd_ = -1;
  std::string received_;
  bool closed_ = false;
};

class ControlServerTest : public ::testing::Test {
protected:
  ControlServerTest() {
    stats_.add("receive.packets").set(42);
    ControlInfo info;
    info.version = "0.1.0";
    info.detectorInfo = "udp 1.0 test module";
    info.runtimeStats = [] { return std::string("uptime_s 1"); };
    info.requestExit = [this] { ++exitRequests_; };
    protocol_.emplace(stats_, std::move(info));
  }

  ControlServerOptions loopback() const {
    ControlServerOptions options;
    options.address = "127.0.0.1";
    options.port = 0;
    return options;
  }

  int64_t counter(std::string_view name) const {
    const Counter *found = stats_.find(name);
    return found != nullptr ? found->get() : -1;
  }

  Stats stats_;
  int exitRequests_ = 0;
  std::optional<ControlProtocol> protocol_;
};

TEST_F(ControlServerTest, PortZeroBindsAnEphemeralPortAndRegistersCounters) {
  ControlServer server(*protocol_, loopback(), stats_);
  EXPECT_NE(server.port(), 0);
  EXPECT_EQ(server.clientCount(), 0U);
  for (const char *name : {"control.connections", "control.commands", "control.errors",
                           "control.clients.dropped", "control.clients.evicted",
                           "control.clients.idle_closed", "control.auth_failures"}) {
    EXPECT_EQ(counter(name), 0) << name;
  }
}

TEST_F(ControlServerTest, AnswersCommands) {
  ControlServer server(*protocol_, loopback(), stats_);
  TestClient client(server.port());
  EXPECT_EQ(client.ask(server, "VERSION_GET"), "VERSION_GET 0.1.0");
  EXPECT_EQ(client.ask(server, "STAT_GET_NAME receive.packets"), "STAT_GET_NAME receive.packets 42");
  // The server's own counters live in the same registry.
  EXPECT_EQ(client.ask(server, "STAT_GET_COUNT"), "STAT_GET_COUNT 8");
  // A request is counted before it runs, so it sees itself.
  EXPECT_EQ(client.ask(server, "STAT_GET_NAME control.commands"),
            "STAT_GET_NAME control.commands 4");
  EXPECT_EQ(client.ask(server, "BOGUS"), "Error: <BADCMD>");
  EXPECT_EQ(client.ask(server, "STAT_GET 0"), "Error: <BADARGS>");
  EXPECT_EQ(counter("control.connections"), 1);
  EXPECT_EQ(counter("control.commands"), 6);
  EXPECT_EQ(counter("control.errors"), 2);
}

TEST_F(ControlServerTest, PipelinedCommandsAreAnsweredInOrder) {
  ControlServer server(*protocol_, loopback(), stats_);
  TestClient client(server.port());
  client.send(server, "VERSION_GET\r\nFOO\nSTAT_GET 1\n\nCMD_GET_COUNT\n");
  EXPECT_EQ(client.readLine(server), "VERSION_GET 0.1.0");
  EXPECT_EQ(client.readLine(server), "Error: <BADCMD>");
  EXPECT_EQ(client.readLine(server), "STAT_GET receive.packets 42");
  EXPECT_EQ(client.readLine(server), "Error: <BADCMD>");
  EXPECT_EQ(client.readLine(server), "CMD_GET_COUNT 14");
}

TEST_F(ControlServerTest, SeveralClientsAtOnce) {
  ControlServer server(*protocol_, loopback(), stats_);
  constexpr int kClients = 8;
  std::vector<std::unique_ptr<TestClient>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(std::make_unique<TestClient>(server.port()));
  }
  ASSERT_TRUE(pumpUntil(server, [&] { return server.clientCount() == kClients; }));
  // Every client has a request in flight before any reply is read.
  for (int i = 0; i < kClients; ++i) {
    clients[i]->send(server, "CMD_GET " + std::to_string(i + 1) + "\n");
  }
  for (int i = kClients - 1; i >= 0; --i) {
    const auto reply = clients[i]->readLine(server);
    ASSERT_TRUE(reply.has_value()) << i;
    EXPECT_EQ(*reply, "CMD_GET " + std::string(ControlProtocol::commands()[i]));
  }
  EXPECT_EQ(counter("control.connections"), kClients);
  clients.clear();
  EXPECT_TRUE(pumpUntil(server, [&] { return server.clientCount() == 0; }));
}

TEST_F(ControlServerTest, LineSentInPiecesIsHandledOnceComplete) {
  ControlServer server(*protocol_, loopback(), stats_);
  TestClient client(server.port());
  for (const char *piece : {"STAT_", "GET_CO", "UNT", "\r"}) {
    client.send(server, piece);
    for (int i = 0; i < 5; ++i) {
      server.poll(0);
    }
    client.drain();
    EXPECT_EQ(client.received(), "") << "replied before the newline, after " << piece;
  }
  client.send(server, "\nVERSION_");
  EXPECT_EQ(client.readLine(server), "STAT_GET_COUNT 8");
  client.send(server, "GET\n");
  EXPECT_EQ(client.readLine(server), "VERSION_GET 0.1.0");
  EXPECT_EQ(counter("control.commands"), 2);
}

TEST_F(ControlServerTest, OverLongLineIsRejectedOnceAndConnectionKept) {
  ControlServer server(*protocol_, loopback(), stats_);
  const size_t limit = server.options().maxLineBytes;
  TestClient client(server.port());

  // Arrives in several pieces, the newline much later than the limit.
  const std::string junk(limit * 3, 'X');
  for (size_t offset = 0; offset < junk.size(); offset += 1000) {
    client.send(server, std::string_view(junk).substr(offset, 1000));
    server.poll(0);
  }
  client.send(server, "\nVERSION_GET\n");
  EXPECT_EQ(client.readLine(server), "Error: <BADSIZE>");
  EXPECT_EQ(client.readLine(server), "VERSION_GET 0.1.0");

  // Over-long by one byte inside a single send, followed by a good command.
  client.send(server, std::string(limit + 1, 'Y') + "\nSTAT_GET 1\n");
  EXPECT_EQ(client.readLine(server), "Error: <BADSIZE>");
  EXPECT_EQ(client.readLine(server), "STAT_GET receive.packets 42");

  // Exactly at the limit is a normal (here: unknown) command.
  client.send(server, std::string(limit, 'Z') + "\n");
  EXPECT_EQ(client.readLine(server), "Error: <BADCMD>");

  EXPECT_EQ(counter("control.errors"), 3);
  EXPECT_EQ(server.clientCount(), 1U);
}

TEST_F(ControlServerTest, ClientDisconnectingMidLineIsForgotten) {
  ControlServer server(*protocol_, loopback(), stats_);
  TestClient other(server.port());
  {
    TestClient leaving(server.port());
    ASSERT_TRUE(pumpUntil(server, [&] { return server.clientCount() == 2; }));
    leaving.send(server, "EXIT"); // no newline: must never run
    server.poll(0);
  }
  ASSERT_TRUE(pumpUntil(server, [&] { return server.clientCount() == 1; }));
  EXPECT_EQ(exitRequests_, 0);
  EXPECT_EQ(counter("control.commands"), 0);
  EXPECT_EQ(other.ask(server, "VERSION_GET"), "VERSION_GET 0.1.0");
}

TEST_F(ControlServerTest, HalfClosedClientStillGetsItsReplies) {
  // What `nc -N` and `nc -q1` do: send, close the write side, wait for the answer.
  ControlServer server(*protocol_, loopback(), stats_);
  TestClient client(server.port());
  client.send(server, "VERSION_GET\nSTAT_GET_COUNT\n");
  client.shutdownWrite();
  EXPECT_EQ(client.readLine(server), "VERSION_GET 0.1.0");
  EXPECT_EQ(client.readLine(server), "STAT_GET_COUNT 8");
  EXPECT_TRUE(client.waitClosed(server));
  EXPECT_TRUE(pumpUntil(server, [&] { return server.clientCount() == 0; }));
}

TEST_F(ControlServerTest, ExitRepliesOkAndCallsBack) {
  ControlServer server(*protocol_, loopback(), stats_);
  TestClient client(server.port());
  client.send(server, "EXIT\n");
  // The reply is written within the poll() that ran the command, as the daemon may stop
  // polling right after.
  ASSERT_TRUE(pumpUntil(server, [&] { return exitRequests_ == 1; }));
  client.drain();
  EXPECT_EQ(client.received(), "<OK>\n");
}

TEST_F(ControlServerTest, ClientThatNeverReadsIsDroppedWhileOthersAreServed) {
  ControlInfo bulky;
  bulky.version = "0.1.0";
  bulky.detectorInfo = std::string(2000, 'd'); // every request earns a 2 kB reply
  ControlProtocol protocol(stats_, std::move(bulky));
  ControlServerOptions options = loopback();
  options.maxPendingReplyBytes = 64 * 1024;
  ControlServer server(protocol, options, stats_);

  TestClient silent(server.port(), 4096);
  TestClient polite(server.port());
  ASSERT_TRUE(pumpUntil(server, [&] { return server.clientCount() == 2; }));

  std::string burst;
  for (int i = 0; i < 64; ++i) {
    burst += "DETECTOR_INFO_GET\n";
  }
  size_t politeReplies = 0;
  bool dropped = false;
  for (int i = 0; i < kMaxIterations && !dropped; ++i) {
    silent.trySend(burst); // a partial send only garbles one request; it still gets a reply
    server.poll(0);
    const auto reply = polite.ask(server, "VERSION_GET");
    EXPECT_EQ(reply, "VERSION_GET 0.1.0");
    politeReplies += reply == "VERSION_GET 0.1.0" ? 1 : 0;
    dropped = counter("control.clients.dropped") == 1;
  }
  ASSERT_TRUE(dropped);
  EXPECT_GT(politeReplies, 0U);
  EXPECT_EQ(server.clientCount(), 1U);
  EXPECT_TRUE(silent.waitClosed(server));
  EXPECT_EQ(polite.ask(server, "STAT_GET_NAME control.clients.dropped"),
            "STAT_GET_NAME control.clients.dropped 1");
}

TEST_F(ControlServerTest, AClientBeyondTheCapEvictsTheQuietestOne) {
  ControlServerOptions options = loopback();
  options.maxClients = 2;
  ControlServer server(*protocol_, options, stats_);
  TestClient idle(server.port());
  ASSERT_TRUE(pumpUntil(server, [&] { return server.clientCount() == 1; }));
  TestClient active(server.port());
  ASSERT_TRUE(pumpUntil(server, [&] { return server.clientCount() == 2; }));
  EXPECT_EQ(active.ask(server, "VERSION_GET"), "VERSION_GET 0.1.0");

  TestClient third(server.port());
  EXPECT_EQ(third.ask(server, "VERSION_GET"), "VERSION_GET 0.1.0");
  EXPECT_EQ(idle.readLine(server), "Error: <TOOMANYCLIENTS>");
  EXPECT_TRUE(idle.waitClosed(server));
  EXPECT_EQ(counter("control.clients.evicted"), 1);
  EXPECT_EQ(active.ask(server, "VERSION_GET"), "VERSION_GET 0.1.0");
  EXPECT_EQ(server.clientCount(), 2U);
  EXPECT_EQ(counter("control.connections"), 3);
}

TEST_F(ControlServerTest, IdleClientsCannotLockOthersOut) {
  // The repro: every slot held by a connection that never sends anything.
  ControlServerOptions options = loopback();
  options.maxClients = 4;
  ControlServer server(*protocol_, options, stats_);
  std::vector<std::unique_ptr<TestClient>> squatters;
  for (size_t i = 0; i < 3 * options.maxClients; ++i) {
    squatters.push_back(std::make_unique<TestClient>(server.port()));
  }
  ASSERT_TRUE(pumpUntil(server, [&] {
    return counter("control.connections") == static_cast<int64_t>(squatters.size());
  }));
  TestClient operatorClient(server.port());
  EXPECT_EQ(operatorClient.ask(server, "STAT_GET_NAME receive.packets"), "STAT_GET_NAME receive.packets 42");
  EXPECT_EQ(counter("control.clients.evicted"), 2 * 4 + 1);
}

TEST_F(ControlServerTest, ClosesClientsIdleLongerThanTheTimeout) {
  ControlServerOptions options = loopback();
  options.idleTimeoutMs = 50;
  ControlServer server(*protocol_, options, stats_);
  TestClient quiet(server.port());
  EXPECT_TRUE(quiet.waitClosed(server));
  EXPECT_EQ(counter("control.clients.idle_closed"), 1);
  EXPECT_EQ(server.clientCount(), 0U);

  options.idleTimeoutMs = 0; // never
  Stats otherStats;
  ControlServer patient(*protocol_, options, otherStats);
  TestClient client(patient.port());
  ASSERT_TRUE(pumpUntil(patient, [&] { return patient.clientCount() == 1; }));
  for (int i = 0; i < 20; ++i) {
    patient.poll(kPollMs);
  }
  EXPECT_EQ(client.ask(patient, "VERSION_GET"), "VERSION_GET 0.1.0");
}

TEST_F(ControlServerTest, AWrongSecretIsAnsweredAndTheConnectionClosed) {
  ControlInfo info;
  info.version = "0.1.0";
  info.secret = "s3cret";
  info.requestExit = [this] { ++exitRequests_; };
  ControlProtocol guarded(stats_, std::move(info));
  ControlServer server(guarded, loopback(), stats_);

  TestClient guesser(server.port());
  // Pipelined after the wrong secret: must not run.
  guesser.send(server, "AUTH guess\nAUTH s3cret\nEXIT\n");
  EXPECT_EQ(guesser.readLine(server), "Error: <BADAUTH>");
  EXPECT_TRUE(guesser.waitClosed(server));
  EXPECT_EQ(guesser.received(), "");
  EXPECT_EQ(counter("control.auth_failures"), 1);
  EXPECT_EQ(exitRequests_, 0);

  TestClient owner(server.port());
  EXPECT_EQ(owner.ask(server, "EXIT"), "Error: <NOAUTH>");
  EXPECT_EQ(owner.ask(server, "AUTH s3cret"), "<OK>");
  EXPECT_EQ(owner.ask(server, "EXIT"), "<OK>");
  EXPECT_EQ(exitRequests_, 1);
}

TEST(ControlServerAddress, LoopbackIsTheWhole127NetAndColonColonOne) {
  for (const char *local : {"127.0.0.1", "127.1.2.3", "::1"}) {
    EXPECT_TRUE(isLoopback(local)) << local;
  }
  for (const char *remote : {"0.0.0.0", "10.0.0.1", "128.0.0.1", "::", "fe80::1", "localhost", ""}) {
    EXPECT_FALSE(isLoopback(remote)) << remote;
  }
}

TEST_F(ControlServerTest, BindFailureNamesAddressPortAndReason) {
  ControlServer server(*protocol_, loopback(), stats_);
  ControlServerOptions same = loopback();
  same.port = server.port();
  Stats otherStats; // the control counters may be registered once per registry
  try {
    ControlServer clash(*protocol_, same, otherStats);
    FAIL() << "a second server bound the same port";
  } catch (const std::runtime_error &error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("127.0.0.1:" + std::to_string(server.port())), std::string::npos)
        << message;
    EXPECT_NE(message.find(std::strerror(EADDRINUSE)), std::string::npos) << message;
  }
}

TEST_F(ControlServerTest, NonNumericAddressIsRefused) {
  ControlServerOptions options = loopback();
  options.address = "not-an-address";
  try {
    ControlServer server(*protocol_, options, stats_);
    FAIL() << "bound to a non-numeric address";
  } catch (const std::runtime_error &error) {
    EXPECT_NE(std::string(error.what()).find("not-an-address:0"), std::string::npos)
        << error.what();
  }
}

TEST_F(ControlServerTest, CountersRegisterOncePerRegistry) {
  ControlServer server(*protocol_, loopback(), stats_);
  EXPECT_THROW(ControlServer(*protocol_, loopback(), stats_), StatsError);
}

} // namespace
} // namespace efu
