// SPDX-License-Identifier: BSD-2-Clause
// efu-dump --report: reading a module's histogram report, its table and its chart.
#include "efu/tools/dump/Report.h"

#include "common/stats/LogHistogram.h"
#include "tests/support/FakeControlPort.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace efu::tools {
namespace {

nlohmann::json reportOf(const LogHistogram &h, const std::string &unit) {
  nlohmann::json bins = nlohmann::json::array();
  for (uint32_t i = 0; i < LogHistogram::kBins; ++i) {
    if (h.bin(i) != 0) {
      bins.push_back({LogHistogram::lowerBound(i), h.bin(i)});
    }
  }
  return {{"unit", unit}, {"count", h.count()}, {"max", h.max()}, {"bins", bins}};
}

TEST(ReportHistograms, HistogramMembersAreReadOthersLeftOut) {
  LogHistogram delay;
  delay.add(1500, 3);    // bin [1408, 1536)
  delay.add(100000, 1);  // bin [98304, 106496)
  LogHistogram burst;
  burst.add(1, 50);
  const nlohmann::json report = {
      {"delay", reportOf(delay, "ns")}, {"burst", reportOf(burst, "datagrams")}, {"period", 8}};
  const auto histograms = histogramsOf(report);
  ASSERT_EQ(histograms.size(), 2U);
  const auto &d = *std::find_if(histograms.begin(), histograms.end(),
                                [](const auto &h) { return h.name == "delay"; });
  EXPECT_EQ(d.unit, "ns");
  EXPECT_EQ(d.count, 4U);
  EXPECT_EQ(d.max, 100000U);
  ASSERT_EQ(d.bins.size(), 2U);
  EXPECT_EQ(d.bins[0], std::make_pair(uint64_t{1408}, uint64_t{3}));
  EXPECT_EQ(d.bins[1], std::make_pair(uint64_t{98304}, uint64_t{1}));
}

TEST(ReportHistograms, TheTableHasOneLinePerBinWithItsRangeAndThePercentiles) {
  LogHistogram burst;
  burst.add(1, 90);
  burst.add(20, 10); // bin [20, 22)
  const auto histograms = histogramsOf({{"burst", reportOf(burst, "datagrams")}});
  ASSERT_EQ(histograms.size(), 1U);
  const std::string text = histogramText(histograms[0]);
  EXPECT_NE(text.find("burst (datagrams): count 100, max 20, p50 1, p90 1, p99 20\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  1           90  90.00 % " + std::string(40, '#') + "\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("20 .. <22           10  10.00 % " + std::string(5, '#') + "\n"),
            std::string::npos)
      << text;
}

TEST(ReportHistograms, MalformedHistogramsAreRefusedNamingTheMember) {
  const auto refused = [](const nlohmann::json &member) {
    try {
      (void)histogramsOf({{"delay", member}});
    } catch (const std::invalid_argument &e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused({{"count", 1}, {"bins", {{17, 1}}}}).find("'delay': 17 is not the lower"),
            std::string::npos);
  EXPECT_NE(refused({{"count", 2}, {"bins", {{4, 1}, {2, 1}}}}).find("ascending"),
            std::string::npos);
  EXPECT_NE(refused({{"count", 5}, {"bins", {{4, 1}}}}).find("the bins hold 1, count says 5"),
            std::string::npos);
  EXPECT_NE(refused({{"count", 1}, {"bins", {{4, -1}}}}).find("not [lower bound, count]"),
            std::string::npos);
  EXPECT_NE(refused({{"count", -1}, {"bins", nlohmann::json::array()}}).find("non-negative"),
            std::string::npos);
}

TEST(ReportHistograms, TheChartHasOneBarPerLogBinFromTheFirstToTheLast) {
  LogHistogram gaps;
  gaps.add(16, 10);    // bin 16
  gaps.add(1000, 40);  // bin of [960, 1024)
  const auto histograms = histogramsOf({{"gaps", reportOf(gaps, "datagrams")}});
  const RgbImage image = renderHistogramChart(histograms[0]);
  const uint32_t bars = LogHistogram::binOf(1000) - LogHistogram::binOf(16) + 1;
  // renderBarChart: one column group per bar, the plot 800 px wide at most (bars of >= 1 px).
  EXPECT_EQ(image.width, 72U + bars * std::max<uint32_t>(1, 800 / bars) + 32U);
  EXPECT_THROW((void)renderHistogramChart(ReportHistogram{"empty", "ns", 0, 0, {}}), ImageError);
}

/// The message of the std::runtime_error fetchReport() throws for what `port` answers.
std::string fetchRefusal(const testkit::FakeControlPort &port, const std::string &name) {
  try {
    (void)fetchReport("127.0.0.1", port.port(), name);
  } catch (const std::runtime_error &e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ReportFetch, TheReportIsTheJsonAfterTheCommandsName) {
  testkit::FakeControlPort port(R"(REPORT_GET udp.histograms {"burst": {"count": 2}})"
                                "\n");
  EXPECT_EQ(fetchReport("127.0.0.1", port.port(), "udp.histograms"),
            nlohmann::json::parse(R"({"burst": {"count": 2}})"));
  EXPECT_EQ(port.request(), "REPORT_GET udp.histograms");
}

TEST(ReportFetch, AReplyNestedHalfAMillionLevelsIsRefusedNotRecursedOn) {
  // efu-dump --report died of SIGSEGV on this reply (the parse went through, printing recursed).
  testkit::FakeControlPort port("REPORT_GET udp.histograms " + std::string(500'000, '[') +
                                std::string(500'000, ']') + "\n");
  EXPECT_EQ(fetchRefusal(port, "udp.histograms"),
            "report 'udp.histograms' is not usable JSON: line 1, column 65: JSON nested deeper "
            "than 64 levels");
}

TEST(ReportFetch, ADuplicateKeyIsRefusedAndAStrangeAnswerShownEscaped) {
  testkit::FakeControlPort twice(R"(REPORT_GET r {"count": 1, "count": 2})"
                                 "\n");
  EXPECT_EQ(fetchRefusal(twice, "r"), "report 'r' is not usable JSON: line 1, column 20, at "
                                      "'count': key 'count' appears twice in the same object");
  testkit::FakeControlPort odd("\x1b[2J" + std::string(300, 'x') + "\n");
  const std::string message = fetchRefusal(odd, "r");
  EXPECT_NE(
      message.find("has no report 'r' (it answered '\\x1b[2J" + std::string(193, 'x') + "...')"),
      std::string::npos)
      << message;
}

} // namespace
} // namespace efu::tools
