// SPDX-License-Identifier: BSD-2-Clause
// sortByTime (Timepix3Module.h), the module's sort of a datagram's hits, against
// std::stable_sort by time: random, sorted, reversed, equal and few-valued times, times that
// differ only in their highest bits, and the sizes from 0 to the largest datagram.
#include "modules/timepix3/Timepix3Module.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace efu::timepix3 {
namespace {

using reduction::PixelHit;

/// Hits with the given times, the other fields telling them apart (tag: the position).
std::vector<PixelHit> hitsAt(const std::vector<uint64_t> &times) {
  std::vector<PixelHit> hits;
  for (size_t i = 0; i < times.size(); ++i) {
    hits.push_back({times[i], static_cast<uint16_t>(i * 7 % 256), static_cast<uint16_t>(i % 251),
                    static_cast<uint16_t>(i % 1024), static_cast<uint16_t>(i)});
  }
  return hits;
}

/// sortByTime(hits) — or, with `bounded`, sortByTime(hits, earliest, latest) given the times'
/// least and greatest, as the decode finds them — equals std::stable_sort by time, every field.
void expectStableSort(const std::vector<uint64_t> &times, bool bounded = false) {
  const std::vector<PixelHit> hits = hitsAt(times);
  std::vector<PixelHit> expected = hits;
  std::stable_sort(expected.begin(), expected.end(),
                   [](const PixelHit &a, const PixelHit &b) { return a.timeNs < b.timeNs; });
  std::vector<PixelHit> buffer = hits;
  std::vector<PixelHit> scratch(hits.size());
  const PixelHit *sorted = nullptr;
  if (bounded && !times.empty()) {
    const auto [low, high] = std::minmax_element(times.begin(), times.end());
    sorted = sortByTime(buffer.data(), scratch.data(), hits.size(), *low, *high);
  } else {
    sorted = sortByTime(buffer.data(), scratch.data(), hits.size());
  }
  ASSERT_TRUE(sorted == buffer.data() || sorted == scratch.data());
  for (size_t i = 0; i < hits.size(); ++i) {
    ASSERT_EQ(sorted[i].timeNs, expected[i].timeNs) << "at " << i << " of " << hits.size();
    ASSERT_EQ(sorted[i].tag, expected[i].tag) << "at " << i << " of " << hits.size();
    ASSERT_EQ(sorted[i].x, expected[i].x);
    ASSERT_EQ(sorted[i].y, expected[i].y);
    ASSERT_EQ(sorted[i].weight, expected[i].weight);
  }
}

constexpr size_t kLargest = 8191; // hits in the largest datagram

TEST(Timepix3Sort, SmallSizes) {
  std::mt19937_64 rng(1);
  for (size_t n = 0; n <= 40; ++n) {
    std::vector<uint64_t> t(n);
    for (auto &v : t) {
      v = 1'700'000'000'000'000'000ULL + rng() % 64;
    }
    expectStableSort(t);
  }
}

TEST(Timepix3Sort, RandomTimesOfEverySpan) {
  std::mt19937_64 rng(2);
  for (int bits = 0; bits <= 64; ++bits) {
    for (const size_t n : {size_t{3}, size_t{100}, size_t{1104}, kLargest}) {
      const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      const uint64_t base = bits == 64 ? 0 : rng() & ~mask;
      std::vector<uint64_t> t(n);
      for (auto &v : t) {
        v = base | (rng() & mask);
      }
      expectStableSort(t);
    }
  }
}

TEST(Timepix3Sort, SortedReversedAndEqual) {
  std::vector<uint64_t> up(kLargest), down(kLargest), same(kLargest, 12345);
  for (size_t i = 0; i < kLargest; ++i) {
    up[i] = 1'000'000 + 37 * i;
    down[i] = 1'000'000 + 37 * (kLargest - i);
  }
  expectStableSort(up);
  expectStableSort(down);
  expectStableSort(same);
  expectStableSort({UINT64_MAX, 0, UINT64_MAX, 0, 1, UINT64_MAX - 1});
}

TEST(Timepix3Sort, FewTimesManyTies) {
  std::mt19937_64 rng(3);
  for (const uint64_t distinct : {2U, 3U, 9U, 256U, 257U}) {
    std::vector<uint64_t> t(kLargest);
    for (auto &v : t) {
      v = 5'000'000'000 + (rng() % distinct) * 800; // the gaps of neutrons' 9-hit bunches
    }
    expectStableSort(t);
  }
}

TEST(Timepix3Sort, TimesDifferingInHighBitsOnly) {
  // Every low digit equal (the passes that move nothing are skipped), the last one decides.
  std::mt19937_64 rng(4);
  for (const int shift : {8, 24, 40, 56}) {
    std::vector<uint64_t> t(1000);
    for (auto &v : t) {
      v = 0xABCD + ((rng() % 5) << shift);
    }
    expectStableSort(t);
  }
}

TEST(Timepix3Sort, ShuffledDatagramOfNeutrons) {
  // As a camera sends them out of order: bunches of nine equal times, shuffled.
  std::mt19937_64 rng(5);
  std::vector<uint64_t> t;
  uint64_t now = 1'700'000'000'000'000'000ULL;
  while (t.size() + 9 <= 1104) {
    now += rng() % 70'000;
    t.insert(t.end(), 9, now);
  }
  std::shuffle(t.begin(), t.end(), rng);
  expectStableSort(t);
}

TEST(Timepix3Sort, NestedBunchesOfTimes) {
  // Times that bunch at every scale (most hits in one bucket, most of those in one of its
  // buckets, ...): the sort recurses into bucket after bucket, down to the lowest bits.
  std::mt19937_64 rng(6);
  for (const size_t n : {size_t{33}, size_t{100}, size_t{1104}, kLargest}) {
    std::vector<uint64_t> t(n);
    for (auto &v : t) {
      const auto scale = static_cast<int>(rng() % 64);
      v = 77 + ((rng() % 3) << scale);
    }
    expectStableSort(t);
    std::vector<uint64_t> top(n);
    for (auto &v : top) {
      v = UINT64_MAX - (rng() >> (rng() % 64));
    }
    expectStableSort(top);
  }
}

TEST(Timepix3Sort, BucketsAroundTheInsertionLimit) {
  // Runs of 31 to 34 equal or near times, far apart: buckets just under and over the limit
  // that sorts a bucket by itself before the insertion of the whole.
  std::mt19937_64 rng(7);
  for (size_t run = 31; run <= 34; ++run) {
    std::vector<uint64_t> t;
    for (uint64_t k = 0; t.size() + run <= 2000; ++k) {
      for (size_t i = 0; i < run; ++i) {
        t.push_back(1'000'000'000 + k * 1'000'000 + rng() % 3);
      }
    }
    std::shuffle(t.begin(), t.end(), rng);
    expectStableSort(t);
  }
}

TEST(Timepix3Sort, NeutronsWithSpreadTimesShuffled) {
  // Nine hits a neutron over up to 200 ns (a real camera's spread), neutrons 0 to 20 us apart,
  // each datagram shuffled whole or only locally.
  std::mt19937_64 rng(8);
  for (const bool local : {false, true}) {
    std::vector<uint64_t> t;
    uint64_t now = 1'700'000'000'000'000'000ULL;
    while (t.size() + 9 <= 1104) {
      now += rng() % 20'000;
      for (int i = 0; i < 9; ++i) {
        t.push_back(now + rng() % 200);
      }
    }
    if (local) {
      for (size_t i = 0; i + 16 <= t.size(); i += 16) {
        std::shuffle(t.begin() + static_cast<std::ptrdiff_t>(i),
                     t.begin() + static_cast<std::ptrdiff_t>(i + 16), rng);
      }
    } else {
      std::shuffle(t.begin(), t.end(), rng);
    }
    expectStableSort(t);
  }
}

// The decode finds the earliest and latest times of hits out of order and hands them to the
// sort, which then needs no pass of its own.
TEST(Timepix3Sort, WithinKnownBounds) {
  std::mt19937_64 rng(11);
  for (int bits = 0; bits <= 64; bits += 3) {
    for (const size_t n : {size_t{1}, size_t{2}, size_t{33}, size_t{1104}, size_t{8191}}) {
      const uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      const uint64_t base = bits == 64 ? 0 : rng() & ~mask;
      std::vector<uint64_t> t(n);
      for (auto &v : t) {
        v = base | (rng() & mask);
      }
      expectStableSort(t, true);
      std::vector<uint64_t> bunched(n); // most times in one place, a few far off
      for (auto &v : bunched) {
        v = base | ((rng() % 8 == 0 ? rng() : 5) & mask);
      }
      expectStableSort(bunched, true);
    }
  }
  expectStableSort({UINT64_MAX, 0, UINT64_MAX, 0, 1, UINT64_MAX - 1}, true);
}

} // namespace
} // namespace efu::timepix3
