// SPDX-License-Identifier: BSD-2-Clause
// Two-plane event building that keeps its state across datagrams, as the ESS EFU's Multi-Grid
// modules (TREX, LET) run it: their EventBuilder2D flushed WITHOUT the full flush, so time
// clusters stay open, clusters wait until both planes have moved on, and events span datagrams
// (common/reduction/README.md, "Streaming"). Uses EventBuilder2D's Hit, PlaneCluster, Event2D.
#pragma once

#include "common/reduction/EventBuilder2D.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace efu::reduction {

/// The ESS parameters: the clusterers' and the matcher's time gaps (500 ns in the Multi-Grid
/// modules) and the matcher's latency (2010 ns, the ESS EFU's constant); then efu's bounds on
/// what a builder holds (README.md, "Bounds"), each 0 = none, as in the ESS EFU.
struct StreamingParams {
  uint64_t clusterTimeGapNs = 500;
  uint64_t matchTimeGapNs = 500;
  uint64_t latencyNs = 2010;
  /// A waiting cluster that ends more than this before the builder's latest hit (either plane)
  /// is matched without waiting for the other plane to pass it (a dead plane).
  uint64_t staleNs = 0;
  /// At most this many clusters wait; beyond, the earliest are matched at once.
  size_t maxWaiting = 0;
  /// An open time cluster of this many hits is closed before the next hit joins (a stuck clock).
  size_t maxOpenHits = 0;
  /// An open event of this many hits (both planes) is formed before the next cluster joins it
  /// (a stuck clock: every cluster overlaps it, and it would grow until a later hit came).
  uint32_t maxEventHits = 0;
  /// A flush whose earliest hit is more than this before the builder's latest hit forms what
  /// waits, as the full flush does, and starts the builder anew (a timing reset, a stray time).
  uint64_t stepBackNs = 0;
};

/// What the bounds did (StreamingParams), counted since construction.
struct StreamingBoundStats {
  int64_t stale = 0;    ///< clusters matched before they were ready: staleNs
  int64_t full = 0;     ///< clusters matched before they were ready: maxWaiting
  int64_t openHits = 0; ///< open time clusters closed at maxOpenHits
  int64_t eventHits = 0; ///< events formed at maxEventHits
  int64_t stepBack = 0; ///< restarts: stepBackNs
  int64_t restarts = 0; ///< restarts asked for by restart()
};

/// One plane's cluster as the matcher sees it: the aggregates plus its plane.
struct PlaneClusterOf {
  PlaneCluster c;
  uint8_t plane = 0;
  uint8_t requeued = 0; ///< part of an open event put back: counted by the bounds already
};

/// Where StreamingBuilder2D::flush() and restart() write the events they form: storage its owner
/// keeps and may share between builders flushed one after another (trex: one for all), so that
/// only one grows to the largest flush's events. events() holds the last call's; the storage
/// beyond them is only room.
class EventBuffer {
public:
  [[nodiscard]] std::span<const Event2D> events() const noexcept {
    return {storage_.data(), size_};
  }

private:
  friend class StreamingBuilder2D;
  std::vector<Event2D> storage_ = std::vector<Event2D>(64);
  size_t size_ = 0;
};

/// insert() the accepted hits of a datagram, then flush(out) once: events whose clusters are
/// ready are appended to out; everything else waits for later data. flush(out, true) forms
/// everything that waits (the ESS full flush; efu's shutdown); restart(out) does too and then
/// forgets the latest times, so data from an earlier time is built as from a fresh builder.
/// With an EventBuffer instead of a vector, the events are written where they are formed.
/// Single thread; after warm-up neither call allocates unless the amount waiting grows, and a
/// flush costs in proportion to what it receives and forms, not to what waits.
class StreamingBuilder2D {
public:
  explicit StreamingBuilder2D(const StreamingParams &p = {});

  /// Appends a hit of plane 0 (A) or 1 (B); any other plane is dropped and counted.
  void insert(const Hit &h) noexcept {
    if (h.plane < 2) [[likely]] {
      incoming_[h.plane].push_back(h);
    } else {
      ++invalidPlane_;
    }
  }
  class Plane;
  /// Where insert() puts plane 0's or 1's hits (p < 2), for a caller that keeps it per source of
  /// hits: no plane test and no address arithmetic per hit. Valid while the builder does not move.
  [[nodiscard]] Plane plane(unsigned p) noexcept;
  /// One ESS flush: clusters the inserted hits into the open time clusters, hands the closed
  /// ones to the matcher and matches what is ready (everything, when `full`). Appends events in
  /// the order the ESS EFU stashes them.
  void flush(std::vector<Event2D> &out, bool full = false) {
    EventBuffer events;
    flush(events, full);
    out.insert(out.end(), events.events().begin(), events.events().end());
  }
  /// Forms everything that waits (hits not yet flushed stay for the next flush) and forgets the
  /// latest times: the next hits start the builder anew. Counted in bounds().restarts.
  void restart(std::vector<Event2D> &out) {
    EventBuffer events;
    restart(events);
    out.insert(out.end(), events.events().begin(), events.events().end());
  }
  /// flush(out, full) and restart(out) with the events written where they are formed (no copy,
  /// no capacity check per event): `out.events()` is this call's events alone.
  void flush(EventBuffer &out, bool full = false);
  void restart(EventBuffer &out);

  /// Hits inserted but not yet flushed, hits in open time clusters, clusters waiting in the
  /// matcher (a requeued event counts one per non-empty plane).
  [[nodiscard]] size_t pendingHits() const noexcept;
  /// Hits inserted since the last flush: a flush without them forms nothing (unless full).
  [[nodiscard]] bool received() const noexcept {
    return !incoming_[0].empty() || !incoming_[1].empty();
  }
  [[nodiscard]] size_t waitingClusters() const noexcept { return end_ - head_; }
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
  /// Inlined into flush(): its set-up is a large part of a flush of a few hits.
  [[gnu::always_inline]] inline void clusterPlane(int plane);
  void closeTimeCluster(int plane);
  /// Writes the clusters of the time cluster h[0, n) (sorted by time) at w, returns the end.
  PlaneClusterOf *closeHits(Hit *h, size_t n, PlaneClusterOf *w, uint8_t plane);
  /// closeHits of three hits or more: kept out of line, so that closeHits is inlined.
  [[gnu::noinline]] PlaneClusterOf *closeMany(Hit *h, size_t n, PlaneClusterOf *w, uint8_t plane);
  /// Room for n more clusters of the plane (and the end marker match() puts after them).
  PlaneClusterOf *reserveClosed(int plane, size_t n) {
    std::vector<PlaneClusterOf> &v = closed_[plane];
    if (closedEnd_[plane] + n + 1 > v.size()) [[unlikely]] {
      v.resize(std::max(closedEnd_[plane] + n + 1, 2 * v.size()));
    }
    return v.data() + closedEnd_[plane];
  }
  void takeClosed();
  void mergeFresh(size_t ia, size_t ib, bool inOrder);
  /// Room for queue_[0, n).
  void reserveQueue(size_t n) {
    if (n > queue_.size()) [[unlikely]] {
      growQueue(n);
    }
  }
  void growQueue(size_t n);
  void match(EventBuffer &out, bool full);
  [[gnu::noinline]] bool takenEarly(const PlaneClusterOf &q, size_t before, size_t force);
  void formAllAndForget(EventBuffer &out);

  StreamingParams params_;
  std::vector<Hit> incoming_[2]; ///< this datagram's hits
  std::vector<Hit> open_[2];     ///< the open time cluster, in insertion order
  /// Clusters closed during this flush, until matched: closed_[plane][0, closedEnd_[plane]).
  /// As queue_, the vectors are only storage (grown, never shrunk), written through a pointer.
  std::vector<PlaneClusterOf> closed_[2];
  size_t closedEnd_[2] = {0, 0};
  /// A plane's clusters of this flush may not come in start order (they do unless a time
  /// cluster's coordinates order its hits differently from their times, or the time stepped
  /// back behind the open time cluster): set where that can happen, so match() need not look.
  bool unordered_ = false;
  /// The matcher's unmatched clusters, queue_[head_, end_), in the ESS list's sorted order:
  /// matching takes from head_ (and from this flush's clusters, merged in as it walks), the
  /// fresh clusters it leaves are merged in from the back, and the consumed front is dropped
  /// once it is half of what is held. queue_'s size is only storage (grown, never shrunk):
  /// resizing it per flush would construct every new element; queue_[end_] marks the end
  /// during match().
  std::vector<PlaneClusterOf> queue_;
  size_t head_ = 0;
  size_t end_ = 0;
  std::vector<FreshKey> fresh_; ///< this flush's clusters, sorted as the list orders them
  uint64_t latest_[2] = {0, 0};
  uint64_t newest_ = 0;            ///< latest hit time flushed, either plane (0: none yet)
  uint64_t newestOf_[2] = {0, 0};  ///< per plane
  uint64_t first_ = 0;             ///< first hit time flushed since the start or a restart
  bool started_ = false;           ///< hits flushed since the start or a restart
  int64_t invalidPlane_ = 0;
  StreamingBoundStats bounds_;
};

/// One plane of a StreamingBuilder2D (StreamingBuilder2D::plane()).
class StreamingBuilder2D::Plane {
public:
  Plane() = default;
  /// insert() of a hit whose plane is this one's.
  void insert(const Hit &h) const noexcept { hits_->push_back(h); }

private:
  friend class StreamingBuilder2D;
  explicit Plane(std::vector<Hit> *hits) noexcept : hits_(hits) {}
  std::vector<Hit> *hits_ = nullptr;
};

inline StreamingBuilder2D::Plane StreamingBuilder2D::plane(unsigned p) noexcept {
  return Plane(&incoming_[p]);
}

} // namespace efu::reduction
