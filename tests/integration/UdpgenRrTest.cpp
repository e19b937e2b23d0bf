// SPDX-License-Identifier: BSD-2-Clause
// udpgen --rr against udpecho on loopback: one RTT sample per request, nothing lost.
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <sstream>

using namespace efu::testkit;
using namespace std::chrono_literals;

namespace {

/// The last line of `output` that is a JSON object.
nlohmann::json lastJsonLine(const std::string &output) {
  std::istringstream lines(output);
  nlohmann::json found;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.front() == '{') {
      found = nlohmann::json::parse(line);
    }
  }
  return found;
}

TEST(UdpgenRr, EveryRequestIsEchoedAndTimed) {
  constexpr int kCount = 1000;
  const std::string port = std::to_string(freeUdpPort());
  Process echo({UDPECHO_BINARY, "-p", port, "-n", std::to_string(kCount)});
  ASSERT_TRUE(eventually([&] { return echo.output().find("echoing on") != std::string::npos; }))
      << echo.output();
  Process gen({UDPGEN_BINARY, "--rr", "-p", port, "-n", std::to_string(kCount), "-s", "64",
               "--json", "-q"});
  const auto code = gen.wait(60s);
  ASSERT_TRUE(code.has_value());
  ASSERT_EQ(*code, 0) << gen.output();
  const nlohmann::json summary = lastJsonLine(gen.output());
  ASSERT_FALSE(summary.is_null()) << gen.output();
  EXPECT_EQ(summary["mode"], "rr");
  EXPECT_EQ(summary["requests"], kCount);
  EXPECT_EQ(summary["replies"], kCount);
  EXPECT_EQ(summary["lost"], 0);
  EXPECT_EQ(summary["strays"], 0);
  EXPECT_EQ(summary["rtt_us"]["samples"], kCount);
  EXPECT_LE(summary["rtt_us"]["p50"].get<double>(), summary["rtt_us"]["p99"].get<double>());
  const auto echoCode = echo.wait(10s); // -n: it exits after the last echo
  ASSERT_TRUE(echoCode.has_value());
  EXPECT_EQ(*echoCode, 0);
  EXPECT_NE(echo.output().find("echoed 1000 datagrams"), std::string::npos) << echo.output();
}

/// A UDP socket bound on 127.0.0.1 that receives and never answers (no ICMP either).
class SilentPeer {
public:
  SilentPeer() : fd_(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr *>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~SilentPeer() { close(fd_); }
  SilentPeer(const SilentPeer &) = delete;
  SilentPeer &operator=(const SilentPeer &) = delete;
  [[nodiscard]] uint16_t port() const { return port_; }

private:
  int fd_;
  uint16_t port_ = 0;
};

// Nobody echoes and nobody refuses: each request times out after --rr-timeout, the timeouts
// are counted, and after 3 in a row the run ends (exit 1, naming the address) instead of going
// on for ever.
TEST(UdpgenRr, ASilentPeerTimesOutAndTheRunEnds) {
  SilentPeer peer;
  const std::string port = std::to_string(peer.port());
  Process gen({UDPGEN_BINARY, "--rr", "-p", port, "--rr-timeout", "20", "-s", "64", "--json"});
  const auto code = gen.wait(60s); // a bound on a hang, not a timing check
  ASSERT_TRUE(code.has_value()) << "udpgen --rr did not end without an echo";
  EXPECT_EQ(*code, 1) << gen.output();
  const nlohmann::json summary = lastJsonLine(gen.output());
  ASSERT_FALSE(summary.is_null()) << gen.output();
  EXPECT_EQ(summary["requests"], 3);
  EXPECT_EQ(summary["replies"], 0);
  EXPECT_EQ(summary["timeouts"], 3);
  EXPECT_EQ(summary["refused"], 0);
  EXPECT_EQ(summary["lost"], 3);
  EXPECT_EQ(summary["timeout_ms"], 20);
  EXPECT_EQ(summary["gave_up"], true);
  EXPECT_NE(gen.output().find("no echo from 127.0.0.1:" + port + " for 3 requests in a row"),
            std::string::npos)
      << gen.output();
}

// No socket at all on the port: the ICMP refusals end the run the same way, at once.
TEST(UdpgenRr, NoResponderEndsTheRunWithAnError) {
  const std::string port = std::to_string(freeUdpPort());
  Process gen({UDPGEN_BINARY, "--rr", "-p", port, "-s", "64", "--json"});
  const auto code = gen.wait(60s);
  ASSERT_TRUE(code.has_value()) << "udpgen --rr with no responder did not end";
  EXPECT_EQ(*code, 1) << gen.output();
  const nlohmann::json summary = lastJsonLine(gen.output());
  ASSERT_FALSE(summary.is_null()) << gen.output();
  EXPECT_EQ(summary["replies"], 0);
  EXPECT_EQ(summary["gave_up"], true);
  EXPECT_EQ(summary["lost"], summary["requests"]);
  EXPECT_EQ(summary["timeouts"].get<int>() + summary["refused"].get<int>(), 3);
  EXPECT_NE(gen.output().find("is udpecho running there?"), std::string::npos) << gen.output();
}

TEST(UdpgenRr, HelpPrintsTheEchoTimeoutAndItsDefault) {
  Process gen({UDPGEN_BINARY, "--help"});
  ASSERT_EQ(gen.wait(10s).value_or(-1), 0);
  const std::string help = gen.output();
  const size_t at = help.find("--rr-timeout");
  ASSERT_NE(at, std::string::npos) << help;
  EXPECT_NE(help.find("=1000", at), std::string::npos) << help;
}

TEST(UdpgenRr, RrExcludesPacing) {
  Process gen({UDPGEN_BINARY, "--rr", "--pps", "10"});
  const auto code = gen.wait(10s);
  ASSERT_TRUE(code.has_value());
  EXPECT_NE(*code, 0);
}

} // namespace
