// SPDX-License-Identifier: BSD-2-Clause
// Two-plane event building for Multi-Blade VMM3 detectors (common/reduction/README.md).
#include "common/reduction/EventBuilder2D.h"

#include "common/reduction/AdaptiveSort.h"

#include <algorithm>

namespace efu::reduction {
namespace {

constexpr auto kByTime = [](const auto &x, const auto &y) noexcept { return x.timeNs < y.timeNs; };
constexpr auto kByCoord = [](const auto &x, const auto &y) noexcept { return x.coord < y.coord; };

/// Adds one hit to a part's aggregates.
template <typename H> void addHit(PlaneCluster &p, const H &h) noexcept {
  p.timeStart = std::min(p.timeStart, h.timeNs);
  p.timeEnd = std::max(p.timeEnd, h.timeNs);
  p.coordStart = std::min(p.coordStart, h.coord);
  p.coordEnd = std::max(p.coordEnd, h.coord);
  ++p.hits;
  p.weightSum += static_cast<double>(h.weight);
  p.coordMass += static_cast<double>(h.weight) * static_cast<double>(h.coord);
}

/// A sum of 16-bit weights or of weight * coord as a double: below 2^53, so the signed conversion
/// (one instruction; the unsigned one tests the sign bit first) gives the same value.
inline double toDouble(uint64_t sum) noexcept {
  return static_cast<double>(static_cast<int64_t>(sum));
}

/// The ESS EFU's uTPC index of a cluster built hit by hit (Cluster::insert): the first and the
/// last position holding its latest time, and the choice coordUtpc(false) makes between them.
struct UtpcTrack {
  uint32_t n = 0;
  uint64_t timeEnd = 0;
  uint32_t first = 0, last = 0;
  uint16_t firstCoord = 0, lastCoord = 0;
  uint16_t firstWeight = 0, lastWeight = 0;

  template <typename H> void add(const H &h) noexcept {
    if (n == 0 || h.timeNs > timeEnd) {
      timeEnd = h.timeNs;
      first = last = n;
      firstCoord = lastCoord = h.coord;
      firstWeight = lastWeight = h.weight;
    } else if (h.timeNs == timeEnd) {
      last = n;
      lastCoord = h.coord;
      lastWeight = h.weight;
    }
    ++n;
  }
  /// The position closer to its end of the cluster; at equal distances the heavier hit, the
  /// last one on equal weights.
  [[nodiscard]] uint16_t coord() const noexcept {
    if (first == last) {
      return lastCoord;
    }
    const int64_t before = first;
    const int64_t after = int64_t{n} - 1 - last;
    if (before != after) {
      return before < after ? firstCoord : lastCoord;
    }
    return firstWeight > lastWeight ? firstCoord : lastCoord;
  }
};

} // namespace

EventBuilder2D::EventBuilder2D(const BuilderParams &p)
    : params_(p), low_(static_cast<double>(p.coefficientLow)),
      high_(static_cast<double>(p.coefficientHigh)),
      groupsAsInserted_(p.matchTimeGapNs >= p.clusterTimeGapNs && p.clusterTimeGapNs >> 63 == 0) {
  for (int plane = 0; plane < 2; ++plane) {
    hits_[plane].reserve(1024);
    clusters_[plane].reserve(1024);
  }
  scratch_.reserve(256);
}

// Time groups: in time order, a step of more than clusterTimeGapNs starts a new group.
//
// When matchTimeGapNs >= clusterTimeGapNs a time group is one entry for matching (the coordinate
// sort is skipped; the ESS Multi-Blade defaults, 500 and 500, are such a case). Exact, because
// matching never separates the clusters of one group: for a cluster c of the group that does not
// start first, some hit of the group lies in [c.timeStart - clusterTimeGapNs, c.timeStart), in a
// cluster merged before c. No event closed since: the closing cluster would start more than
// matchTimeGapNs after that hit, so after c, yet come before c. So the open event ends within
// clusterTimeGapNs <= matchTimeGapNs of c's start and c joins. A cluster of the other plane that
// would come between the group's clusters joins either way (the group ends at or after its
// start), so every decision, event end and aggregate stays the same.
//
// A plane's hits mostly arrive in time order, or out of it only among hits close in time
// (readoutgen's always arrive in order). So the groups are found on the hits as
// inserted (addGroups), and only a hit earlier than the start of the open group makes the plane
// sort and group again. The groups found without sorting are those of the sorted hits: a group
// opens with a hit more than the gap after the latest hit so far, and takes each later hit from
// its start to the gap after its latest one; so within a group no step in time order exceeds
// the gap, and between two groups every step does. Each group is a run of the hits as inserted,
// of the same length as in time order, so its index range (firstHit) is the same in both orders.
// (flushEach tries addGroups first when groupsAsInserted_; from a gap of 2^63 a step back can wrap
// around to no more than the gap, so such gaps always sort first.)
void EventBuilder2D::clusterPlane(int plane) {
  std::vector<Stored> &v = hits_[plane];
  const size_t n = v.size();
  clusters_[plane].clear();
  for (size_t i = 0; i < n; ++i) {
    v[i].seq = static_cast<uint32_t>(i);
  }
  sorted_[plane] = true;
  adaptiveSort(v.data(), n, kByTime);
  if (params_.matchTimeGapNs >= params_.clusterTimeGapNs) {
    static_cast<void>(addGroups(plane)); // sorted: true
    return;
  }
  const Stored *h = v.data();
  const uint64_t gap = params_.clusterTimeGapNs;
  size_t begin = 0;
  for (size_t i = 1; i < n; ++i) {
    if (h[i].timeNs - h[i - 1].timeNs > gap) {
      addClusters(plane, begin, i);
      begin = i;
    }
  }
  addClusters(plane, begin, n);
}

// One entry per time group of the plane's hits, aggregated while finding the groups (see
// clusterPlane). Returns false, with some entries added, at the first hit earlier than the start
// of its group. A hit earlier than the group's latest makes the step wrap around to more than
// any gap below 2^63, so it takes the rare branch.
// Sums of 16-bit weights and weight * coord stay far below 2^53: exact as doubles.
bool EventBuilder2D::addGroups(int plane) {
  const Stored *h = hits_[plane].data();
  const size_t n = hits_[plane].size();
  std::vector<Cluster> &out = clusters_[plane];
  const uint64_t gap = params_.clusterTimeGapNs;
  size_t begin = 0;
  uint64_t start = h[0].timeNs, end = h[0].timeNs;
  uint16_t lo = h[0].coord, hi = h[0].coord;
  // The group's first ESS cluster starts at its earliest time with the lowest coordinate there.
  uint16_t utpc = h[0].coord;
  uint64_t weights = h[0].weight, mass = uint64_t{h[0].weight} * h[0].coord;
  for (size_t i = 1; i < n; ++i) {
    const uint64_t t = h[i].timeNs;
    if (t - end > gap) {
      if (t > end) { // a step of more than the gap: the next group
        out.push_back(Cluster{start, toDouble(weights), end, toDouble(mass),
                              static_cast<uint32_t>(i - begin), static_cast<uint32_t>(begin), lo,
                              hi, utpc});
        begin = i;
        start = t;
        lo = hi = utpc = h[i].coord;
        weights = mass = 0;
      } else if (t < start) [[unlikely]] {
        return false;
      } // else back in time within the group: it joins
    }
    end = std::max(end, t);
    if (t == start) {
      utpc = std::min(utpc, h[i].coord);
    }
    lo = std::min(lo, h[i].coord);
    hi = std::max(hi, h[i].coord);
    weights += h[i].weight;
    mass += uint64_t{h[i].weight} * h[i].coord;
  }
  out.push_back(Cluster{start, toDouble(weights), end, toDouble(mass),
                        static_cast<uint32_t>(n - begin), static_cast<uint32_t>(begin), lo, hi,
                        utpc});
  return true;
}

// One cluster per distinct coordinate of the time group (the coordinate gap allowed is 0), then
// the group's clusters in start-time order. Created in increasing coordinate, so ordering them
// by (timeStart, coord) is the stable order by timeStart. Later groups start after every hit of
// this one: each plane's list ends up ordered by timeStart.
void EventBuilder2D::addClusters(int plane, size_t begin, size_t end) {
  Stored *h = hits_[plane].data();
  std::vector<Cluster> &cl = clusters_[plane];
  const size_t first = cl.size();
  adaptiveSort(h + begin, end - begin, kByCoord);
  for (size_t i = begin; i < end;) {
    const uint16_t coord = h[i].coord;
    uint64_t t0 = h[i].timeNs, t1 = h[i].timeNs;
    uint64_t weights = h[i].weight;
    size_t j = i + 1;
    for (; j < end && h[j].coord == coord; ++j) {
      t0 = std::min(t0, h[j].timeNs);
      t1 = std::max(t1, h[j].timeNs);
      weights += h[j].weight;
    }
    cl.push_back(Cluster{t0, static_cast<double>(weights), t1, static_cast<double>(weights * coord),
                         static_cast<uint32_t>(j - i), static_cast<uint32_t>(i), coord, coord,
                         coord});
    i = j;
  }
  const size_t made = cl.size() - first;
  if (made > 1) {
    adaptiveSort(cl.data() + first, made, [](const Cluster &x, const Cluster &y) noexcept {
      return x.timeStart != y.timeStart ? x.timeStart < y.timeStart : x.coordStart < y.coordStart;
    });
  }
}

bool EventBuilder2D::weightsMatch(const PlaneCluster &x, const PlaneCluster &y) const noexcept {
  return x.weightSum * low_ <= y.weightSum && x.weightSum * high_ >= y.weightSum;
}

int EventBuilder2D::split(size_t a0, size_t a1, size_t b0, size_t b1, Event2D (&parts)[2]) {
  ++stats_.spanTooLarge;
  PlaneCluster a1p, a2p, b1p, b2p;
  splitPlane(0, a0, a1, a1p, a2p);
  splitPlane(1, b0, b1, b1p, b2p);
  const bool m11 = weightsMatch(a1p, b1p), m22 = weightsMatch(a2p, b2p);
  const bool m12 = weightsMatch(a1p, b2p), m21 = weightsMatch(a2p, b1p);
  if (m11 && m22 && !m12 && !m21) {
    parts[0] = Event2D{a1p, b1p};
    parts[1] = Event2D{a2p, b2p};
  } else if (m12 && m21 && !m11 && !m22) {
    parts[0] = Event2D{a1p, b2p};
    parts[1] = Event2D{a2p, b1p};
  } else {
    ++stats_.discardedSpanTooLarge;
    return 0;
  }
  ++stats_.splitSpanTooLarge;
  return 2;
}

// The plane's hits of the event in coordinate order: up to the first step larger than
// kSplitCoordGap they form part 1, then part 2; a second such step leaves both parts empty.
// The order of equal coordinates decides the parts' uTPC coordinates, so the hits are put in
// the ESS EFU's order first: its clusters (Run) in the order it merges them into the event
// (stable by start time), each cluster's hits as its sorts left them, then std::sort by
// coordinate as the ESS EFU sorts the event's plane (libstdc++'s std::sort is deterministic).
void EventBuilder2D::splitPlane(int plane, size_t c0, size_t c1, PlaneCluster &part1,
                                PlaneCluster &part2) {
  part1 = PlaneCluster{};
  part2 = PlaneCluster{};
  if (c0 == c1) {
    return;
  }
  essOrder(plane);
  const Stored *e = essOrder_[plane].data();
  runs_.clear();
  for (size_t k = c0; k < c1; ++k) {
    const Cluster &c = clusters_[plane][k];
    const uint32_t end = c.firstHit + c.hits;
    for (uint32_t i = c.firstHit; i < end;) {
      uint32_t j = i + 1;
      uint64_t t0 = e[i].timeNs;
      for (; j < end && e[j].coord == e[i].coord; ++j) {
        t0 = std::min(t0, e[j].timeNs);
      }
      runs_.push_back(Run{t0, i, j});
      i = j;
    }
  }
  std::sort(runs_.begin(), runs_.end(), [](const Run &x, const Run &y) noexcept {
    return x.timeStart != y.timeStart ? x.timeStart < y.timeStart : x.begin < y.begin;
  });
  scratch_.clear();
  for (const Run &r : runs_) {
    scratch_.insert(scratch_.end(), e + r.begin, e + r.end);
  }
  std::sort(scratch_.begin(), scratch_.end(), kByCoord);
  bool split = false;
  uint16_t last = scratch_.front().coord;
  UtpcTrack u1, u2;
  for (const Stored &hit : scratch_) {
    const bool step = hit.coord - last > kSplitCoordGap;
    if (step) {
      if (split) {
        part1 = PlaneCluster{};
        part2 = PlaneCluster{};
        return;
      }
      split = true;
    }
    addHit(split ? part2 : part1, hit);
    (split ? u2 : u1).add(hit);
    last = hit.coord;
  }
  part1.utpcCoord = u1.n > 0 ? u1.coord() : uint16_t{0};
  part2.utpcCoord = u2.n > 0 ? u2.coord() : uint16_t{0};
}

// The ESS EFU's hit order of a plane: as inserted, std::sort by time, then each time group
// std::sort by coordinate. Its time groups are ours (the same sorted times), so each of our
// clusters covers the same index range here.
void EventBuilder2D::essOrder(int plane) {
  if (essOrderReady_[plane]) {
    return;
  }
  essOrderReady_[plane] = true;
  std::vector<Stored> &v = essOrder_[plane];
  v = hits_[plane];
  if (sorted_[plane]) {
    std::sort(v.begin(), v.end(),
              [](const Stored &x, const Stored &y) noexcept { return x.seq < y.seq; });
  }
  std::sort(v.begin(), v.end(), kByTime);
  const uint64_t gap = params_.clusterTimeGapNs;
  size_t begin = 0;
  for (size_t i = 1; i <= v.size(); ++i) {
    if (i == v.size() || v[i].timeNs - v[i - 1].timeNs > gap) {
      std::sort(v.begin() + static_cast<std::ptrdiff_t>(begin),
                v.begin() + static_cast<std::ptrdiff_t>(i), kByCoord);
      begin = i;
    }
  }
}

} // namespace efu::reduction
