// SPDX-License-Identifier: BSD-2-Clause
// LogHistogram: bin edges, exact small values, percentiles from bins, merge.
#include "common/stats/LogHistogram.h"

#include <gtest/gtest.h>

#include <limits>

namespace efu {
namespace {

TEST(LogHistogramTest, SmallValuesHaveABinEachAndLargerOnesAnEighthOfAnOctave) {
  for (uint64_t v = 0; v < 16; ++v) {
    EXPECT_EQ(LogHistogram::binOf(v), v);
    EXPECT_EQ(LogHistogram::lowerBound(static_cast<uint32_t>(v)), v);
  }
  EXPECT_EQ(LogHistogram::lowerBound(LogHistogram::binOf(16)), 16U);
  EXPECT_EQ(LogHistogram::binOf(17), LogHistogram::binOf(16)); // 16..17 share a bin
  EXPECT_EQ(LogHistogram::lowerBound(LogHistogram::binOf(1000)), 960U);
  EXPECT_EQ(LogHistogram::binOf(std::numeric_limits<uint64_t>::max()), LogHistogram::kBins - 1);
  // Every bin's lower bound lies in that bin and above the previous bin's.
  for (uint32_t b = 1; b < LogHistogram::kBins; ++b) {
    EXPECT_EQ(LogHistogram::binOf(LogHistogram::lowerBound(b)), b);
    EXPECT_GT(LogHistogram::lowerBound(b), LogHistogram::lowerBound(b - 1));
  }
}

TEST(LogHistogramTest, PercentilesAreTheLowerBoundOfTheBinHoldingTheRank) {
  LogHistogram h;
  EXPECT_EQ(h.percentile(0.5), 0U);
  for (uint64_t v = 1; v <= 10; ++v) {
    h.add(v);
  }
  EXPECT_EQ(h.count(), 10U);
  EXPECT_EQ(h.max(), 10U);
  EXPECT_EQ(h.percentile(0.5), 5U);
  EXPECT_EQ(h.percentile(0.9), 9U);
  EXPECT_EQ(h.percentile(0.99), 10U);
  EXPECT_EQ(h.percentile(0.0), 1U);
  h.add(1000, 90);
  EXPECT_EQ(h.percentile(0.5), 960U);
  EXPECT_EQ(h.max(), 1000U);
}

TEST(LogHistogramTest, MergeAddsCountsAndKeepsTheLargerMax) {
  LogHistogram a;
  LogHistogram b;
  a.add(3);
  b.add(3, 2);
  b.add(40);
  a.merge(b);
  EXPECT_EQ(a.bin(3), 3U);
  EXPECT_EQ(a.count(), 4U);
  EXPECT_EQ(a.max(), 40U);
  a.clear();
  EXPECT_EQ(a.count(), 0U);
  EXPECT_EQ(a.bin(3), 0U);
}

} // namespace
} // namespace efu
