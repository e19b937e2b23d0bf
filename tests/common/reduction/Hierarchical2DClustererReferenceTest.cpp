// SPDX-License-Identifier: BSD-2-Clause
// The seeded 2-D clusterer against a plain reference of its rules (per-hit flags, every seed
// scanning every later hit of its group), on random hits dense enough that clusters overlap,
// chain and split: the same clusters, in the same order, with the same sums.
#include "common/reduction/Hierarchical2DClusterer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace efu::reduction {
namespace {

/// The rules of Hierarchical2DClusterer.h, written out as directly as they read.
std::vector<PixelCluster> reference(const std::vector<PixelHit> &hits, uint64_t timeGap,
                                    uint16_t coordGap) {
  std::vector<PixelCluster> out;
  const int64_t gap2 = int64_t{coordGap} * coordGap;
  size_t begin = 0;
  for (size_t end = 1; end <= hits.size(); ++end) {
    if (end < hits.size() && hits[end].timeNs - hits[end - 1].timeNs <= timeGap) {
      continue;
    }
    std::vector<bool> taken(end - begin, false);
    for (size_t s = begin; s < end; ++s) {
      if (taken[s - begin]) {
        continue;
      }
      const PixelHit &seed = hits[s];
      PixelCluster c{seed.timeNs, seed.timeNs, 0, 0, 0, 0};
      for (size_t j = s; j < end; ++j) {
        const int64_t dx = int64_t{hits[j].x} - seed.x;
        const int64_t dy = int64_t{hits[j].y} - seed.y;
        if (j != s && (taken[j - begin] || dx * dx + dy * dy >= gap2)) {
          continue;
        }
        taken[j - begin] = true;
        const PixelHit &h = hits[j];
        c.timeStartNs = std::min(c.timeStartNs, h.timeNs);
        c.timeEndNs = std::max(c.timeEndNs, h.timeNs);
        ++c.hits;
        c.weightSum += h.weight;
        c.xMass += uint64_t{h.weight} * h.x;
        c.yMass += uint64_t{h.weight} * h.y;
      }
      out.push_back(c);
    }
    begin = end;
  }
  return out;
}

void expectSame(const std::vector<PixelHit> &hits, uint64_t timeGap, uint16_t coordGap,
                Hierarchical2DClusterer &clusterer) {
  std::vector<PixelCluster> got;
  clusterer.cluster(std::span<const PixelHit>(hits),
                    [&](const PixelCluster &c) { got.push_back(c); });
  const std::vector<PixelCluster> want = reference(hits, timeGap, coordGap);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].timeStartNs, want[i].timeStartNs) << "cluster " << i;
    ASSERT_EQ(got[i].timeEndNs, want[i].timeEndNs) << "cluster " << i;
    ASSERT_EQ(got[i].hits, want[i].hits) << "cluster " << i;
    ASSERT_EQ(got[i].weightSum, want[i].weightSum) << "cluster " << i;
    ASSERT_EQ(got[i].xMass, want[i].xMass) << "cluster " << i;
    ASSERT_EQ(got[i].yMass, want[i].yMass) << "cluster " << i;
  }
}

/// n hits, times rising by 0..maxStep ns, on a side x side patch: small patches and steps make
/// long groups of overlapping clusters.
std::vector<PixelHit> randomHits(std::mt19937_64 &rng, size_t n, uint64_t maxStep, uint16_t side) {
  std::vector<PixelHit> hits;
  uint64_t t = 1'000'000;
  for (size_t i = 0; i < n; ++i) {
    t += rng() % (maxStep + 1);
    hits.push_back({t, static_cast<uint16_t>(rng() % side), static_cast<uint16_t>(rng() % side),
                    static_cast<uint16_t>(rng() % 1024), static_cast<uint16_t>(i)});
  }
  return hits;
}

TEST(Hierarchical2DClustererReference, RandomDenseHits) {
  std::mt19937_64 rng(11);
  for (const uint16_t coordGap :
       {uint16_t{0}, uint16_t{1}, uint16_t{2}, uint16_t{4}, uint16_t{9}, uint16_t{300}}) {
    for (const uint64_t timeGap : {uint64_t{0}, uint64_t{5}, uint64_t{800}}) {
      Hierarchical2DClusterer clusterer(timeGap, coordGap); // reused: nothing carried over
      for (const uint16_t side : {uint16_t{4}, uint16_t{16}, uint16_t{256}}) {
        for (const size_t n : {size_t{1}, size_t{2}, size_t{9}, size_t{100}, size_t{2000}}) {
          for (const uint64_t step : {uint64_t{0}, uint64_t{3}, uint64_t{400}}) {
            expectSame(randomHits(rng, n, step, side), timeGap, coordGap, clusterer);
          }
        }
      }
    }
  }
}

TEST(Hierarchical2DClustererReference, EdgesOfTheCoordinates) {
  // Far corners of the 16-bit range: differences and squares must not wrap.
  std::mt19937_64 rng(12);
  Hierarchical2DClusterer clusterer(10, 65535);
  std::vector<PixelHit> hits;
  for (uint16_t i = 0; i < 200; ++i) {
    const auto x = static_cast<uint16_t>(rng() % 2 ? 0 : 65535);
    const auto y = static_cast<uint16_t>(rng() % 2 ? 0 : 65535);
    hits.push_back({uint64_t{i} * 3, x, y, static_cast<uint16_t>(rng() % 1024), i});
  }
  expectSame(hits, 10, 65535, clusterer);
}

TEST(Hierarchical2DClustererReference, GrowingThenShrinkingGroups) {
  // The bookkeeping sized by one call serves the next, larger or smaller.
  std::mt19937_64 rng(13);
  Hierarchical2DClusterer clusterer(800, 4);
  for (const size_t n : {size_t{5}, size_t{3000}, size_t{7}, size_t{600}, size_t{1}}) {
    expectSame(randomHits(rng, n, 100, 32), 800, 4, clusterer);
  }
}

TEST(Hierarchical2DClustererReference, HitNearTwoSeedsOfOnePass) {
  // A pass serves two seeds (the first and the first hit it leaves): a hit near both goes to the
  // earlier, one near neither is left for the next pass, also when it lies between them in time.
  // Seeds A (0, 0) and B (8, 0); C near both; D a third seed; E near D; F near B only.
  Hierarchical2DClusterer clusterer(1, 5);
  const std::vector<PixelHit> hits = {{1, 0, 0, 3, 0},  {2, 8, 0, 5, 1},  {3, 4, 0, 7, 2},
                                      {4, 20, 0, 2, 3}, {5, 16, 0, 4, 4}, {6, 8, 3, 6, 5}};
  expectSame(hits, 1, 5, clusterer);
  // The same after a first seed that takes the group's first hits, and with groups of many
  // seeds (small steps in time, a wide patch): pass after pass of two seeds.
  std::vector<PixelHit> shifted = hits;
  shifted.insert(shifted.begin(), {{0, 1, 1, 1, 9}, {0, 0, 1, 2, 8}});
  expectSame(shifted, 1, 5, clusterer);
  std::mt19937_64 rng(14);
  Hierarchical2DClusterer longGroups(4, 5);
  for (const uint16_t side : {uint16_t{12}, uint16_t{40}, uint16_t{100}}) {
    for (int k = 0; k < 20; ++k) {
      expectSame(randomHits(rng, 300, 2, side), 4, 5, longGroups);
    }
  }
}

/// Groups of neutron-like blocks: each block `perBlock` hits around a random centre on a
/// side x side patch, at one time or a few ns apart, blocks 0..maxStep ns apart; with `mix`,
/// a block's hits are sometimes interleaved with the next block's. Blocks one after another make
/// the seeds of a pass leave a run of the hits it reads (not copied); a later block near an
/// earlier seed ends that run (copied, the rest compacted), in the first pass and later ones.
std::vector<PixelHit> blockHits(std::mt19937_64 &rng, size_t blocks, size_t perBlock,
                                uint64_t maxStep, uint16_t side, bool mix) {
  std::vector<PixelHit> hits;
  uint64_t t = 1'000'000;
  uint16_t tag = 0;
  for (size_t b = 0; b < blocks; ++b) {
    t += rng() % (maxStep + 1);
    const auto cx = static_cast<uint16_t>(rng() % side), cy = static_cast<uint16_t>(rng() % side);
    const bool spread = rng() % 2 == 0;
    for (size_t k = 0; k < perBlock; ++k) {
      hits.push_back({t + (spread ? rng() % 3 : 0), static_cast<uint16_t>(cx + rng() % 3),
                      static_cast<uint16_t>(cy + rng() % 3), static_cast<uint16_t>(rng() % 1024),
                      tag++});
    }
    if (mix && hits.size() >= 2 * perBlock && rng() % 3 == 0) {
      std::shuffle(hits.end() - static_cast<std::ptrdiff_t>(2 * perBlock), hits.end(), rng);
    }
  }
  std::stable_sort(hits.begin(), hits.end(),
                   [](const PixelHit &a, const PixelHit &b) { return a.timeNs < b.timeNs; });
  return hits;
}

TEST(Hierarchical2DClustererReference, BlocksLeaveRunsThenTakeAfterThem) {
  // The hits a pass leaves, read in place while they are a run and copied once a hit after them
  // is taken, against the rules: blocks far apart (runs kept to the group's end), on small
  // patches (later blocks near earlier seeds: the runs end, in the first pass and in later
  // passes), one hit or nine a block, mixed or not.
  std::mt19937_64 rng(15);
  for (const uint16_t coordGap : {uint16_t{1}, uint16_t{4}, uint16_t{6}}) {
    Hierarchical2DClusterer clusterer(800, coordGap);
    for (const uint16_t side : {uint16_t{8}, uint16_t{20}, uint16_t{64}, uint16_t{256}}) {
      for (const size_t perBlock : {size_t{1}, size_t{2}, size_t{9}}) {
        for (const uint64_t step : {uint64_t{0}, uint64_t{300}, uint64_t{900}}) {
          for (int k = 0; k < 30; ++k) {
            const size_t blocks = 1 + rng() % 40;
            expectSame(blockHits(rng, blocks, perBlock, step, side, k % 2 == 1), 800, coordGap,
                       clusterer);
          }
        }
      }
    }
  }
}

TEST(Hierarchical2DClustererReference, RunEndsAtEachPlaceOfAPass) {
  // Seeds A (0, 0) and B (20, 0) in a pass; C, D, E far from both (left: a run); then a hit near
  // A or near B ends the run, at every place: in the group's first pass (before: 0); in the
  // second, behind two seeds that take nothing (1: the run read in place); in the second, over
  // rest_, behind two seeds whose pass copies (2: X left, then Y taken; that pass's seeds are X
  // and A, so a hit near A ends the run there and one near B in the third pass).
  const std::vector<PixelHit> far = {{3, 40, 0, 1, 2}, {3, 60, 0, 2, 3}, {3, 80, 0, 3, 4}};
  for (const uint16_t nearX : {uint16_t{1}, uint16_t{21}}) {
    for (size_t at = 0; at <= far.size(); ++at) {
      for (const int before : {0, 1, 2}) {
        std::vector<PixelHit> hits = {{1, 0, 0, 5, 0}, {2, 20, 0, 6, 1}};
        if (before == 1) {
          hits.insert(hits.begin(), {{0, 200, 200, 7, 8}, {0, 220, 220, 8, 9}});
        } else if (before == 2) {
          hits.insert(hits.begin(), {{0, 200, 200, 7, 8},
                                     {0, 220, 220, 8, 9},
                                     {0, 240, 240, 9, 10},
                                     {0, 201, 200, 1, 11}});
        }
        std::vector<PixelHit> tail = far;
        tail.insert(tail.begin() + static_cast<std::ptrdiff_t>(at), {3, nearX, 1, 9, 5});
        tail.push_back({4, 41, 1, 4, 6});  // near C
        tail.push_back({4, nearX, 2, 3, 7}); // near A or B again, after the copy
        hits.insert(hits.end(), tail.begin(), tail.end());
        Hierarchical2DClusterer clusterer(1, 5);
        expectSame(hits, 1, 5, clusterer);
      }
    }
  }
}

} // namespace
} // namespace efu::reduction
