// SPDX-License-Identifier: BSD-2-Clause
// Seeded 2-D clustering of pixel hits (Timepix3): hits ordered by time are cut into time groups
// at gaps, and each group into clusters around seeds. The behaviour is the ESS EFU's
// Hierarchical2DClusterer's (flushed after every datagram, as its timepix3 module does); the code
// and the cluster summary are ours.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace efu::reduction {

/// One pixel hit: time (ns), column, row, and a weight (Timepix3: time over threshold).
struct PixelHit {
  uint64_t timeNs = 0;
  uint16_t x = 0;
  uint16_t y = 0;
  uint16_t weight = 0;
  uint16_t tag = 0; ///< the caller's (e.g. arrival order, to sort ties); not read here
};

/// What a cluster gives an event: extent in time, hit count and weighted sums (integers, exact;
/// the centres are the quotients the ESS computes in doubles, bit for bit).
struct PixelCluster {
  uint64_t timeStartNs = 0; ///< earliest hit time
  uint64_t timeEndNs = 0;   ///< latest hit time
  uint32_t hits = 0;
  uint64_t weightSum = 0;
  uint64_t xMass = 0; ///< sum of weight * x
  uint64_t yMass = 0; ///< sum of weight * y

  /// Latest minus earliest time plus one (an ESS convention: a single time spans 1 ns).
  [[nodiscard]] uint64_t timeSpanNs() const noexcept { return timeEndNs - timeStartNs + 1; }
  /// Weighted centre; NaN when the weights sum to 0.
  [[nodiscard]] double xCenter() const noexcept {
    return static_cast<double>(xMass) / static_cast<double>(weightSum);
  }
  [[nodiscard]] double yCenter() const noexcept {
    return static_cast<double>(yMass) / static_cast<double>(weightSum);
  }
};

/// The rules (docs: common/reduction/README.md):
/// 1. hits come ordered by time; a hit more than maxTimeGapNs after the previous one starts a
///    new time group (exactly maxTimeGapNs stays in the group);
/// 2. within a group, the first hit not yet taken is a seed; every later hit not yet taken whose
///    squared distance to the seed (not to the cluster) is below maxCoordGap^2 joins its cluster;
///    then the next hit not yet taken is the next seed;
/// 3. clusters come out group by group, in seed order.
/// Not thread-safe; one per stream. Allocates only when a call brings more hits than any before.
class Hierarchical2DClusterer {
public:
  Hierarchical2DClusterer(uint64_t maxTimeGapNs, uint16_t maxCoordGap)
      : maxTimeGapNs_(maxTimeGapNs),
        maxCoordGapSquared_(int64_t{maxCoordGap} * int64_t{maxCoordGap}),
        xWindow_(2 * uint64_t{maxCoordGap} - 1), xBelow_(int64_t{maxCoordGap} - 1) {}

  /// Reserves the bookkeeping for calls of up to `hits` hits.
  void reserve(size_t hits) {
    if (rest_.size() < hits) {
      rest_.resize(hits);
    }
  }

  /// Clusters `hits` (ordered by time; ties in the order given) and calls out(const
  /// PixelCluster &) for each cluster. Nothing is kept for the next call.
  template <class Out> void cluster(std::span<const PixelHit> hits, Out &&out) {
    if (rest_.size() < hits.size()) {
      rest_.resize(hits.size()); // never shrunk: sized once for the largest call
    }
    for (size_t begin = 0; begin < hits.size();) {
      begin = clusterGroup(hits, begin, out);
    }
  }

  [[nodiscard]] uint64_t maxTimeGapNs() const noexcept { return maxTimeGapNs_; }
  [[nodiscard]] int64_t maxCoordGapSquared() const noexcept { return maxCoordGapSquared_; }

private:
  /// Clusters the time group that starts at hits[begin]; returns where the next one starts.
  template <class Out> size_t clusterGroup(std::span<const PixelHit> hits, size_t begin, Out &out) {
    // Every hit before a seed is taken or was a seed, so a seed's cluster is simply the hits
    // left after it that lie near it, and the next seed is the first hit it does not take. So
    // a pass serves two seeds: the first's until a hit is not near it, which is the second
    // seed; from there each hit goes to the first seed if near it, else to the second if near
    // it, else is left. The first pass reads the group and finds where it ends (no separate
    // pass for the time gaps); each further pass reads what the one before left: no flags to
    // clear or skip. The hits a pass leaves are not copied while they are a run of the hits it
    // reads (neutrons mostly come one after another in time, so the seeds leave the group's
    // tail); only a hit taken after them makes the pass copy them, in order, to rest_ and
    // compact the rest there. A single neutron's group (the common case) is one pass, the
    // first seed's alone.
    const PixelHit *h = hits.data() + begin;
    const PixelHit *const end = hits.data() + hits.size();
    const int64_t gap2 = maxCoordGapSquared_; // in a register, not reloaded after out()
    const PixelHit seed = *h;
    PixelCluster c = single(seed);
    uint64_t last = seed.timeNs; // here also the cluster's latest: it takes every hit
    for (++h; h != end && h->timeNs - last <= maxTimeGapNs_; last = h->timeNs, ++h) {
      if (!near(seed, *h, gap2)) {
        break;
      }
      addWeights(c, *h);
    }
    c.timeEndNs = last;
    if (h == end || h->timeNs - last > maxTimeGapNs_) {
      out(static_cast<const PixelCluster &>(c));
      return static_cast<size_t>(h - hits.data());
    }
    return static_cast<size_t>(clusterCrowded(seed, c, h, end, out) - hits.data());
  }
  /// The rest of a group of more than one seed, from the second, h (the first seed's cluster c
  /// so far); returns where the next group starts. Out of line: the single seed's group, the
  /// common case, keeps its call of out() inlined.
  template <class Out>
  [[gnu::noinline]] const PixelHit *clusterCrowded(const PixelHit &seed, PixelCluster c,
                                                   const PixelHit *h, const PixelHit *const end,
                                                   Out &out) {
    const Seeds s(seed, *h, *this);
    const uint64_t timeGap = maxTimeGapNs_; // not reloaded after each copy
    PixelCluster c2 = single(s.second);
    const PixelHit *run = nullptr; // the first hit left, while those left are [run, h)
    uint64_t last = s.second.timeNs;
    for (; ++h != end; last = h->timeNs) {
      if (h->timeNs - last > timeGap) {
        break;
      }
      if (!take(s, *h, c, c2)) {
        run = h;
        break;
      }
    }
    PixelHit *const rest = rest_.data();
    PixelHit *left = rest; // one past the hits left, once copied
    if (run != nullptr) {
      for (last = h->timeNs; ++h != end; last = h->timeNs) {
        if (h->timeNs - last > timeGap) {
          break;
        }
        if (take(s, *h, c, c2)) { // the run ends: copied, the group's rest compacted after it
          left = std::copy(run, h, rest);
          run = nullptr;
          for (last = h->timeNs; ++h != end; last = h->timeNs) {
            if (h->timeNs - last > timeGap) {
              break;
            }
            if (!take(s, *h, c, c2)) {
              *left++ = *h;
            }
          }
          break;
        }
      }
    }
    out(static_cast<const PixelCluster &>(c));
    out(static_cast<const PixelCluster &>(c2));
    const PixelHit *from = run != nullptr ? run : rest;
    const PixelHit *to = run != nullptr ? h : left;
    while (from != to) {
      passOverRest(from, to, out);
    }
    return h;
  }
  /// A pass's two seeds with nearInX()'s offsets of their columns, and the limits (locals: in
  /// registers, not reloaded after the stores of a copy).
  struct Seeds {
    Seeds(const PixelHit &a, const PixelHit &b, const Hierarchical2DClusterer &k) noexcept
        : first(a), second(b), firstX(int64_t{a.x} - k.xBelow_),
          secondX(int64_t{b.x} - k.xBelow_), gap2(k.maxCoordGapSquared_), xWindow(k.xWindow_) {}
    PixelHit first, second;
    int64_t firstX, secondX;
    int64_t gap2;
    uint64_t xWindow;
  };
  /// Adds h to c if it is near the first seed, else to c2 if near the second; false if neither.
  [[nodiscard]] static bool take(const Seeds &s, const PixelHit &h, PixelCluster &c,
                                 PixelCluster &c2) noexcept {
    if (nearInX(s.firstX, h, s.xWindow) && near(s.first, h, s.gap2)) {
      add(c, h);
      return true;
    }
    if (nearInX(s.secondX, h, s.xWindow) && near(s.second, h, s.gap2)) {
      add(c2, h);
      return true;
    }
    return false;
  }
  /// A pass of the two seeds *from and the first hit it leaves over [from, to) (hits a pass
  /// left, in order; in rest_ or a run of the caller's): their clusters out, and [from, to) set
  /// to the hits neither takes, in order (the run of them, or copied to rest_'s start).
  template <class Out> void passOverRest(const PixelHit *&from, const PixelHit *&to, Out &out) {
    const int64_t gap2 = maxCoordGapSquared_;
    const PixelHit first = *from;
    PixelCluster c = single(first);
    const PixelHit *r = from + 1;
    const PixelHit *const end = to;
    for (; r != end && near(first, *r, gap2); ++r) {
      add(c, *r);
    }
    if (r == end) {
      out(static_cast<const PixelCluster &>(c));
      from = end;
      return;
    }
    const Seeds s(first, *r, *this);
    PixelCluster c2 = single(s.second);
    const PixelHit *run = nullptr; // as in clusterCrowded()
    for (++r; r != end; ++r) {
      if (!take(s, *r, c, c2)) {
        run = r;
        break;
      }
    }
    PixelHit *const rest = rest_.data();
    PixelHit *kept = rest;
    if (run != nullptr) {
      for (++r; r != end; ++r) {
        if (take(s, *r, c, c2)) { // the run ends: copied forward to rest_'s start
          kept = std::copy(run, r, rest);
          run = nullptr;
          for (++r; r != end; ++r) {
            if (!take(s, *r, c, c2)) {
              *kept++ = *r;
            }
          }
          break;
        }
      }
    }
    out(static_cast<const PixelCluster &>(c));
    out(static_cast<const PixelCluster &>(c2));
    from = run != nullptr ? run : rest;
    to = run != nullptr ? end : kept;
  }
  /// |h.x - x| below maxCoordGap, given seedX = x - (maxCoordGap - 1) and xWindow = 2 maxCoordGap
  /// - 1 (as unsigned): a hit near() a seed passes it (with a gap of 0 it may pass or not: no hit
  /// is near then). One subtraction and a compare, first, where most hits are far from the seeds.
  [[nodiscard]] static bool nearInX(int64_t seedX, const PixelHit &h, uint64_t xWindow) noexcept {
    return static_cast<uint64_t>(int64_t{h.x} - seedX) < xWindow;
  }
  /// Squared distance below gap2 (maxCoordGap^2).
  [[nodiscard]] static bool near(const PixelHit &seed, const PixelHit &h, int64_t gap2) noexcept {
    const int64_t dx = int64_t{h.x} - int64_t{seed.x};
    const int64_t dy = int64_t{h.y} - int64_t{seed.y};
    return dx * dx + dy * dy < gap2;
  }
  static PixelCluster single(const PixelHit &h) noexcept {
    return {h.timeNs, h.timeNs, 1, h.weight, uint64_t{h.weight} * h.x, uint64_t{h.weight} * h.y};
  }
  /// Adds a hit after the cluster's in time: its seed, the first, stays the earliest, and each
  /// hit added is the latest so far.
  static void add(PixelCluster &c, const PixelHit &h) noexcept {
    c.timeEndNs = h.timeNs;
    addWeights(c, h);
  }
  /// add() but for the time, which the caller sets.
  static void addWeights(PixelCluster &c, const PixelHit &h) noexcept {
    ++c.hits;
    c.weightSum += h.weight;
    c.xMass += uint64_t{h.weight} * h.x;
    c.yMass += uint64_t{h.weight} * h.y;
  }

  uint64_t maxTimeGapNs_;
  int64_t maxCoordGapSquared_;
  uint64_t xWindow_; ///< nearInX()'s: 2 maxCoordGap - 1
  int64_t xBelow_;   ///< maxCoordGap - 1
  std::vector<PixelHit> rest_; ///< the hits of a group no seed has taken yet
};

} // namespace efu::reduction
