// SPDX-License-Identifier: BSD-2-Clause
// Streaming two-plane event building (common/reduction/README.md, "Streaming").
#include "common/reduction/StreamingBuilder2D.h"

#include "common/reduction/AdaptiveSort.h"

#include <algorithm>
#include <array>

namespace efu::reduction {
namespace {

void mergeInto(PlaneCluster &into, const PlaneCluster &c) noexcept {
  into.timeStart = std::min(into.timeStart, c.timeStart);
  into.timeEnd = std::max(into.timeEnd, c.timeEnd);
  into.coordStart = std::min(into.coordStart, c.coordStart);
  into.coordEnd = std::max(into.coordEnd, c.coordEnd);
  into.hits += c.hits;
  into.weightSum += c.weightSum;
  into.coordMass += c.coordMass;
}

/// Latest end over the event's non-empty planes (the event is not empty).
uint64_t eventEnd(const Event2D &e) noexcept {
  if (e.a.empty()) {
    return e.b.timeEnd;
  }
  if (e.b.empty()) {
    return e.a.timeEnd;
  }
  return std::max(e.a.timeEnd, e.b.timeEnd);
}

/// The ESS gap between an event and a cluster: 0 when their time spans overlap, else the
/// distance from the earlier end to the later start.
uint64_t timeGap(const Event2D &e, const PlaneCluster &c) noexcept {
  const uint64_t lateStart = std::max(c.timeStart, e.timeStart());
  const uint64_t earlyEnd = std::min(c.timeEnd, eventEnd(e));
  return lateStart <= earlyEnd ? 0 : lateStart - earlyEnd;
}

} // namespace

StreamingBuilder2D::StreamingBuilder2D(const StreamingParams &p) : params_(p) {
  for (int plane = 0; plane < 2; ++plane) {
    incoming_[plane].reserve(256);
    open_[plane].reserve(64);
    closed_[plane].reserve(256);
  }
  queue_.reserve(256);
  fresh_.reserve(256);
}

size_t StreamingBuilder2D::pendingHits() const noexcept {
  return incoming_[0].size() + incoming_[1].size() + open_[0].size() + open_[1].size();
}

bool StreamingBuilder2D::ready(const PlaneCluster &c) const noexcept {
  const uint64_t latest = std::min(latest_[0], latest_[1]);
  return latest > c.timeEnd && latest - c.timeEnd > params_.latencyNs;
}

// The plane's hits in time order join the open time cluster; a hit more than the gap after the
// last one added (or before it: the difference is unsigned) closes it first.
void StreamingBuilder2D::clusterPlane(int plane) {
  std::vector<Hit> &in = incoming_[plane];
  adaptiveSort(in.data(), in.size(),
               [](const Hit &x, const Hit &y) noexcept { return x.timeNs < y.timeNs; });
  std::vector<Hit> &open = open_[plane];
  for (const Hit &h : in) {
    if (!open.empty() && h.timeNs - open.back().timeNs > params_.clusterTimeGapNs) {
      closeTimeCluster(plane);
    }
    open.push_back(h);
  }
  in.clear();
}

// One cluster per distinct coordinate (the coordinate gap is 0), in increasing coordinate.
void StreamingBuilder2D::closeTimeCluster(int plane) {
  std::vector<Hit> &open = open_[plane];
  if (open.empty()) {
    return;
  }
  adaptiveSort(open.data(), open.size(),
               [](const Hit &x, const Hit &y) noexcept { return x.coord < y.coord; });
  PlaneClusterOf cur;
  cur.plane = static_cast<uint8_t>(plane);
  for (const Hit &h : open) {
    if (!cur.c.empty() && h.coord != cur.c.coordEnd) {
      closed_[plane].push_back(cur);
      cur.c = PlaneCluster{};
    }
    PlaneCluster &c = cur.c;
    c.timeStart = std::min(c.timeStart, h.timeNs);
    c.timeEnd = std::max(c.timeEnd, h.timeNs);
    c.coordStart = std::min(c.coordStart, h.coord);
    c.coordEnd = std::max(c.coordEnd, h.coord);
    ++c.hits;
    c.weightSum += static_cast<double>(h.weight);
    c.coordMass += static_cast<double>(h.weight) * static_cast<double>(h.coord);
  }
  closed_[plane].push_back(cur);
  open.clear();
}

void StreamingBuilder2D::flush(std::vector<Event2D> &out, bool full) {
  if (!full && incoming_[0].empty() && incoming_[1].empty()) {
    return; // nothing new: matching again would requeue the same clusters (tested)
  }
  clusterPlane(0);
  clusterPlane(1);
  if (full) {
    closeTimeCluster(0);
    closeTimeCluster(1);
  }
  for (int plane = 0; plane < 2; ++plane) {
    const std::vector<PlaneClusterOf> &cl = closed_[plane];
    if (cl.empty()) {
      continue;
    }
    latest_[plane] = std::max(latest_[plane], cl.back().c.timeStart);
    for (const PlaneClusterOf &c : cl) {
      fresh_.push_back(FreshKey{c.c.timeStart, fresh_.size()});
    }
  }
  match(out, full);
}

// The ESS list of unmatched clusters (the requeued event, the clusters left from before, this
// flush's) in start order, stable; each ready one joins the open event unless it is more than
// the matching gap away, which closes the event. The first cluster not ready stops matching;
// the open event goes back to the front of the list as one cluster per plane (plane B's first),
// to be matched again with later data.
//
// queue_ holds that order reversed and stays sorted between flushes. A flush sorts only the keys
// of its own clusters and merges the clusters into the queue from the back, where the earliest
// starts are: each cluster is copied once, and the queue's clusters that start later than every
// fresh one stay where they are. On equal starts the list puts the queued clusters before the
// fresh ones: reversed, the fresh first.
void StreamingBuilder2D::match(std::vector<Event2D> &out, bool full) {
  if (!fresh_.empty()) {
    // In list order: each plane's clusters come nearly in start order, so this is mostly
    // insertion of one plane's into the other's.
    adaptiveSort(fresh_.data(), fresh_.size(), [](const FreshKey &x, const FreshKey &y) noexcept {
      return x.start != y.start ? x.start < y.start : x.order < y.order;
    });
    const size_t firstOfB = closed_[0].size();
    const size_t n = fresh_.size();
    size_t q = queue_.size(); // queue_[0, q) not yet placed
    queue_.resize(q + n);
    for (size_t w = q + n, k = 0; k < n;) { // fresh_[k, n) not yet placed
      --w;
      if (q > 0 && queue_[q - 1].c.timeStart <= fresh_[k].start) {
        queue_[w] = queue_[--q];
      } else {
        const uint64_t i = fresh_[k++].order;
        queue_[w] = i < firstOfB ? closed_[0][i] : closed_[1][i - firstOfB];
      }
    }
    fresh_.clear();
  }
  closed_[0].clear();
  closed_[1].clear();
  Event2D ev;
  for (; !queue_.empty(); queue_.pop_back()) {
    const PlaneClusterOf &q = queue_.back();
    if (!full && !ready(q.c)) {
      break;
    }
    if (!ev.empty() && timeGap(ev, q.c) > params_.matchTimeGapNs) {
      out.push_back(ev);
      ev = Event2D{};
    }
    mergeInto(q.plane == 0 ? ev.a : ev.b, q.c);
  }
  if (ev.empty()) {
    return;
  }
  if (full) {
    out.push_back(ev);
    return;
  }
  // Requeued at the list's front, B before A: they start no later than any cluster left (they
  // gathered the clusters before them), so in the sorted list they come first, A before B only
  // when A starts earlier.
  const bool aFirst = !ev.a.empty() && (ev.b.empty() || ev.a.timeStart < ev.b.timeStart);
  const PlaneClusterOf a{ev.a, 0};
  const PlaneClusterOf b{ev.b, 1};
  for (const PlaneClusterOf *c : aFirst ? std::array{&b, &a} : std::array{&a, &b}) {
    if (!c->c.empty()) {
      queue_.push_back(*c); // the back is the list's front
    }
  }
}

} // namespace efu::reduction
