// SPDX-License-Identifier: BSD-2-Clause
// Seeded 2-D clustering of pixel hits (Timepix3): hits ordered by time are cut into time groups
// at gaps, and each group into clusters around seeds. The behaviour is the ESS EFU's
// Hierarchical2DClusterer's (flushed after every datagram, as its timepix3 module does); the code
// and the cluster summary are ours.
#pragma once

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
    // pass for the time gaps); what it leaves is copied, in order, to rest_, and each further
    // pass compacts rest_ in place: no flags to clear or skip. A single neutron's group (the
    // common case) is one pass, the first seed's alone, with no copy.
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
    PixelHit *const rest = rest_.data();
    PixelHit *left = rest; // one past the last hit left
    const PixelHit second = *h;
    PixelCluster c2 = single(second);
    const int64_t seedX = int64_t{seed.x} - xBelow_, secondX = int64_t{second.x} - xBelow_;
    const uint64_t xWindow = xWindow_;
    for (last = second.timeNs; ++h != end; last = h->timeNs) {
      if (h->timeNs - last > maxTimeGapNs_) {
        break;
      }
      if (nearInX(seedX, *h, xWindow) && near(seed, *h, gap2)) {
        add(c, *h);
      } else if (nearInX(secondX, *h, xWindow) && near(second, *h, gap2)) {
        add(c2, *h);
      } else {
        *left++ = *h;
      }
    }
    out(static_cast<const PixelCluster &>(c));
    out(static_cast<const PixelCluster &>(c2));
    while (left != rest) {
      left = passOverRest(rest, left, out);
    }
    return static_cast<size_t>(h - hits.data());
  }
  /// A pass of the two seeds rest[0] and the first hit it leaves over [rest, left): their
  /// clusters out, the hits neither takes compacted, in order, at rest; returns one past them.
  template <class Out> PixelHit *passOverRest(PixelHit *rest, const PixelHit *left, Out &out) {
    const int64_t gap2 = maxCoordGapSquared_;
    const PixelHit first = rest[0];
    PixelCluster c = single(first);
    const PixelHit *r = rest + 1;
    for (; r != left && near(first, *r, gap2); ++r) {
      add(c, *r);
    }
    if (r == left) {
      out(static_cast<const PixelCluster &>(c));
      return rest;
    }
    const PixelHit second = *r;
    PixelCluster c2 = single(second);
    const int64_t firstX = int64_t{first.x} - xBelow_, secondX = int64_t{second.x} - xBelow_;
    const uint64_t xWindow = xWindow_;
    PixelHit *kept = rest;
    for (++r; r != left; ++r) {
      if (nearInX(firstX, *r, xWindow) && near(first, *r, gap2)) {
        add(c, *r);
      } else if (nearInX(secondX, *r, xWindow) && near(second, *r, gap2)) {
        add(c2, *r);
      } else {
        *kept++ = *r;
      }
    }
    out(static_cast<const PixelCluster &>(c));
    out(static_cast<const PixelCluster &>(c2));
    return kept;
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
