// SPDX-License-Identifier: BSD-2-Clause
// Line-rate arithmetic against the paper's published Table 1, and the bit-rate parser.
#include "common/net/LineRate.h"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace efu {
namespace {

constexpr double k10G = 10e9;

struct PaperRow {
  uint32_t userBytes;
  uint32_t frameBytes;
  double overheadPct; // as printed: one decimal
  double mpps;        // as printed: two decimals
};

// Table 1 of the paper (10 Gb/s Ethernet), as published.
const std::vector<PaperRow> kPaperTable1 = {
    {1, 64, 98.8, 14.88},    {18, 64, 78.6, 14.88},   {82, 128, 44.6, 8.45},
    {210, 256, 23.9, 4.53},  {466, 512, 12.4, 2.35},  {978, 1024, 5.5, 1.20},
    {1472, 1518, 4.3, 0.81}, {8972, 9018, 0.7, 0.14},
};

TEST(LineRate, MatchesPaperTable1FrameSizesAndRates) {
  for (const PaperRow &paper : kPaperTable1) {
    SCOPED_TRACE("user data " + std::to_string(paper.userBytes) + " B");
    const LineRateRow row = lineRate(paper.userBytes, k10G);
    EXPECT_EQ(row.userBytes, paper.userBytes);
    EXPECT_EQ(row.frameBytes, paper.frameBytes);
    EXPECT_EQ(row.wireBytes, paper.frameBytes + 20);
    // Printed with two decimals: equal within half a unit of the last digit.
    EXPECT_NEAR(row.framesPerSec / 1e6, paper.mpps, 0.005 + 1e-9);
  }
}

TEST(LineRate, MatchesPaperTable1Overheads) {
  for (const PaperRow &paper : kPaperTable1) {
    SCOPED_TRACE("user data " + std::to_string(paper.userBytes) + " B");
    const LineRateRow row = lineRate(paper.userBytes, k10G);
    if (paper.userBytes == 978) {
      // The paper prints 5.5 %, but its own definition (wire time not carrying user data,
      // 20 B IFG/preamble included) gives 66 / 1044 = 6.3 %, as do all its other columns.
      EXPECT_NEAR(row.overheadPct, 6.3, 0.05);
      continue;
    }
    EXPECT_NEAR(row.overheadPct, paper.overheadPct, 0.05 + 1e-9);
  }
}

TEST(LineRate, WireFormatsAnchors) {
  EXPECT_NEAR(lineRate(18, k10G).framesPerSec, 14'880'952.4, 1.0); // 64 B frame
  EXPECT_NEAR(lineRate(1472, k10G).framesPerSec, 812'743.8, 1.0);  // 1518 B frame
  EXPECT_NEAR(lineRate(8972, k10G).framesPerSec, 138'304.9, 1.0);  // 9018 B frame
}

TEST(LineRate, MaxUserRateIsFrameRateTimesUserBits) {
  const LineRateRow row = lineRate(8972, k10G);
  EXPECT_NEAR(row.userBitsPerSec, 10e9 * 8972.0 / 9038.0, 1.0);
  EXPECT_NEAR(row.userBitsPerSec / 1e9, 9.927, 0.0005);
  EXPECT_NEAR(lineRate(1472, k10G).userBitsPerSec / 1e9, 9.571, 0.0005);
}

TEST(LineRate, PaddingStartsBelowEighteenBytes) {
  for (uint32_t user = 0; user <= 18; ++user) {
    EXPECT_EQ(lineRate(user, k10G).frameBytes, 64U) << user;
  }
  EXPECT_EQ(lineRate(19, k10G).frameBytes, 65U);
  EXPECT_DOUBLE_EQ(lineRate(0, k10G).overheadPct, 100.0);
  EXPECT_DOUBLE_EQ(lineRate(0, k10G).userBitsPerSec, 0.0);
}

TEST(LineRate, ScalesLinearlyWithLinkSpeed) {
  const LineRateRow at10G = lineRate(1472, k10G);
  const LineRateRow at1G = lineRate(1472, 1e9);
  EXPECT_DOUBLE_EQ(at10G.framesPerSec, 10.0 * at1G.framesPerSec);
  EXPECT_DOUBLE_EQ(at10G.overheadPct, at1G.overheadPct);
}

TEST(LineRate, PaperSizesAreTable1Columns) {
  EXPECT_EQ(paperTable1UserSizes(), (std::vector<uint32_t>{1, 18, 82, 210, 466, 978, 1472, 8972}));
}

TEST(LineRate, TableIsAlignedAndHasOneRowPerSize) {
  const std::string table = formatLineRateTable(paperTable1UserSizes(), k10G);
  std::istringstream in(table);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  ASSERT_EQ(lines.size(), 2 + paperTable1UserSizes().size()); // title, header, rows
  EXPECT_NE(lines[0].find("10.000 Gb/s"), std::string::npos);
  EXPECT_NE(lines[1].find("Overhead [%]"), std::string::npos);
  for (size_t i = 2; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].size(), lines[1].size()) << lines[i];
  }
  EXPECT_NE(lines[2].find("14.881"), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("98.8"), std::string::npos) << lines[2];
  EXPECT_NE(lines.back().find("9018"), std::string::npos) << lines.back();
  EXPECT_NE(lines.back().find("9.927"), std::string::npos) << lines.back();
}

TEST(LineRate, SlowLinksUseKppsAndMbps) {
  const std::string table = formatLineRateTable({1472}, 100e6);
  EXPECT_NE(table.find("[kpps]"), std::string::npos);
  EXPECT_NE(table.find("[Mb/s]"), std::string::npos);
  EXPECT_NE(table.find("8.127"), std::string::npos) << table;
}

TEST(ParseBitRate, AcceptsPlainAndSuffixedNumbers) {
  EXPECT_DOUBLE_EQ(parseBitRate("10G"), 10e9);
  EXPECT_DOUBLE_EQ(parseBitRate("500M"), 500e6);
  EXPECT_DOUBLE_EQ(parseBitRate("1.5G"), 1.5e9);
  EXPECT_DOUBLE_EQ(parseBitRate("123456"), 123456.0);
  EXPECT_DOUBLE_EQ(parseBitRate("2k"), 2000.0);
  EXPECT_DOUBLE_EQ(parseBitRate("2K"), 2000.0);
  EXPECT_DOUBLE_EQ(parseBitRate("1T"), 1e12);
  EXPECT_DOUBLE_EQ(parseBitRate("0"), 0.0);
  EXPECT_DOUBLE_EQ(parseBitRate(".5G"), 0.5e9);
  EXPECT_DOUBLE_EQ(parseBitRate("10Gb/s"), 10e9);
  EXPECT_DOUBLE_EQ(parseBitRate("10Gbps"), 10e9);
  EXPECT_DOUBLE_EQ(parseBitRate("100bit/s"), 100.0);
}

TEST(ParseBitRate, RejectsBadTextAndNamesIt) {
  for (const char *bad :
       {"10X", "", "G", "-5", "1e9", " 10G", "10G ", "1.2.3", "abc", "10m", "10GG", ".", "0x10"}) {
    try {
      parseBitRate(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument &e) {
      const std::string message = e.what();
      const std::string quoted = std::string(1, '\'').append(bad).append(1, '\'');
      EXPECT_NE(message.find(quoted), std::string::npos) << message;
    }
  }
}

TEST(FormatBitRate, PicksSiUnit) {
  EXPECT_EQ(formatBitRate(10e9), "10.000 Gb/s");
  EXPECT_EQ(formatBitRate(500e6), "500.000 Mb/s");
  EXPECT_EQ(formatBitRate(2000), "2.000 kb/s");
  EXPECT_EQ(formatBitRate(12), "12.000 b/s");
}

} // namespace
} // namespace efu
