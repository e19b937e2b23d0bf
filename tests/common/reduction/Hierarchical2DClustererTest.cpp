// SPDX-License-Identifier: BSD-2-Clause
// The seeded 2-D clusterer (common/reduction/Hierarchical2DClusterer.h): its rules, row by row,
// and the ESS EFU's expectation (src/common/reduction/clustering/test/
// Hierarchical2DClustererTest.cpp: ten hits at one place, 1 ns apart, time gap 0 → ten clusters).
#include "common/reduction/Hierarchical2DClusterer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace efu::reduction {
namespace {

std::vector<PixelCluster> run(const std::vector<PixelHit> &hits, uint64_t timeGap,
                              uint16_t coordGap) {
  Hierarchical2DClusterer c(timeGap, coordGap);
  std::vector<PixelCluster> out;
  c.cluster(std::span<const PixelHit>(hits), [&](const PixelCluster &k) { out.push_back(k); });
  return out;
}

TEST(Hierarchical2DClusterer, EssZeroTimeGapGivesOneClusterPerHit) {
  std::vector<PixelHit> hits;
  for (uint64_t t = 1; t <= 10; ++t) {
    hits.push_back({t, 0, 0, 1, 0});
  }
  EXPECT_EQ(run(hits, 0, 0).size(), 10U);
  // A gap of 1 ns keeps them in one time group, but a coordinate gap of 0 takes nothing in
  // (distance^2 < 0 never holds); 1 takes hits at the seed's own place.
  EXPECT_EQ(run(hits, 1, 0).size(), 10U);
  const auto one = run(hits, 1, 1);
  ASSERT_EQ(one.size(), 1U);
  EXPECT_EQ(one[0].hits, 10U);
  EXPECT_EQ(one[0].timeStartNs, 1U);
  EXPECT_EQ(one[0].timeEndNs, 10U);
  EXPECT_EQ(one[0].timeSpanNs(), 10U);
}

TEST(Hierarchical2DClusterer, TimeGapIsInclusive) {
  const std::vector<PixelHit> hits = {{100, 5, 5, 1, 0}, {150, 5, 5, 1, 1}, {201, 5, 5, 1, 2}};
  // 50 stays (exactly the gap), 51 splits.
  const auto c = run(hits, 50, 3);
  ASSERT_EQ(c.size(), 2U);
  EXPECT_EQ(c[0].hits, 2U);
  EXPECT_EQ(c[1].hits, 1U);
  EXPECT_EQ(c[1].timeStartNs, 201U);
}

TEST(Hierarchical2DClusterer, DistanceIsToTheSeedNotTheCluster) {
  // A chain 0, 3, 6 along x with gap 4 (distance^2 < 16): 3 joins the seed at 0, 6 does not
  // (36 from the seed), although it is 3 from the cluster's last hit: it seeds its own.
  const std::vector<PixelHit> hits = {{10, 0, 0, 1, 0}, {10, 3, 0, 1, 1}, {10, 6, 0, 1, 2}};
  const auto c = run(hits, 100, 4);
  ASSERT_EQ(c.size(), 2U);
  EXPECT_EQ(c[0].hits, 2U);
  EXPECT_EQ(c[0].xMass, 3U);
  EXPECT_EQ(c[1].hits, 1U);
  EXPECT_EQ(c[1].xMass, 6U);
}

TEST(Hierarchical2DClusterer, DistanceBoundaryIsStrict) {
  // (3, 4) is at distance 5 from (0, 0): not below 5, below 6.
  const std::vector<PixelHit> hits = {{10, 0, 0, 1, 0}, {11, 3, 4, 1, 1}};
  EXPECT_EQ(run(hits, 100, 5).size(), 2U);
  EXPECT_EQ(run(hits, 100, 6).size(), 1U);
}

TEST(Hierarchical2DClusterer, SeedsInOrderAndWeightedCentres) {
  // Two spots interleaved in time within one group; clusters come out in seed order.
  const std::vector<PixelHit> hits = {
      {10, 100, 100, 3, 0}, {11, 200, 50, 2, 1}, {12, 101, 100, 1, 2}, {13, 201, 51, 2, 3}};
  const auto c = run(hits, 5, 3);
  ASSERT_EQ(c.size(), 2U);
  EXPECT_EQ(c[0].hits, 2U);
  EXPECT_EQ(c[0].weightSum, 4U);
  EXPECT_DOUBLE_EQ(c[0].xCenter(), (3.0 * 100 + 1.0 * 101) / 4.0);
  EXPECT_DOUBLE_EQ(c[0].yCenter(), 100.0);
  EXPECT_EQ(c[0].timeStartNs, 10U);
  EXPECT_EQ(c[0].timeEndNs, 12U);
  EXPECT_EQ(c[1].hits, 2U);
  EXPECT_DOUBLE_EQ(c[1].xCenter(), 200.5);
  EXPECT_DOUBLE_EQ(c[1].yCenter(), 50.5);
  EXPECT_EQ(c[1].timeStartNs, 11U);
}

TEST(Hierarchical2DClusterer, EmptyAndZeroWeight) {
  EXPECT_TRUE(run({}, 5, 3).empty());
  const auto c = run({{1, 2, 3, 0, 0}}, 5, 3);
  ASSERT_EQ(c.size(), 1U);
  EXPECT_EQ(c[0].weightSum, 0U);
  EXPECT_TRUE(std::isnan(c[0].xCenter()));
}

TEST(Hierarchical2DClusterer, ReusedAcrossCallsKeepsNothing) {
  Hierarchical2DClusterer c(10, 3);
  int clusters = 0;
  const std::vector<PixelHit> a = {{1, 1, 1, 1, 0}, {2, 1, 2, 1, 1}};
  c.cluster(std::span<const PixelHit>(a), [&](const PixelCluster &) { ++clusters; });
  c.cluster(std::span<const PixelHit>(a), [&](const PixelCluster &) { ++clusters; });
  EXPECT_EQ(clusters, 2);
}

} // namespace
} // namespace efu::reduction
