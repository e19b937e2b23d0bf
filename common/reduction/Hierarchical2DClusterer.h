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
        maxCoordGapSquared_(int64_t{maxCoordGap} * int64_t{maxCoordGap}) {}

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
    // left after it that lie near it. The first seed's pass reads the group and finds where it
    // ends (no separate pass for the time gaps); what it leaves is copied, in order, to rest_,
    // and each later seed (rest_'s first) compacts rest_ in place: a pass per cluster over the
    // hits still free, no flags to clear or skip. A single neutron's group (the common case)
    // is one pass and no copy.
    const PixelHit *h = hits.data() + begin;
    const PixelHit *const end = hits.data() + hits.size();
    const PixelHit seed = *h;
    PixelCluster c = single(seed);
    PixelHit *const rest = rest_.data();
    PixelHit *left = rest; // one past the last hit left
    for (uint64_t last = seed.timeNs; ++h != end; last = h->timeNs) {
      if (h->timeNs - last > maxTimeGapNs_) {
        break;
      }
      if (near(seed, *h)) {
        add(c, *h);
      } else {
        *left++ = *h;
      }
    }
    out(static_cast<const PixelCluster &>(c));
    while (left != rest) {
      const PixelHit next = rest[0];
      c = single(next);
      PixelHit *kept = rest;
      for (const PixelHit *r = rest + 1; r != left; ++r) {
        if (near(next, *r)) {
          add(c, *r);
        } else {
          *kept++ = *r;
        }
      }
      left = kept;
      out(static_cast<const PixelCluster &>(c));
    }
    return static_cast<size_t>(h - hits.data());
  }
  /// Squared distance below maxCoordGap^2.
  [[nodiscard]] bool near(const PixelHit &seed, const PixelHit &h) const noexcept {
    const int64_t dx = int64_t{h.x} - int64_t{seed.x};
    const int64_t dy = int64_t{h.y} - int64_t{seed.y};
    return dx * dx + dy * dy < maxCoordGapSquared_;
  }
  static PixelCluster single(const PixelHit &h) noexcept {
    return {h.timeNs, h.timeNs, 1, h.weight, uint64_t{h.weight} * h.x, uint64_t{h.weight} * h.y};
  }
  /// Adds a hit after the cluster's in time: its seed, the first, stays the earliest, and each
  /// hit added is the latest so far.
  static void add(PixelCluster &c, const PixelHit &h) noexcept {
    c.timeEndNs = h.timeNs;
    ++c.hits;
    c.weightSum += h.weight;
    c.xMass += uint64_t{h.weight} * h.x;
    c.yMass += uint64_t{h.weight} * h.y;
  }

  uint64_t maxTimeGapNs_;
  int64_t maxCoordGapSquared_;
  std::vector<PixelHit> rest_; ///< the hits of a group no seed has taken yet
};

} // namespace efu::reduction
