// SPDX-License-Identifier: BSD-2-Clause
// Two-plane event building for Multi-Blade VMM3 detectors (FREIA, ESTIA, AMOR): time-gap
// clustering per plane and time-gap matching of both planes, result for result what the ESS
// EFU's Multi-Blade event building gives with a full flush after every datagram
// (common/reduction/README.md has the rules).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace efu::reduction {

/// One hit of a plane. Times are ns; plane 0 = A, 1 = B, any other plane is dropped.
struct Hit {
  uint64_t timeNs;
  uint16_t coord;
  uint16_t weight;
  uint8_t plane;
};

/// One plane's part of an event: aggregates of the hits merged into it. An empty one holds the
/// identities of its aggregates (times and coordinates inverted, sums 0); read only hits,
/// weightSum and coordMass of an empty cluster.
struct PlaneCluster {
  uint64_t timeStart = std::numeric_limits<uint64_t>::max();  ///< earliest hit time
  uint64_t timeEnd = 0;                                       ///< latest hit time
  uint16_t coordStart = std::numeric_limits<uint16_t>::max(); ///< lowest coordinate
  uint16_t coordEnd = 0;                                      ///< highest coordinate
  uint32_t hits = 0;    ///< number of hits (duplicates of one coordinate each count)
  double weightSum = 0; ///< sum(weight)
  double coordMass = 0; ///< sum(weight * coord)
  /// The ESS EFU's Cluster::coordUtpc(false) of this plane of the event (NMX's pixel): the
  /// coordinate of the first cluster matched into the plane (its earliest hit time, the lowest
  /// coordinate at that time), or on the split path that of the part's latest hits as
  /// Cluster::insert tracks them (README.md, "uTPC coordinate").
  uint16_t utpcCoord = 0;

  [[nodiscard]] bool empty() const noexcept { return hits == 0; }
  /// 0 when empty, else coordEnd - coordStart + 1 (in 16 bits, as the ESS EFU computes it).
  [[nodiscard]] uint16_t coordSpan() const noexcept {
    return empty() ? uint16_t{0} : static_cast<uint16_t>(coordEnd - coordStart + 1);
  }
  /// True when more than maxGap coordinates inside the span have no hit (counting hits, so
  /// duplicates of a coordinate hide missing ones).
  [[nodiscard]] bool hasGap(uint8_t maxGap) const noexcept {
    return uint64_t{hits} + maxGap < coordSpan();
  }
  /// Weighted mean coordinate; NaN when weightSum == 0 (callers handle it).
  [[nodiscard]] double coordCenter() const noexcept { return coordMass / weightSum; }
};

/// A formed event: its plane A and plane B parts (either may be empty).
struct Event2D {
  PlaneCluster a, b;

  /// Earliest hit time over the non-empty planes (UINT64_MAX when both are empty).
  [[nodiscard]] uint64_t timeStart() const noexcept {
    if (a.empty()) {
      return b.timeStart;
    }
    if (b.empty()) {
      return a.timeStart;
    }
    return a.timeStart < b.timeStart ? a.timeStart : b.timeStart;
  }
  [[nodiscard]] bool bothPlanes() const noexcept { return !a.empty() && !b.empty(); }
  [[nodiscard]] bool empty() const noexcept { return a.empty() && b.empty(); }
};

/// The ESS Multi-Blade parameters (config keys MaxClusteringTimeGap, MaxMatchingTimeGap,
/// SplitMultiEvents, SplitMultiEventsCoefficientLow/High) with their defaults.
struct BuilderParams {
  uint64_t clusterTimeGapNs = 500;
  uint64_t matchTimeGapNs = 500;
  bool splitMultiEvents = false;
  float coefficientLow = 0.8f;
  float coefficientHigh = 1.2f;
};

/// Counts of one builder: cumulative in stats(), per flush as flush() returns them.
struct BuilderStats {
  int64_t spanTooLarge = 0;          ///< events that took the split path
  int64_t splitSpanTooLarge = 0;     ///< ... and were split into two
  int64_t discardedSpanTooLarge = 0; ///< ... and were dropped
  int64_t invalidPlane = 0;          ///< hits dropped for a plane other than 0 and 1
};

/// Collects hits, and on flush() clusters each plane and matches the clusters into events.
/// All storage is kept between flushes: after warm-up neither insert() nor flush() allocates
/// (out grows only if the caller does not reuse it). Single thread.
class EventBuilder2D {
public:
  /// On the split path a coordinate step larger than this starts a plane's second part.
  static constexpr uint16_t kSplitCoordGap = 10;
  /// Events with a plane spanning this many coordinates or more take the split path.
  static constexpr uint16_t kMaxCoordSpan = 10;

  explicit EventBuilder2D(const BuilderParams &p);

  /// Appends a hit (dropped, and counted, when its plane is neither 0 nor 1).
  void insert(const Hit &h) noexcept {
    if (h.plane < 2) [[likely]] {
      std::vector<Stored> &v = hits_[h.plane];
      v.push_back(Stored{h.timeNs, h.coord, h.weight, 0});
    } else {
      ++stats_.invalidPlane;
    }
  }
  class Plane;
  /// Where insert() puts plane 0's or 1's hits, for a caller that keeps it per source of hits
  /// (no plane test and no address arithmetic per hit). Valid while the builder does not move.
  [[nodiscard]] Plane plane(unsigned p) noexcept;
  /// Forms the events of every hit inserted since the last flush and calls onEvent(const
  /// Event2D &) for each in closing order, then forgets the hits. Returns what was counted since
  /// the last flush. Inlined into the caller: no event is stored on the way.
  template <class OnEvent> BuilderStats flushEach(OnEvent &&onEvent) {
    for (int plane = 0; plane < 2; ++plane) {
      // Commonly one call: addGroups finds the groups on the hits as inserted.
      if (!hits_[plane].empty() && (!groupsAsInserted_ || !addGroups(plane))) {
        clusterPlane(plane);
      }
    }
    match(onEvent);
    return reset();
  }
  /// flushEach() appending the events to out.
  BuilderStats flush(std::vector<Event2D> &out) {
    return flushEach([&out](const Event2D &e) { out.push_back(e); });
  }
  /// Hits waiting for the next flush.
  [[nodiscard]] size_t pending() const noexcept { return hits_[0].size() + hits_[1].size(); }
  [[nodiscard]] const BuilderStats &stats() const noexcept { return stats_; }
  [[nodiscard]] const BuilderParams &params() const noexcept { return params_; }

private:
  /// A hit as kept: 16 bytes without padding, so sorting moves it as one unit.
  struct Stored {
    uint64_t timeNs;
    uint16_t coord;
    uint16_t weight;
    /// Insertion index since the last flush (the ESS EFU's hit order), set by clusterPlane
    /// before it sorts the plane (sorted_); until then the hits are in insertion order.
    uint32_t seq;
  };
  /// What matching takes from a plane: a cluster (the hits of one coordinate within one time
  /// group), or a whole time group when matching cannot tell the two apart (see clusterPlane).
  // timeStart and timeEnd apart: side by side, GCC keeps addGroups' running start and end as
  // one vector register, which puts two register moves on its per-hit dependency chain.
  struct Cluster {
    uint64_t timeStart;
    double weightSum;
    uint64_t timeEnd;
    double coordMass;
    uint32_t hits;
    uint32_t firstHit; ///< its hits are hits_[plane][firstHit, firstHit + hits)
    uint16_t coordStart, coordEnd;
    uint16_t utpcCoord; ///< its first ESS cluster's coordinate (see PlaneCluster::utpcCoord)
  };
  /// One ESS cluster (hits of one coordinate within a time group) on the split path:
  /// essOrder_[plane][begin, end).
  struct Run {
    uint64_t timeStart;
    uint32_t begin, end;
  };

  /// Sorts the plane's hits by time and forms its matching entries (after addGroups found a
  /// hit before its group's start, or when the groups are not matched whole).
  void clusterPlane(int plane);
  [[nodiscard]] bool addGroups(int plane);
  void addClusters(int plane, size_t begin, size_t end);
  template <class OnEvent> void match(OnEvent &onEvent);
  /// The split path of an event whose clusters are clusters_[0][a0, a1) and clusters_[1][b0,
  /// b1): fills parts and returns how many events it becomes (0 or 2).
  int split(size_t a0, size_t a1, size_t b0, size_t b1, Event2D (&parts)[2]);
  void splitPlane(int plane, size_t c0, size_t c1, PlaneCluster &part1, PlaneCluster &part2);
  /// Forgets the flushed hits and clusters; returns the counts since the last flush.
  BuilderStats reset() noexcept {
    for (int plane = 0; plane < 2; ++plane) {
      hits_[plane].clear();
      clusters_[plane].clear();
      essOrderReady_[plane] = false;
      sorted_[plane] = false;
    }
    const BuilderStats added{stats_.spanTooLarge - returned_.spanTooLarge,
                             stats_.splitSpanTooLarge - returned_.splitSpanTooLarge,
                             stats_.discardedSpanTooLarge - returned_.discardedSpanTooLarge,
                             stats_.invalidPlane - returned_.invalidPlane};
    returned_ = stats_;
    return added;
  }
  void essOrder(int plane);
  [[nodiscard]] bool weightsMatch(const PlaneCluster &x, const PlaneCluster &y) const noexcept;

  const BuilderParams params_;
  const double low_, high_; ///< the float coefficients, promoted once
  /// A time group is one entry for matching and its groups can be found on unsorted hits
  /// (clusterPlane in EventBuilder2D.cpp).
  const bool groupsAsInserted_;
  std::vector<Stored> hits_[2];
  std::vector<Cluster> clusters_[2];
  std::vector<Stored> scratch_; ///< hits being sorted by coordinate outside their plane's array
  /// Split path only: each plane's hits in the ESS EFU's order (insertion order sorted by time
  /// with std::sort, then each time group by coordinate with std::sort), built once per flush.
  std::vector<Stored> essOrder_[2];
  bool essOrderReady_[2] = {false, false};
  bool sorted_[2] = {false, false}; ///< hits_[plane] sorted by time since the last flush
  std::vector<Run> runs_;
  BuilderStats stats_;
  BuilderStats returned_; ///< stats_ at the last flush
};

/// One plane of an EventBuilder2D (EventBuilder2D::plane()).
class EventBuilder2D::Plane {
public:
  Plane() = default;
  /// insert() of a hit of this plane.
  void insert(uint64_t timeNs, uint16_t coord, uint16_t weight) const noexcept {
    hits_->push_back(Stored{timeNs, coord, weight, 0});
  }

private:
  friend class EventBuilder2D;
  explicit Plane(std::vector<Stored> *hits) noexcept : hits_(hits) {}
  std::vector<Stored> *hits_ = nullptr;
};

inline EventBuilder2D::Plane EventBuilder2D::plane(unsigned p) noexcept {
  return Plane(&hits_[p]);
}

// Both planes' clusters in stable timeStart order (a merge of the two ordered lists, plane A
// first on equal times); a cluster joins the open event unless it starts more than
// matchTimeGapNs after the latest end of the clusters already in it. An event's clusters are
// clusters_[0][a0, i) and clusters_[1][b0, j).
template <class OnEvent> void EventBuilder2D::match(OnEvent &onEvent) {
  const std::vector<Cluster> &ca = clusters_[0];
  const std::vector<Cluster> &cb = clusters_[1];
  const size_t na = ca.size(), nb = cb.size();
  if (na == 0 && nb == 0) {
    return;
  }
  const uint64_t gap = params_.matchTimeGapNs;
  size_t i = 0, j = 0, a0 = 0, b0 = 0;
  Event2D ev;
  // The latest end of the open event's clusters; before the first cluster, that cluster's start
  // (so it joins). A cluster that closes an event starts after evEnd, so the max below makes
  // evEnd the new event's first end.
  uint64_t evEnd = nb == 0 || (na != 0 && ca[0].timeStart <= cb[0].timeStart) ? ca[0].timeStart
                                                                              : cb[0].timeStart;
  const auto close = [&] {
    if (!params_.splitMultiEvents ||
        (ev.a.coordSpan() < kMaxCoordSpan && ev.b.coordSpan() < kMaxCoordSpan)) [[likely]] {
      onEvent(static_cast<const Event2D &>(ev));
      return;
    }
    Event2D parts[2];
    const int n = split(a0, i, b0, j, parts);
    for (int k = 0; k < n; ++k) {
      onEvent(static_cast<const Event2D &>(parts[k]));
    }
  };
  const auto join = [](PlaneCluster &p, const Cluster &c) {
    if (p.hits == 0) {
      p.utpcCoord = c.utpcCoord; // the ESS event plane takes its first cluster whole
    }
    p.timeStart = std::min(p.timeStart, c.timeStart);
    p.timeEnd = std::max(p.timeEnd, c.timeEnd);
    p.coordStart = std::min(p.coordStart, c.coordStart);
    p.coordEnd = std::max(p.coordEnd, c.coordEnd);
    p.hits += c.hits;
    p.weightSum += c.weightSum;
    p.coordMass += c.coordMass;
  };
  while (i < na || j < nb) {
    const bool fromA = j == nb || (i < na && ca[i].timeStart <= cb[j].timeStart);
    const Cluster &c = fromA ? ca[i] : cb[j];
    if (c.timeStart > evEnd && c.timeStart - evEnd > gap) {
      close();
      ev = Event2D{};
      a0 = i;
      b0 = j;
    }
    evEnd = std::max(evEnd, c.timeEnd);
    if (fromA) {
      join(ev.a, c);
      ++i;
    } else {
      join(ev.b, c);
      ++j;
    }
  }
  close();
}

} // namespace efu::reduction
