// SPDX-License-Identifier: BSD-2-Clause
// The metrics HTTP server on a real loopback socket: the scrape, and every bad request.
#include "efu/metrics/MetricsServer.h"

#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace efu::metrics {
namespace {

using testkit::eventually;
using testkit::httpGet;
using testkit::parseHttpResponse;
using testkit::tcpExchange;

/// A connected client socket that the test drives byte by byte.
class RawClient {
public:
  explicit RawClient(uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval timeout{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) == 0;
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient &) = delete;
  RawClient &operator=(const RawClient &) = delete;

  [[nodiscard]] bool connected() const { return connected_; }
  void send(const std::string &text) const {
    ASSERT_EQ(::send(fd_, text.data(), text.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(text.size()));
  }
  /// Everything until the server closes (or the 10 s receive timeout).
  [[nodiscard]] std::string readAll() const {
    std::string out;
    char buffer[4096];
    for (ssize_t got; (got = ::recv(fd_, buffer, sizeof(buffer), 0)) > 0;) {
      out.append(buffer, static_cast<size_t>(got));
    }
    return out;
  }

private:
  int fd_;
  bool connected_ = false;
};

class MetricsServerTest : public ::testing::Test {
protected:
  MetricsServerOptions options(size_t maxClients = 16, int64_t timeoutMs = 5000) {
    MetricsServerOptions o;
    o.address = "127.0.0.1";
    o.port = 0;
    o.labels = {"loki", "3"};
    o.maxClients = maxClients;
    o.maxRequestBytes = 1024;
    o.timeoutMs = timeoutMs;
    return o;
  }
  int64_t value(const char *name) const { return stats_.find(name)->get(); }

  Stats stats_;
};

TEST_F(MetricsServerTest, GetMetricsAnswersTheExpositionAndCloses) {
  stats_.add("rx.packets").set(42);
  stats_.add("process.fds", CounterKind::Gauge).set(9);
  MetricsServer server(stats_, options());
  const auto response = httpGet(server.port(), "/metrics");
  ASSERT_EQ(response.status, 200) << response.head;
  EXPECT_EQ(response.header("Content-Type"), "text/plain; version=0.0.4");
  EXPECT_EQ(response.header("Connection"), "close");
  EXPECT_EQ(response.header("Content-Length"), std::to_string(response.body.size()));
  EXPECT_NE(response.body.find("efu_rx_packets_total{instrument=\"loki\",region=\"3\"} 42\n"),
            std::string::npos)
      << response.body;
  EXPECT_NE(response.body.find("# TYPE efu_process_fds gauge\n"), std::string::npos)
      << response.body;
  // The scrape counter is part of the registry, so a second scrape shows the first.
  const auto second = httpGet(server.port(), "/metrics?from=test");
  ASSERT_EQ(second.status, 200);
  EXPECT_NE(second.body.find("efu_metrics_scrapes_total{instrument=\"loki\",region=\"3\"} 1\n"),
            std::string::npos)
      << second.body;
  EXPECT_TRUE(eventually([&] { return value("metrics.scrapes") == 2; }));
  EXPECT_EQ(value("metrics.errors"), 0);
}

TEST_F(MetricsServerTest, OtherPathsMethodsAndMalformedRequestsAreRefused) {
  MetricsServer server(stats_, options());
  const struct {
    const char *request;
    int status;
  } cases[] = {
      {"GET / HTTP/1.1\r\n\r\n", 404},
      {"GET /metricsx HTTP/1.1\r\n\r\n", 404},
      {"GET /api/v1/query HTTP/1.0\r\n\r\n", 404},
      {"POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi", 405},
      {"HEAD /metrics HTTP/1.1\r\n\r\n", 405},
      {"DELETE /metrics HTTP/1.1\r\n\r\n", 405},
      {"hello\r\n\r\n", 400},
      {"GET /metrics\r\n\r\n", 400},
      {"GET /metrics HTTP/2.0\r\n\r\n", 400},
      {"GET /metrics HTTP/1.x\r\n\r\n", 400},
      {"GET  /metrics HTTP/1.1\r\n\r\n", 400},
      {"GET /metrics HTTP/1.1 extra\r\n\r\n", 400},
      {"\r\n\r\n", 400},
  };
  int errors = 0;
  for (const auto &c : cases) {
    const auto response = parseHttpResponse(tcpExchange(server.port(), c.request));
    EXPECT_EQ(response.status, c.status) << c.request;
    EXPECT_EQ(response.header("Connection"), "close") << c.request;
    if (c.status == 405) {
      EXPECT_EQ(response.header("Allow"), "GET") << c.request;
    }
    ++errors;
  }
  EXPECT_TRUE(eventually([&] { return value("metrics.errors") == errors; }))
      << value("metrics.errors");
  EXPECT_EQ(value("metrics.scrapes"), 0);
}

TEST_F(MetricsServerTest, BareLineFeedsAndARequestInPiecesAreServed) {
  MetricsServer server(stats_, options());
  EXPECT_EQ(parseHttpResponse(tcpExchange(server.port(), "GET /metrics HTTP/1.0\n\n")).status, 200);
  RawClient client(server.port());
  ASSERT_TRUE(client.connected());
  client.send("GET /met");
  client.send("rics HTTP/1.1\r\nHost: x\r\n");
  client.send("\r\n");
  EXPECT_EQ(parseHttpResponse(client.readAll()).status, 200);
}

TEST_F(MetricsServerTest, OneResponsePerConnectionEvenWhenRequestsArePipelined) {
  MetricsServer server(stats_, options());
  const std::string raw = tcpExchange(
      server.port(), "GET /metrics HTTP/1.1\r\n\r\nGET /metrics HTTP/1.1\r\n\r\n", true);
  EXPECT_EQ(raw.rfind("HTTP/1.1 200 OK\r\n", 0), 0U) << raw;
  EXPECT_EQ(raw.find("HTTP/1.1", 1), std::string::npos) << "a second response: " << raw;
}

TEST_F(MetricsServerTest, AnOverlongRequestGets431) {
  MetricsServer server(stats_, options());
  const std::string request =
      "GET /metrics HTTP/1.1\r\nX-Padding: " + std::string(4000, 'a') + "\r\n\r\n";
  const auto response = parseHttpResponse(tcpExchange(server.port(), request, true));
  EXPECT_EQ(response.status, 431) << response.head;
  EXPECT_TRUE(eventually([&] { return value("metrics.errors") == 1; }));
}

TEST_F(MetricsServerTest, AnIncompleteRequestTimesOutWith408) {
  MetricsServer server(stats_, options(16, 100));
  RawClient client(server.port());
  ASSERT_TRUE(client.connected());
  client.send("GET /metrics HTTP/1.1\r\n"); // never finished
  const auto response = parseHttpResponse(client.readAll());
  EXPECT_EQ(response.status, 408) << response.head;
}

TEST_F(MetricsServerTest, ANewcomerOverTheLimitIsServedAndTheQuietestConnectionMakesRoom) {
  MetricsServer server(stats_, options(2, 60'000));
  RawClient first(server.port());
  RawClient second(server.port());
  ASSERT_TRUE(first.connected() && second.connected());
  // All three are accepted in connection order (one accept queue): the third finds both places
  // taken, and the first, quiet longest, makes room.
  const auto scrape =
      parseHttpResponse(tcpExchange(server.port(), "GET /metrics HTTP/1.1\r\n\r\n"));
  EXPECT_EQ(scrape.status, 200) << scrape.head;
  const auto evicted = parseHttpResponse(first.readAll());
  EXPECT_EQ(evicted.status, 503) << evicted.head;
  EXPECT_EQ(evicted.body, "too many connections: closed to serve a newer one\n");
  second.send("GET /nothing HTTP/1.1\r\n\r\n");
  EXPECT_EQ(parseHttpResponse(second.readAll()).status, 404);
  EXPECT_TRUE(eventually([&] { return value("metrics.clients.evicted") == 1; }));
  EXPECT_TRUE(eventually([&] { return value("metrics.errors") == 2; })) << "the 503 and the 404";
}

TEST_F(MetricsServerTest, IdleConnectionsFillingTheServerCannotKeepAScrapeOut) {
  // The exhaustion seen in the field: 16 connections that sent one byte each (and reconnect
  // when closed) held every place, and 20 of 20 scrapes got 503. The timeout is long here so
  // that nothing but eviction can make room, however slow the machine.
  MetricsServer server(stats_, options(16, 60'000));
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 16; ++i) {
    idle.push_back(std::make_unique<RawClient>(server.port()));
    ASSERT_TRUE(idle.back()->connected());
    idle.back()->send("G");
  }
  for (int scrape = 0; scrape < 20; ++scrape) {
    // One more idle connection before each scrape, as the reconnecting clients do: every scrape
    // finds the server full of connections that say nothing.
    idle.push_back(std::make_unique<RawClient>(server.port()));
    ASSERT_TRUE(idle.back()->connected());
    idle.back()->send("G");
    const auto response = httpGet(server.port(), "/metrics");
    EXPECT_EQ(response.status, 200) << "scrape " << scrape << ": " << response.head;
  }
  EXPECT_TRUE(eventually([&] { return value("metrics.scrapes") == 20; }));
  EXPECT_GE(value("metrics.clients.evicted"), 20);
}

TEST_F(MetricsServerTest, AClientThatSaysNothingAndLeavesCostsNothing) {
  MetricsServer server(stats_, options());
  { RawClient silent(server.port()); }
  EXPECT_EQ(httpGet(server.port(), "/metrics").status, 200);
  EXPECT_EQ(value("metrics.errors"), 0);
}

TEST_F(MetricsServerTest, BindFailureNamesAddressPortAndReason) {
  MetricsServer server(stats_, options());
  MetricsServerOptions same = options();
  same.port = server.port();
  Stats other;
  try {
    MetricsServer clash(other, same);
    FAIL() << "a second server bound the same port";
  } catch (const std::runtime_error &error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("metrics server"), std::string::npos) << message;
    EXPECT_NE(message.find("127.0.0.1:" + std::to_string(server.port())), std::string::npos)
        << message;
    EXPECT_NE(message.find(std::strerror(EADDRINUSE)), std::string::npos) << message;
  }
}

} // namespace
} // namespace efu::metrics
