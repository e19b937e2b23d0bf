// SPDX-License-Identifier: BSD-2-Clause
// The streaming builder as it was before the changes for issue 39 (commit 86cce2d), kept
// unchanged as the reference the current StreamingBuilder2D is compared with
// (StreamingBuilder2DReferenceTest.cpp): the events, counts and state must be the same.
#pragma once

#include "common/reduction/AdaptiveSort.h"
#include "common/reduction/StreamingBuilder2D.h"
#include "tests/common/reduction/SameEvents.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace efu::reduction::reference {

/// insert() the accepted hits of a datagram, then flush(out) once: events whose clusters are
/// ready are appended to out; everything else waits for later data. flush(out, true) forms
/// everything that waits (the ESS full flush; efu's shutdown); restart(out) does too and then
/// forgets the latest times, so data from an earlier time is built as from a fresh builder.
/// Single thread; after warm-up neither call allocates unless the amount waiting grows, and a
/// flush costs in proportion to what it receives and forms, not to what waits.
class ReferenceBuilder {
public:
  explicit ReferenceBuilder(const StreamingParams &p = {});

  /// Appends a hit of plane 0 (A) or 1 (B); any other plane is dropped and counted.
  void insert(const Hit &h) noexcept {
    if (h.plane < 2) [[likely]] {
      incoming_[h.plane].push_back(h);
    } else {
      ++invalidPlane_;
    }
  }
  /// One ESS flush: clusters the inserted hits into the open time clusters, hands the closed
  /// ones to the matcher and matches what is ready (everything, when `full`). Appends events in
  /// the order the ESS EFU stashes them.
  void flush(std::vector<Event2D> &out, bool full = false);
  /// Forms everything that waits (hits not yet flushed stay for the next flush) and forgets the
  /// latest times: the next hits start the builder anew. Counted in bounds().restarts.
  void restart(std::vector<Event2D> &out);

  /// Hits inserted but not yet flushed, hits in open time clusters, clusters waiting in the
  /// matcher (a requeued event counts one per non-empty plane).
  [[nodiscard]] size_t pendingHits() const noexcept;
  [[nodiscard]] size_t waitingClusters() const noexcept { return queue_.size() - head_; }
  /// Nothing waits anywhere: a full flush would emit nothing.
  [[nodiscard]] bool idle() const noexcept { return pendingHits() == 0 && waitingClusters() == 0; }
  [[nodiscard]] int64_t invalidPlane() const noexcept { return invalidPlane_; }
  /// The matcher's latest cluster start per plane (the ESS LatestA / LatestB).
  [[nodiscard]] uint64_t latest(int plane) const noexcept { return latest_[plane]; }
  [[nodiscard]] const StreamingParams &params() const noexcept { return params_; }
  [[nodiscard]] const StreamingBoundStats &bounds() const noexcept { return bounds_; }
  /// A plane has received nothing for more than staleNs of the other plane's time (or ever,
  /// while the other spans more than that): false when staleNs is 0.
  [[nodiscard]] bool silent(int plane) const noexcept {
    const uint64_t since = std::max(newestOf_[plane], first_);
    return params_.staleNs != 0 && started_ && newest_ > since && newest_ - since > params_.staleNs;
  }

private:
  /// A cluster closed in this flush, as sorted: its start and its position in this flush's list
  /// (plane A's closed clusters, then plane B's), which keeps equal starts in list order and
  /// finds the cluster in closed_.
  struct FreshKey {
    uint64_t start;
    uint64_t order;
  };
  void clusterPlane(int plane);
  void closeTimeCluster(int plane);
  void takeClosed();
  void match(std::vector<Event2D> &out, bool full);
  void formAllAndForget(std::vector<Event2D> &out);
  [[nodiscard]] bool ready(const PlaneCluster &c) const noexcept;

  StreamingParams params_;
  std::vector<Hit> incoming_[2];          ///< this datagram's hits
  std::vector<Hit> open_[2];              ///< the open time cluster, in insertion order
  std::vector<PlaneClusterOf> closed_[2]; ///< clusters closed during this flush, until matched
  /// The matcher's unmatched clusters from head_ on, in the ESS list's sorted order: matching
  /// takes from head_, fresh clusters (mostly the latest) are merged in from the back, and the
  /// consumed front is dropped once it is half the vector.
  std::vector<PlaneClusterOf> queue_;
  size_t head_ = 0;
  std::vector<FreshKey> fresh_; ///< this flush's clusters, sorted as the list orders them
  uint64_t latest_[2] = {0, 0};
  uint64_t newest_ = 0;            ///< latest hit time flushed, either plane (0: none yet)
  uint64_t newestOf_[2] = {0, 0};  ///< per plane
  uint64_t first_ = 0;             ///< first hit time flushed since the start or a restart
  bool started_ = false;           ///< hits flushed since the start or a restart
  int64_t invalidPlane_ = 0;
  StreamingBoundStats bounds_;
};

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

inline ReferenceBuilder::ReferenceBuilder(const StreamingParams &p) : params_(p) {
  for (int plane = 0; plane < 2; ++plane) {
    incoming_[plane].reserve(256);
    open_[plane].reserve(64);
    closed_[plane].reserve(256);
  }
  queue_.reserve(256);
  fresh_.reserve(256);
}

inline size_t ReferenceBuilder::pendingHits() const noexcept {
  return incoming_[0].size() + incoming_[1].size() + open_[0].size() + open_[1].size();
}

inline bool ReferenceBuilder::ready(const PlaneCluster &c) const noexcept {
  const uint64_t latest = std::min(latest_[0], latest_[1]);
  return latest > c.timeEnd && latest - c.timeEnd > params_.latencyNs;
}

// The plane's hits, already in time order, join the open time cluster; a hit more than the gap
// after the last one added (or before it: the difference is unsigned) closes it first, and so
// does a cluster that has reached maxOpenHits.
inline void ReferenceBuilder::clusterPlane(int plane) {
  std::vector<Hit> &in = incoming_[plane];
  if (in.empty()) {
    return;
  }
  std::vector<Hit> &open = open_[plane];
  for (const Hit &h : in) {
    if (!open.empty()) {
      if (h.timeNs - open.back().timeNs > params_.clusterTimeGapNs) {
        closeTimeCluster(plane);
      } else if (open.size() == params_.maxOpenHits) {
        ++bounds_.openHits;
        closeTimeCluster(plane);
      }
    }
    open.push_back(h);
  }
  newestOf_[plane] = std::max(newestOf_[plane], in.back().timeNs);
  newest_ = std::max(newest_, newestOf_[plane]);
  in.clear();
}

// One cluster per distinct coordinate (the coordinate gap is 0), in increasing coordinate.
inline void ReferenceBuilder::closeTimeCluster(int plane) {
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

inline void ReferenceBuilder::flush(std::vector<Event2D> &out, bool full) {
  if (!full && incoming_[0].empty() && incoming_[1].empty()) {
    return; // nothing new: matching again would requeue the same clusters (tested)
  }
  uint64_t earliest = UINT64_MAX;
  for (std::vector<Hit> &in : incoming_) {
    adaptiveSort(in.data(), in.size(),
                 [](const Hit &x, const Hit &y) noexcept { return x.timeNs < y.timeNs; });
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

inline void ReferenceBuilder::restart(std::vector<Event2D> &out) {
  ++bounds_.restarts;
  formAllAndForget(out);
}

inline void ReferenceBuilder::formAllAndForget(std::vector<Event2D> &out) {
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

// This flush's closed clusters move the planes' latest times and get their sort keys.
inline void ReferenceBuilder::takeClosed() {
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
}

// The ESS list of unmatched clusters (the requeued event, the clusters left from before, this
// flush's) in start order, stable; each ready one joins the open event unless it is more than
// the matching gap away, which closes the event. The first cluster not ready stops matching;
// the open event goes back to the front of the list as one cluster per plane (plane B's first),
// to be matched again with later data. With efu's bounds a cluster that is not ready is still
// taken when it is stale, or among the earliest beyond maxWaiting.
//
// queue_[head_, end) holds that list and stays sorted between flushes. A flush sorts only the
// keys of its own clusters and merges them in from the back: only the queued clusters that start
// later than the earliest fresh one move. On equal starts the list puts the queued clusters
// before the fresh ones.
inline void ReferenceBuilder::match(std::vector<Event2D> &out, bool full) {
  if (head_ > 0 && 2 * head_ >= queue_.size()) {
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head_));
    head_ = 0;
  }
  if (!fresh_.empty()) {
    // In list order: each plane's clusters come nearly in start order, so this is mostly
    // insertion of one plane's into the other's.
    adaptiveSort(fresh_.data(), fresh_.size(), [](const FreshKey &x, const FreshKey &y) noexcept {
      return x.start != y.start ? x.start < y.start : x.order < y.order;
    });
    const size_t firstOfB = closed_[0].size();
    const size_t n = fresh_.size();
    const size_t q = queue_.size();
    size_t keep = q; // queue_[head_, keep) starts no later than every fresh cluster
    while (keep > head_ && queue_[keep - 1].c.timeStart > fresh_[0].start) {
      --keep;
    }
    queue_.resize(q + n);
    for (size_t w = q + n, i = q, k = n; k > 0;) { // fresh_[0, k) and queue_[keep, i) to place
      --w;
      if (i > keep && queue_[i - 1].c.timeStart > fresh_[k - 1].start) {
        queue_[w] = queue_[--i];
      } else {
        const uint64_t o = fresh_[--k].order;
        queue_[w] = o < firstOfB ? closed_[0][o] : closed_[1][o - firstOfB];
      }
    }
    fresh_.clear();
  }
  closed_[0].clear();
  closed_[1].clear();
  // With maxWaiting, the earliest clusters beyond it are taken, and room for the open event's
  // (at most two) requeued clusters.
  const size_t waiting = queue_.size() - head_ + 2;
  const size_t forceUntil = params_.maxWaiting != 0 && waiting > params_.maxWaiting
                                ? head_ + (waiting - params_.maxWaiting)
                                : head_;
  Event2D ev;
  for (; head_ < queue_.size(); ++head_) {
    const PlaneClusterOf &q = queue_[head_];
    if (!full && !ready(q.c)) {
      if (params_.staleNs != 0 && newest_ > q.c.timeEnd &&
          newest_ - q.c.timeEnd > params_.staleNs) {
        bounds_.stale += q.requeued != 0 ? 0 : 1;
      } else if (head_ < forceUntil) {
        bounds_.full += q.requeued != 0 ? 0 : 1;
      } else {
        break;
      }
    }
    if (!ev.empty()) {
      const bool apart = timeGap(ev, q.c) > params_.matchTimeGapNs;
      // A requeued part never closes the event it belongs to.
      const bool large = !apart && params_.maxEventHits != 0 && q.requeued == 0 &&
                         ev.a.hits + ev.b.hits >= params_.maxEventHits;
      if (apart || large) {
        bounds_.eventHits += large ? 1 : 0;
        out.push_back(ev);
        ev = Event2D{};
      }
    }
    mergeInto(q.plane == 0 ? ev.a : ev.b, q.c);
  }
  if (full && !ev.empty()) {
    out.push_back(ev);
    ev = Event2D{};
  }
  if (head_ == queue_.size()) {
    queue_.clear();
    head_ = 0;
  }
  if (ev.empty()) {
    return;
  }
  // Requeued at the list's front: they start no later than any cluster left (they gathered the
  // clusters before them), so in the sorted list they come first, B before A unless A starts
  // earlier. Each came from at least one cluster taken in this pass, so head_ has room for them
  // (or the queue was emptied and they are its only clusters).
  const bool aFirst = !ev.a.empty() && (ev.b.empty() || ev.a.timeStart < ev.b.timeStart);
  const PlaneClusterOf a{ev.a, 0, 1};
  const PlaneClusterOf b{ev.b, 1, 1};
  for (const PlaneClusterOf *c : aFirst ? std::array{&b, &a} : std::array{&a, &b}) {
    if (c->c.empty()) {
      continue;
    }
    if (head_ == 0) {
      queue_.insert(queue_.begin(), *c); // the queue holds at most the other plane's one
    } else {
      queue_[--head_] = *c;
    }
  }
}

/// The builder's observable state equals the reference's: what waits, the planes' latest times
/// and silence, and every bound count.
inline void expectSameState(const StreamingBuilder2D &b, const ReferenceBuilder &r) {
  ASSERT_EQ(b.pendingHits(), r.pendingHits());
  ASSERT_EQ(b.waitingClusters(), r.waitingClusters());
  ASSERT_EQ(b.invalidPlane(), r.invalidPlane());
  for (int p = 0; p < 2; ++p) {
    ASSERT_EQ(b.latest(p), r.latest(p));
    ASSERT_EQ(b.silent(p), r.silent(p));
  }
  const StreamingBoundStats &x = b.bounds(), &y = r.bounds();
  ASSERT_EQ(x.stale, y.stale);
  ASSERT_EQ(x.full, y.full);
  ASSERT_EQ(x.openHits, y.openHits);
  ASSERT_EQ(x.eventHits, y.eventHits);
  ASSERT_EQ(x.stepBack, y.stepBack);
  ASSERT_EQ(x.restarts, y.restarts);
}

/// Random parameters over the ranges the random reference tests cover: maxOpenHits below
/// `openHits`, maxEventHits below `eventHits`, stale and step-back bounds off half the time.
template <class Rng>
StreamingParams randomParams(Rng &rng, uint64_t openHits, uint64_t eventHits) {
  StreamingParams p;
  p.clusterTimeGapNs = rng() % 1000;
  p.matchTimeGapNs = rng() % 1000;
  p.latencyNs = rng() % 4000;
  p.staleNs = rng() % 2 == 0 ? 0 : rng() % 100'000;
  p.maxWaiting = rng() % 20;
  p.maxOpenHits = rng() % openHits;
  p.maxEventHits = static_cast<uint32_t>(rng() % eventHits);
  p.stepBackNs = rng() % 2 == 0 ? 0 : rng() % 50'000;
  return p;
}

/// A datagram's end in both builders, as the random reference tests choose it: a restart for
/// `what` 0, a full flush for 1 and 2, else a flush; `outB` and `outR` hold what each gave.
inline void endDatagram(StreamingBuilder2D &b, ReferenceBuilder &r, unsigned what,
                        std::vector<Event2D> &outB, std::vector<Event2D> &outR) {
  outB.clear();
  outR.clear();
  if (what == 0) {
    b.restart(outB);
    r.restart(outR);
  } else {
    const bool full = what < 3;
    b.flush(outB, full);
    r.flush(outR, full);
  }
}

/// The end of a stream: both builders flushed in full give the same events.
inline void expectSameFinalFlush(StreamingBuilder2D &b, ReferenceBuilder &r,
                                 std::vector<Event2D> &outB, std::vector<Event2D> &outR) {
  outB.clear();
  outR.clear();
  b.flush(outB, true);
  r.flush(outR, true);
  expectSameEvents(outB, outR);
}

} // namespace efu::reduction::reference
