// SPDX-License-Identifier: BSD-2-Clause
// GraphiteOutput: the plaintext lines on a real loopback TCP listener, what happens while
// nobody listens (counted failures, intervals kept and delivered in order afterwards), and
// against a listener that accepts and resets (nothing counted as sent, the log rate-limited).
#include "efu/GraphiteOutput.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/ringbuffer_sink.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace efu {
namespace {

/// Polls `done` for up to 20 s (only a failing test waits that long).
template <typename Done> bool eventually(Done done) {
  const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done() && std::chrono::steady_clock::now() < giveUp) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

/// A carbon stand-in: accepts connections on 127.0.0.1 and collects what they send.
class Listener {
public:
  explicit Listener(uint16_t port = 0) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr *>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~Listener() {
    if (client_ >= 0) {
      ::close(client_);
    }
    ::close(fd_);
  }
  [[nodiscard]] uint16_t port() const { return port_; }

  /// Accepts if needed and appends what has arrived; returns everything received so far.
  const std::string &received() {
    pollfd p{fd_, POLLIN, 0};
    if (client_ < 0 && ::poll(&p, 1, 0) == 1) {
      client_ = ::accept(fd_, nullptr, nullptr);
    }
    char buffer[4096];
    while (client_ >= 0) {
      const ssize_t n = ::recv(client_, buffer, sizeof(buffer), MSG_DONTWAIT);
      if (n <= 0) {
        break;
      }
      text_.append(buffer, static_cast<size_t>(n));
    }
    return text_;
  }

  /// Resets the accepted connection (SO_LINGER 0: RST, not FIN); the next received() accepts
  /// the next one.
  void resetClient() {
    ASSERT_GE(client_, 0);
    const linger reset{1, 0};
    ::setsockopt(client_, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
    ::close(client_);
    client_ = -1;
  }

private:
  int fd_;
  int client_ = -1;
  uint16_t port_ = 0;
  std::string text_;
};

/// A carbon that is not one: accepts every connection and resets it at once (SO_LINGER 0),
/// reading nothing. Whatever is written to it is lost.
class ResettingListener {
public:
  ResettingListener() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr *>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{fd_, POLLIN, 0};
        if (::poll(&p, 1, 20) != 1) {
          continue;
        }
        const int client = ::accept(fd_, nullptr, nullptr);
        if (client < 0) {
          continue;
        }
        // Counted before the reset: the reset wakes the sender, which may look at the count.
        ++accepted_;
        const linger reset{1, 0};
        ::setsockopt(client, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
        ::close(client);
      }
    });
  }
  ~ResettingListener() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  [[nodiscard]] uint16_t port() const { return port_; }
  [[nodiscard]] int accepted() const { return accepted_; }

private:
  int fd_;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

class GraphiteOutputTest : public ::testing::Test {
protected:
  GraphiteOutputTest()
      : log_("graphite", std::make_shared<spdlog::sinks::null_sink_st>()),
        packets_(stats_.add("receive.packets")) {
    packets_.set(42);
    stats_.add("parser.essheader.ok").set(-3);
  }
  int64_t value(const char *name) { return stats_.find(name)->get(); }

  Stats stats_;
  spdlog::logger log_;
  Counter &packets_;
};

TEST_F(GraphiteOutputTest, OneLinePerCounterWithPrefixAndTime) {
  Listener carbon;
  GraphiteOutput graphite({"127.0.0.1", carbon.port(), "efu.loki.0."}, stats_, log_);
  graphite.publish(1'700'000'000);
  const std::string expected = "efu.loki.0.receive.packets 42 1700000000\n"
                               "efu.loki.0.parser.essheader.ok -3 1700000000\n"
                               "efu.loki.0.graphite.sent 0 1700000000\n"
                               "efu.loki.0.graphite.failures 0 1700000000\n"
                               "efu.loki.0.graphite.dropped 0 1700000000\n";
  EXPECT_TRUE(eventually([&] { return carbon.received() == expected; })) << carbon.received();
  // Written is not yet sent: only a later round finding the connection intact confirms it.
  EXPECT_EQ(value("graphite.sent"), 0);
  packets_.set(43);
  graphite.publish(1'700'000'001);
  EXPECT_TRUE(eventually([&] {
    return carbon.received().find("efu.loki.0.receive.packets 43 1700000001\n") != std::string::npos;
  })) << carbon.received();
  EXPECT_TRUE(eventually([&] { return value("graphite.sent") == 1; }));
  EXPECT_EQ(value("graphite.failures"), 0);
}

TEST_F(GraphiteOutputTest, IntervalsWaitForCarbonAndArriveInOrder) {
  uint16_t port = 0;
  {
    Listener probe; // a port that was free a moment ago, nobody listening now
    port = probe.port();
  }
  GraphiteOutput graphite({"127.0.0.1", port, "x."}, stats_, log_);
  graphite.publish(100);
  ASSERT_TRUE(eventually([&] { return value("graphite.failures") >= 1; }));
  graphite.publish(101);
  Listener carbon(port); // carbon comes up: the back-off retry delivers both
  EXPECT_TRUE(eventually(
      [&] { return carbon.received().find("x.receive.packets 42 101\n") != std::string::npos; }));
  graphite.publish(102); // the next round confirms both
  EXPECT_TRUE(eventually([&] { return value("graphite.sent") == 2; }));
  const std::string &text = carbon.received();
  const auto first = text.find("x.receive.packets 42 100\n");
  const auto second = text.find("x.receive.packets 42 101\n");
  ASSERT_NE(first, std::string::npos) << text;
  ASSERT_NE(second, std::string::npos) << text;
  EXPECT_LT(first, second);
  EXPECT_EQ(value("graphite.dropped"), 0);
}

TEST_F(GraphiteOutputTest, ACarbonThatAcceptsAndResetsGetsNothingCountedAsSent) {
  // Seen in the field: graphite.sent counted 90 while the sink had received 0 bytes, because a
  // write into the kernel's buffer passed for delivery.
  ResettingListener sink;
  GraphiteOutput graphite({"127.0.0.1", sink.port(), "x."}, stats_, log_);
  graphite.publish(100);
  ASSERT_TRUE(eventually([&] { return value("graphite.failures") >= 1; }))
      << "sent " << value("graphite.sent") << ", accepted " << sink.accepted();
  graphite.publish(101); // a later round: nothing to confirm, the retry (after 1 s) fails again
  ASSERT_TRUE(eventually([&] { return value("graphite.failures") >= 2; }));
  EXPECT_EQ(value("graphite.sent"), 0);
  EXPECT_GE(sink.accepted(), 2) << "it did connect, and was reset";
  EXPECT_EQ(value("graphite.dropped"), 0) << "the lost intervals wait to be sent again";
}

TEST_F(GraphiteOutputTest, AResetWhileIdleIsSeenAtOnceAndTheIntervalSentAgain) {
  Listener carbon;
  GraphiteOutput graphite({"127.0.0.1", carbon.port(), "x.", 1, 1, 10'000}, stats_, log_);
  const std::string line = "x.receive.packets 42 100\n";
  const auto copies = [&] {
    size_t n = 0;
    for (size_t at = carbon.received().find(line); at != std::string::npos;
         at = carbon.received().find(line, at + 1)) {
      ++n;
    }
    return n;
  };
  graphite.publish(100);
  ASSERT_TRUE(eventually([&] { return copies() == 1; })) << carbon.received();
  // Carbon resets the connection after reading: nothing can say the interval was kept, so it
  // counts as a failure (seen while idle, not at the next interval) and goes again.
  carbon.resetClient();
  EXPECT_TRUE(eventually([&] { return value("graphite.failures") == 1; }));
  EXPECT_TRUE(eventually([&] { return copies() == 2; })) << carbon.received();
  EXPECT_EQ(value("graphite.sent"), 0);
  graphite.publish(101); // the new connection has outlived the resent interval
  EXPECT_TRUE(eventually([&] { return value("graphite.sent") == 1; }));
  EXPECT_TRUE(eventually([&] {
    return carbon.received().find("x.receive.packets 42 101\n") != std::string::npos;
  })) << carbon.received();
  EXPECT_EQ(value("graphite.failures"), 1);
}

TEST_F(GraphiteOutputTest, ProblemsAreLoggedAtMostOncePerInterval) {
  // 19 lines in 10 s against the resetting sink before; now one line, however many failures.
  auto lines = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000);
  spdlog::logger log("graphite", lines);
  ResettingListener sink;
  {
    GraphiteOutput graphite({"127.0.0.1", sink.port(), "x.", 1, 1, 3'600'000}, stats_, log);
    graphite.publish(100);
    ASSERT_TRUE(eventually([&] { return value("graphite.failures") >= 30; }));
    const auto logged = lines->last_formatted();
    ASSERT_EQ(logged.size(), 1U) << logged.back();
    EXPECT_NE(logged[0].find("Graphite 127.0.0.1:" + std::to_string(sink.port())),
              std::string::npos)
        << logged[0];
    EXPECT_NE(logged[0].find("graphite.failures"), std::string::npos) << logged[0];
  }
  // Stopping says how many were held back.
  const auto logged = lines->last_formatted();
  ASSERT_EQ(logged.size(), 2U);
  EXPECT_NE(logged[1].find("further problem messages were not logged"), std::string::npos)
      << logged[1];
  EXPECT_EQ(value("graphite.sent"), 0);
}

} // namespace
} // namespace efu
