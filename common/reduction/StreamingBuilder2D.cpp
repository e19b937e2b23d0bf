// SPDX-License-Identifier: BSD-2-Clause
// Streaming two-plane event building (common/reduction/README.md, "Streaming").
#include "common/reduction/StreamingBuilder2D.h"

#include "common/reduction/AdaptiveSort.h"

#include <algorithm>

namespace efu::reduction {
namespace {

/// c into a part that is not empty and starts no later than c (clusters taken in start order):
/// the part's start stays.
void mergeLater(PlaneCluster &into, const PlaneCluster &c) noexcept {
  into.timeEnd = std::max(into.timeEnd, c.timeEnd);
  into.coordStart = std::min(into.coordStart, c.coordStart);
  into.coordEnd = std::max(into.coordEnd, c.coordEnd);
  into.hits += c.hits;
  into.weightSum += c.weightSum;
  into.coordMass += c.coordMass;
}

/// The clusters an open event is requeued as, at most.
constexpr size_t kOpenParts = 2;

/// The part of an event that has no cluster of its plane.
const PlaneCluster kNoPart{};

/// The cluster of a time cluster of one hit.
PlaneClusterOf single(const Hit &h, uint8_t plane) noexcept {
  const auto w = static_cast<double>(h.weight);
  return {{h.timeNs, h.timeNs, h.coord, h.coord, 1, w, w * static_cast<double>(h.coord)}, plane};
}

} // namespace

StreamingBuilder2D::StreamingBuilder2D(const StreamingParams &p) : params_(p) {
  for (int plane = 0; plane < 2; ++plane) {
    incoming_[plane].reserve(256);
    open_[plane].reserve(64);
    closed_[plane].resize(256);
  }
  queue_.resize(256);
  fresh_.reserve(256);
}

size_t StreamingBuilder2D::pendingHits() const noexcept {
  return incoming_[0].size() + incoming_[1].size() + open_[0].size() + open_[1].size();
}

// The plane's hits, already in time order, join the open time cluster; a hit more than the gap
// after the last one added (or before it: the difference is unsigned) closes it first, and so
// does a cluster that has reached maxOpenHits. Only the hits of the last run stay open: the runs
// closed within this datagram are clustered where they lie, without a copy into open_.
inline void StreamingBuilder2D::clusterPlane(int plane) {
  std::vector<Hit> &in = incoming_[plane];
  if (in.empty()) {
    return;
  }
  std::vector<Hit> &open = open_[plane];
  const uint64_t gap = params_.clusterTimeGapNs;
  const size_t maxHits = params_.maxOpenHits;
  Hit *h = in.data();
  const size_t n = in.size();
  size_t i = 0;
  // Each hit, open or new, makes at most one cluster; every cluster of a run starts after those
  // of the runs before it.
  const auto p = static_cast<uint8_t>(plane);
  PlaneClusterOf *const begin = reserveClosed(plane, open.size() + n);
  PlaneClusterOf *w = begin;
  // The hits that join the cluster left open by the last flush. A hit before its last one
  // closes it too: this flush's clusters may then start before the open one's.
  while (!open.empty() && i < n) {
    const bool apart = h[i].timeNs - open.back().timeNs > gap;
    if (apart || open.size() == maxHits) {
      unordered_ = unordered_ || h[i].timeNs < open.back().timeNs;
      bounds_.openHits += apart ? 0 : 1;
      w = closeHits(open.data(), open.size(), w, p);
      open.clear();
    } else {
      open.push_back(h[i++]);
    }
  }
  int64_t openHits = 0;
  // Then hit by hit: a run ends at a step of more than the gap, or at maxOpenHits hits when the
  // next hit would join it (the bound counted as when the hit arrives at a full open cluster).
  // The last run stays open.
  const size_t cap = maxHits != 0 ? maxHits : SIZE_MAX;
  size_t s = i; // the run's first hit
  for (size_t k = i + 1; k < n; ++k) {
    const bool apart = h[k].timeNs - h[k - 1].timeNs > gap;
    if (apart || k - s == cap) {
      openHits += apart ? 0 : 1;
      w = closeHits(h + s, k - s, w, p);
      s = k;
    }
  }
  // The run left open, into open_ (empty here: the open hits were closed, or every new hit joined
  // them and s == n). Commonly one or two hits: copied without assign()'s call of memmove.
  if (n - s <= 2) {
    for (; s < n; ++s) {
      open.push_back(h[s]);
    }
  } else {
    open.assign(h + s, h + n);
  }
  closedEnd_[plane] += static_cast<size_t>(w - begin);
  bounds_.openHits += openHits;
  newestOf_[plane] = std::max(newestOf_[plane], in.back().timeNs);
  newest_ = std::max(newest_, newestOf_[plane]);
  in.clear();
}

void StreamingBuilder2D::closeTimeCluster(int plane) {
  std::vector<Hit> &open = open_[plane];
  if (open.empty()) {
    return;
  }
  PlaneClusterOf *const begin = reserveClosed(plane, open.size());
  closedEnd_[plane] += static_cast<size_t>(
      closeHits(open.data(), open.size(), begin, static_cast<uint8_t>(plane)) - begin);
  open.clear();
}

// One cluster per distinct coordinate (the coordinate gap is 0), in increasing coordinate. The
// aggregates do not depend on the order of the hits (the sums are of integers, exact as doubles).
// Time clusters of one or two hits (most of them) without the sort and the loop. The clusters
// leave start order when a later hit has the lower coordinate (unordered_).
inline PlaneClusterOf *StreamingBuilder2D::closeHits(Hit *h, size_t n, PlaneClusterOf *w,
                                                     uint8_t plane) {
  if (n == 1) {
    *w = single(*h, plane);
    return w + 1;
  }
  if (n == 2) {
    const Hit &x = h[0], &y = h[1];
    if (x.coord != y.coord) {
      const bool xFirst = x.coord < y.coord;
      unordered_ = unordered_ || (!xFirst && y.timeNs > x.timeNs);
      w[0] = single(xFirst ? x : y, plane);
      w[1] = single(xFirst ? y : x, plane);
      return w + 2;
    }
    const auto wx = static_cast<double>(x.weight), wy = static_cast<double>(y.weight);
    const auto coord = static_cast<double>(x.coord);
    *w = {{std::min(x.timeNs, y.timeNs), std::max(x.timeNs, y.timeNs), x.coord, x.coord, 2, wx + wy,
           wx * coord + wy * coord},
          plane};
    return w + 1;
  }
  return closeMany(h, n, w, plane);
}

PlaneClusterOf *StreamingBuilder2D::closeMany(Hit *h, size_t n, PlaneClusterOf *w, uint8_t plane) {
  adaptiveSort(h, n, [](const Hit &x, const Hit &y) noexcept { return x.coord < y.coord; });
  const PlaneClusterOf *const first = w;
  for (size_t i = 0; i < n;) {
    const uint16_t coord = h[i].coord;
    uint64_t t0 = h[i].timeNs, t1 = h[i].timeNs;
    double weights = static_cast<double>(h[i].weight);
    double mass = weights * static_cast<double>(coord);
    uint32_t hits = 1;
    for (++i; i < n && h[i].coord == coord; ++i, ++hits) {
      const auto weight = static_cast<double>(h[i].weight);
      t0 = std::min(t0, h[i].timeNs);
      t1 = std::max(t1, h[i].timeNs);
      weights += weight;
      mass += weight * static_cast<double>(coord);
    }
    unordered_ = unordered_ || (w != first && t0 < w[-1].c.timeStart);
    *w++ = {{t0, t1, coord, coord, hits, weights, mass}, plane};
  }
  return w;
}

void StreamingBuilder2D::flush(EventBuffer &out, bool full) {
  out.size_ = 0;
  if (!full && incoming_[0].empty() && incoming_[1].empty()) {
    return; // nothing new: matching again would requeue the same clusters (tested)
  }
  uint64_t earliest = UINT64_MAX;
  const auto byTime = [](const Hit &x, const Hit &y) noexcept { return x.timeNs < y.timeNs; };
  for (std::vector<Hit> &in : incoming_) {
    // Commonly in time order already: std::is_sorted's walk by pointer is a little cheaper than
    // adaptiveSort's by index, which then runs only on a step back.
    if (!std::is_sorted(in.begin(), in.end(), byTime)) {
      adaptiveSort(in.data(), in.size(), byTime);
    }
    earliest = in.empty() ? earliest : std::min(earliest, in.front().timeNs);
  }
  if (started_ && params_.stepBackNs != 0 && earliest < newest_ &&
      newest_ - earliest > params_.stepBackNs) {
    ++bounds_.stepBack;
    formAllAndForget(out);
  }
  if (!started_ && earliest != UINT64_MAX) {
    started_ = true;
    first_ = earliest;
  }
  clusterPlane(0);
  clusterPlane(1);
  if (full) {
    closeTimeCluster(0);
    closeTimeCluster(1);
  }
  takeClosed();
  match(out, full);
}

void StreamingBuilder2D::restart(EventBuffer &out) {
  out.size_ = 0;
  ++bounds_.restarts;
  formAllAndForget(out);
}

void StreamingBuilder2D::formAllAndForget(EventBuffer &out) {
  closeTimeCluster(0);
  closeTimeCluster(1);
  takeClosed();
  match(out, true);
  latest_[0] = latest_[1] = 0;
  newestOf_[0] = newestOf_[1] = 0;
  newest_ = 0;
  first_ = 0;
  started_ = false;
}

// This flush's closed clusters move the planes' latest times.
void StreamingBuilder2D::takeClosed() {
  for (int plane = 0; plane < 2; ++plane) {
    if (closedEnd_[plane] != 0) {
      latest_[plane] = std::max(latest_[plane], closed_[plane][closedEnd_[plane] - 1].c.timeStart);
    }
  }
}

void StreamingBuilder2D::growQueue(size_t n) {
  queue_.resize(std::max(n, 2 * queue_.size()));
}

// The clusters of this flush from closed_[0][ia, ...) and closed_[1][ib, ...) into
// queue_[head_, end_), which stays sorted by start, stable in the ESS list's order: the queued
// clusters, then plane A's closed clusters, then plane B's. Merged from the back: only the queued
// clusters that start later than the earliest fresh one move. `inOrder`: each plane's clusters
// come in start order, as clustering found (it sets `unordered_` where they may not), and the
// three lists are merged as they are; else this flush's clusters are ordered by their keys
// (start, position in A's then B's list) first.
void StreamingBuilder2D::mergeFresh(size_t ia, size_t ib, bool inOrder) {
  const PlaneClusterOf *const a = closed_[0].data() + ia;
  const PlaneClusterOf *const b = closed_[1].data() + ib;
  const size_t na = closedEnd_[0] - ia, nb = closedEnd_[1] - ib;
  if (na + nb == 0) {
    return;
  }
  const size_t q = end_;
  end_ = q + na + nb;
  reserveQueue(end_);
  PlaneClusterOf *const out = queue_.data();
  if (inOrder) {
    // From the back, the latest start; on equal starts the later in list order (B, A, queue).
    for (size_t w = q + na + nb, i = q, ka = na, kb = nb; ka + kb > 0;) {
      --w;
      if (kb > 0 && (ka == 0 || b[kb - 1].c.timeStart >= a[ka - 1].c.timeStart) &&
          (i == head_ || b[kb - 1].c.timeStart >= out[i - 1].c.timeStart)) {
        out[w] = b[--kb];
      } else if (ka > 0 && (i == head_ || a[ka - 1].c.timeStart >= out[i - 1].c.timeStart)) {
        out[w] = a[--ka];
      } else {
        out[w] = out[--i];
      }
    }
    return;
  }
  for (size_t k = 0; k < na; ++k) {
    fresh_.push_back(FreshKey{a[k].c.timeStart, fresh_.size()});
  }
  for (size_t k = 0; k < nb; ++k) {
    fresh_.push_back(FreshKey{b[k].c.timeStart, fresh_.size()});
  }
  // In list order: each plane's clusters come nearly in start order, so this is mostly
  // insertion of one plane's into the other's.
  adaptiveSort(fresh_.data(), fresh_.size(), [](const FreshKey &x, const FreshKey &y) noexcept {
    return x.start != y.start ? x.start < y.start : x.order < y.order;
  });
  for (size_t w = q + na + nb, i = q, k = na + nb; k > 0;) { // fresh_[0, k), queue_[head_, i)
    --w;
    if (i > head_ && out[i - 1].c.timeStart > fresh_[k - 1].start) {
      out[w] = out[--i];
    } else {
      const uint64_t o = fresh_[--k].order;
      out[w] = o < na ? a[o] : b[o - na];
    }
  }
  fresh_.clear();
}

// A cluster not ready is taken all the same when it is stale, or among the earliest `force`
// (maxWaiting); `before` clusters were taken before it in this pass. Counted unless it is part of
// a requeued event (counted when it was taken first).
bool StreamingBuilder2D::takenEarly(const PlaneClusterOf &q, size_t before, size_t force) {
  const uint64_t newest = newest_, staleNs = params_.staleNs;
  if (staleNs != 0 && newest > q.c.timeEnd && newest - q.c.timeEnd > staleNs) {
    bounds_.stale += q.requeued != 0 ? 0 : 1;
    return true;
  }
  if (before < force) {
    bounds_.full += q.requeued != 0 ? 0 : 1;
    return true;
  }
  return false;
}

// The ESS list of unmatched clusters (the requeued event, the clusters left from before, this
// flush's) in start order, stable; each ready one joins the open event unless it is more than
// the matching gap away, which closes the event. The first cluster not ready stops matching;
// the open event goes back to the front of the list as one cluster per plane (plane B's first),
// to be matched again with later data. With efu's bounds a cluster that is not ready is still
// taken when it is stale, or among the earliest beyond maxWaiting.
//
// queue_[head_, end_) holds the list's clusters from before and stays sorted between flushes.
// When each plane's clusters of this flush come in start order, the list is walked as the merge
// of the queue and the two planes' lists, and only the clusters left unmatched are merged into
// the queue (most of this flush's are matched at once); else they are all merged in first.
void StreamingBuilder2D::match(EventBuffer &out, bool full) {
  if (head_ > 0 && 2 * head_ >= end_) {
    std::copy(queue_.begin() + static_cast<std::ptrdiff_t>(head_),
              queue_.begin() + static_cast<std::ptrdiff_t>(end_), queue_.begin());
    end_ -= head_;
    head_ = 0;
  }
  if (unordered_) {
    mergeFresh(0, 0, false);
    closedEnd_[0] = closedEnd_[1] = 0;
    unordered_ = false;
  }
  const size_t na = closedEnd_[0], nb = closedEnd_[1];
  // Room for every event this pass can form (at most one per cluster it takes): take() writes
  // them without a capacity check.
  std::vector<Event2D> &storage = out.storage_;
  if (out.size_ + (end_ - head_) + na + nb > storage.size()) [[unlikely]] {
    storage.resize(std::max(out.size_ + (end_ - head_) + na + nb, 2 * storage.size()));
  }
  // With maxWaiting, the earliest clusters beyond it are taken, and room for the open event's
  // (at most two) requeued clusters.
  const size_t waiting = end_ - head_ + na + nb + 2;
  const size_t force =
      params_.maxWaiting != 0 && waiting > params_.maxWaiting ? waiting - params_.maxWaiting : 0;
  // Each list ends in a cluster starting at UINT64_MAX, so that the next of each list can be
  // compared without asking whether the list is at its end (asked only of the one chosen: a
  // real cluster may start at UINT64_MAX too). Only the start of an end marker is read.
  closed_[0][na].c.timeStart = UINT64_MAX; // reserveClosed left room
  closed_[1][nb].c.timeStart = UINT64_MAX;
  reserveQueue(end_ + 1);
  queue_[end_].c.timeStart = UINT64_MAX;
  const PlaneClusterOf *const a = closed_[0].data();
  const PlaneClusterOf *const b = closed_[1].data();
  // The open event is formed in place, events[ne - 1] while evHits != 0; its end and hits are
  // kept apart (its latest end over both planes, as eventEnd gives it), and the members read in
  // the loop as locals: the events' stores cannot then make the compiler reload them.
  Event2D *const events = storage.data();
  size_t ne = out.size_;
  Event2D *ev = nullptr;
  uint64_t evEnd = 0;
  uint32_t evHits = 0;
  // Ready: both planes' latest cluster starts more than the latency after the cluster's end,
  // that is the end is below readyBelow (none is when the latest is within the latency; every
  // one in a full flush, where only an end at UINT64_MAX is asked again).
  const uint64_t latest = std::min(latest_[0], latest_[1]);
  uint64_t readyBelow = latest > params_.latencyNs ? latest - params_.latencyNs : 0;
  readyBelow = full ? UINT64_MAX : readyBelow;
  const uint64_t matchGap = params_.matchTimeGapNs;
  // evHits >= cap: the event is at maxEventHits (never when it is 0, no bound).
  const uint32_t cap = params_.maxEventHits != 0 ? params_.maxEventHits : UINT32_MAX;
  const PlaneClusterOf *const queue = queue_.data();
  const size_t size = end_;
  // The walk's next cluster of each list (pq: of the queue), as pointers: no index arithmetic
  // per cluster.
  const PlaneClusterOf *pq = queue + head_, *pa = a, *pb = b;
  const PlaneClusterOf *const qEnd = queue + size, *const aEnd = a + na, *const bEnd = b + nb;
  size_t before = 0; // clusters taken in this pass
  // Joins q to the open event's part (closing that event first when q is apart from it),
  // unless q is not ready nor taken early: then false, and matching stops before q.
  // `other`: the event's part of the other plane.
  const auto take = [&](const PlaneClusterOf *q, PlaneCluster Event2D::*part,
                        PlaneCluster Event2D::*other) {
    if (q->c.timeEnd >= readyBelow) [[unlikely]] {
      if (!full && !takenEarly(*q, before, force)) {
        return false;
      }
    }
    if (evHits != 0) {
      // timeGap(): 0 when the spans overlap, else from the earlier end to the later start. The
      // walk takes the clusters in start order, so q starts no earlier than the open event and
      // (ending no earlier than it starts) the gap is from the event's end to q's start.
      const uint64_t start = q->c.timeStart;
      const bool apart = start > evEnd && start - evEnd > matchGap;
      // A requeued part never closes the event it belongs to.
      if (apart || (evHits >= cap && params_.maxEventHits != 0 && q->requeued == 0)) {
        bounds_.eventHits += apart ? 0 : 1;
        evEnd = 0;
        evHits = 0;
      }
    }
    // Merged into an empty part, a cluster gives itself: its sums are not -0 (of weights and
    // coordinates), and no cluster here has a uTPC coordinate (0, as an empty part). A new
    // event is written as its two parts: q's cluster and an empty part.
    if (evHits == 0) {
      ev = events + ne++;
      ev->*part = q->c;
      ev->*other = kNoPart;
    } else if (PlaneCluster &into = ev->*part; into.empty()) {
      into = q->c;
    } else {
      mergeLater(into, q->c);
    }
    evEnd = std::max(evEnd, q->c.timeEnd);
    evHits += q->c.hits;
    ++before;
    return true;
  };
  // A queued cluster, into its plane's part.
  const auto takeQueued = [&](const PlaneClusterOf *q) {
    const bool planeA = q->plane == 0;
    return take(q, planeA ? &Event2D::a : &Event2D::b, planeA ? &Event2D::b : &Event2D::a);
  };
  bool stopped = false;
  // Commonly the queue holds earlier data than this flush's (its last cluster starts no later
  // than either plane's first): the walk then takes the queue's clusters first, one list.
  if (pq != qEnd && qEnd[-1].c.timeStart <= std::min(a->c.timeStart, b->c.timeStart)) {
    while (pq != qEnd && !stopped) {
      stopped = !takeQueued(pq);
      pq += stopped ? 0 : 1;
    }
  }
  // The next in the list: the queue's first on equal starts, then A's, then B's. While the
  // queue holds clusters, of the three lists; B's is taken only when it has one (else its
  // next starts at UINT64_MAX, and the queue's or A's is taken).
  while (pq != qEnd && !stopped) {
    const uint64_t sq = pq->c.timeStart, sa = pa->c.timeStart, sb = pb->c.timeStart;
    if (sq <= sa && sq <= sb) {
      stopped = !takeQueued(pq);
      pq += stopped ? 0 : 1;
    } else if (sa <= sb && pa != aEnd) {
      stopped = !take(pa, &Event2D::a, &Event2D::b);
      pa += stopped ? 0 : 1;
    } else {
      stopped = !take(pb, &Event2D::b, &Event2D::a);
      pb += stopped ? 0 : 1;
    }
  }
  // Then (most of this flush's clusters) of the two planes' lists.
  while (!stopped) {
    if (pa->c.timeStart <= pb->c.timeStart && pa != aEnd) {
      stopped = !take(pa, &Event2D::a, &Event2D::b);
      pa += stopped ? 0 : 1;
    } else if (pb != bEnd) {
      stopped = !take(pb, &Event2D::b, &Event2D::a);
      pb += stopped ? 0 : 1;
    } else {
      break;
    }
  }
  const auto iq = static_cast<size_t>(pq - queue);
  const auto ia = static_cast<size_t>(pa - a), ib = static_cast<size_t>(pb - b);
  head_ = iq;
  if (head_ == end_) {
    // Nothing queued (commonly: the walk took it all): the rest of the two lists merged from the
    // front, A's first on equal starts. The queue starts again near its storage's front, with
    // room before it for the open event's parts: neither they nor the rest move (before, the
    // queue crept up the storage and was moved back down every few flushes).
    head_ = end_ = kOpenParts;
    reserveQueue(end_ + (na - ia) + (nb - ib));
    PlaneClusterOf *w = queue_.data() + end_;
    while (pa != aEnd && pb != bEnd) {
      *w++ = pb->c.timeStart < pa->c.timeStart ? *pb++ : *pa++;
    }
    end_ = static_cast<size_t>(std::copy(pb, bEnd, std::copy(pa, aEnd, w)) - queue_.data());
  } else {
    mergeFresh(ia, ib, true);
  }
  closedEnd_[0] = closedEnd_[1] = 0;
  out.size_ = ne;
  if (full || evHits == 0) {
    return; // a full flush forms the open event too
  }
  // Requeued at the list's front: they start no later than any cluster left (they gathered the
  // clusters before them), so in the sorted list they come first, B before A unless A starts
  // earlier. Where the queue's front has no room (the clusters taken were this flush's), the
  // queue moves up. Read where the event was formed, then dropped from the events.
  const Event2D &open = storage[out.size_ - 1];
  const bool aFirst = !open.a.empty() && (open.b.empty() || open.a.timeStart < open.b.timeStart);
  for (int k = 0; k < 2; ++k) {
    const auto plane = static_cast<uint8_t>(aFirst ? 1 - k : k); // the later one first
    const PlaneCluster &c = plane == 0 ? open.a : open.b;
    if (c.empty()) {
      continue;
    }
    if (head_ == 0) {
      reserveQueue(end_ + 1);
      std::copy_backward(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(end_),
                         queue_.begin() + static_cast<std::ptrdiff_t>(end_ + 1));
      ++end_;
      queue_[0] = {c, plane, 1};
    } else {
      queue_[--head_] = {c, plane, 1};
    }
  }
  --out.size_;
}

} // namespace efu::reduction
