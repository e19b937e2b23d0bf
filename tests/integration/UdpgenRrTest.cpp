// SPDX-License-Identifier: BSD-2-Clause
// udpgen --rr against udpecho on loopback: one RTT sample per request, nothing lost.
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

TEST(UdpgenRr, RrExcludesPacing) {
  Process gen({UDPGEN_BINARY, "--rr", "--pps", "10"});
  const auto code = gen.wait(10s);
  ASSERT_TRUE(code.has_value());
  EXPECT_NE(*code, 0);
}

} // namespace
