// SPDX-License-Identifier: BSD-2-Clause
// The clusterer's passes of two seeds test a hit's column distance to a seed first (nearInX) and
// its squared distance only within maxCoordGap columns: hits at and around that edge, in both
// directions and at the ends of the 16-bit range, for every gap from 0 to 12 and some larger,
// against the rules written out plainly (every seed scanning every later hit of its group).
#include "common/reduction/Hierarchical2DClusterer.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace efu::reduction {
namespace {

/// The rules of Hierarchical2DClusterer.h: a hit joins the first earlier seed of its group near
/// it (squared distance below gap^2), else it is a seed; clusters in seed order.
std::vector<PixelCluster> byTheRules(const std::vector<PixelHit> &hits, uint64_t timeGap,
                                     uint16_t coordGap) {
  std::vector<PixelCluster> out;
  const int64_t gap2 = int64_t{coordGap} * coordGap;
  size_t groupStart = 0; // index in out of the group's first cluster
  std::vector<size_t> seeds; // of the group, as indices into hits
  for (size_t i = 0; i < hits.size(); ++i) {
    if (i > 0 && hits[i].timeNs - hits[i - 1].timeNs > timeGap) {
      seeds.clear();
      groupStart = out.size();
    }
    const PixelHit &h = hits[i];
    size_t k = 0;
    for (; k < seeds.size(); ++k) {
      const int64_t dx = int64_t{h.x} - hits[seeds[k]].x;
      const int64_t dy = int64_t{h.y} - hits[seeds[k]].y;
      if (dx * dx + dy * dy < gap2) {
        break;
      }
    }
    if (k == seeds.size()) {
      seeds.push_back(i);
      out.push_back({h.timeNs, h.timeNs, 0, 0, 0, 0});
    }
    PixelCluster &c = out[groupStart + k];
    c.timeEndNs = h.timeNs;
    ++c.hits;
    c.weightSum += h.weight;
    c.xMass += uint64_t{h.weight} * h.x;
    c.yMass += uint64_t{h.weight} * h.y;
  }
  return out;
}

void expectRules(const std::vector<PixelHit> &hits, uint64_t timeGap, uint16_t coordGap) {
  Hierarchical2DClusterer clusterer(timeGap, coordGap);
  std::vector<PixelCluster> got;
  clusterer.cluster(std::span<const PixelHit>(hits),
                    [&](const PixelCluster &c) { got.push_back(c); });
  const std::vector<PixelCluster> want = byTheRules(hits, timeGap, coordGap);
  ASSERT_EQ(got.size(), want.size()) << "gap " << coordGap;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].timeStartNs, want[i].timeStartNs) << "gap " << coordGap << " cluster " << i;
    ASSERT_EQ(got[i].timeEndNs, want[i].timeEndNs) << "gap " << coordGap << " cluster " << i;
    ASSERT_EQ(got[i].hits, want[i].hits) << "gap " << coordGap << " cluster " << i;
    ASSERT_EQ(got[i].weightSum, want[i].weightSum) << "gap " << coordGap << " cluster " << i;
    ASSERT_EQ(got[i].xMass, want[i].xMass) << "gap " << coordGap << " cluster " << i;
    ASSERT_EQ(got[i].yMass, want[i].yMass) << "gap " << coordGap << " cluster " << i;
  }
}

TEST(Hierarchical2DClustererWindow, HitsAtTheColumnEdgeOfTwoSeeds) {
  // One time group: two seeds far apart (so a pass serves both), then hits at column offsets
  // gap - 2 .. gap + 1 either side of each, on the seed's row and a row or two off, in a random
  // order; then the same with the seeds at the ends of the coordinates.
  std::mt19937_64 rng(21);
  for (const uint16_t gap : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 100, 255, 65535}) {
    for (const uint16_t base : {uint16_t{0}, uint16_t{1000}, uint16_t{65535}}) {
      const uint16_t far = base < 32768 ? uint16_t(base + 40000) : uint16_t(base - 40000);
      std::vector<PixelHit> group = {{100, base, base, 5, 0}, {100, far, base, 7, 1}};
      for (const uint16_t seedX : {base, far}) {
        for (int off = int{gap} - 2; off <= int{gap} + 1; ++off) {
          for (const int side : {-1, 1}) {
            for (const int dy : {0, 1, 2}) {
              const int64_t x = int64_t{seedX} + side * off;
              const int64_t y = int64_t{base} + (base == 65535 ? -dy : dy);
              if (x >= 0 && x <= 65535 && y >= 0 && y <= 65535) {
                group.push_back({100, static_cast<uint16_t>(x), static_cast<uint16_t>(y),
                                 static_cast<uint16_t>(rng() % 1024),
                                 static_cast<uint16_t>(group.size())});
              }
            }
          }
        }
      }
      std::shuffle(group.begin() + 2, group.end(), rng);
      expectRules(group, 10, gap);
      // A first seed that takes the group's first hits: the edge hits then meet the pass over
      // the hits it leaves (rest_).
      std::vector<PixelHit> later = group;
      later.insert(later.begin(), {100, static_cast<uint16_t>(base ^ 0x5555), 9, 3, 99});
      expectRules(later, 10, gap);
    }
  }
}

TEST(Hierarchical2DClustererWindow, RandomHitsOnNarrowPatches) {
  // Columns spread over a few gaps, rows close: most hits fall near the window's edge.
  std::mt19937_64 rng(22);
  for (const uint16_t gap : {0, 1, 2, 3, 4, 5, 8, 13}) {
    for (const uint16_t width : {uint16_t{3}, uint16_t{10}, uint16_t{40}}) {
      std::vector<PixelHit> hits;
      uint64_t t = 1000;
      for (uint16_t i = 0; i < 1500; ++i) {
        t += rng() % 3;
        hits.push_back({t, static_cast<uint16_t>(rng() % width), static_cast<uint16_t>(rng() % 3),
                        static_cast<uint16_t>(rng() % 1024), i});
      }
      expectRules(hits, 2, gap);
    }
  }
}

} // namespace
} // namespace efu::reduction
