// SPDX-License-Identifier: BSD-2-Clause
// Two-plane event building that keeps its state across datagrams, as the ESS EFU's Multi-Grid
// modules (TREX, LET) run it: their EventBuilder2D flushed WITHOUT the full flush, so time
// clusters stay open, clusters wait until both planes have moved on, and events span datagrams
// (common/reduction/README.md, "Streaming"). Uses EventBuilder2D's Hit, PlaneCluster, Event2D.
#pragma once

#include "common/reduction/EventBuilder2D.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace efu::reduction {

/// The ESS parameters: the clusterers' and the matcher's time gaps (500 ns in the Multi-Grid
/// modules) and the matcher's latency (2010 ns, the ESS EFU's constant).
struct StreamingParams {
  uint64_t clusterTimeGapNs = 500;
  uint64_t matchTimeGapNs = 500;
  uint64_t latencyNs = 2010;
};

/// One plane's cluster as the matcher sees it: the aggregates plus its plane.
struct PlaneClusterOf {
  PlaneCluster c;
  uint8_t plane = 0;
};

/// insert() the accepted hits of a datagram, then flush(out) once: events whose clusters are
/// ready are appended to out; everything else waits for later data. flush(out, true) forms
/// everything that waits (the ESS full flush; efu's shutdown). Single thread; after warm-up
/// neither call allocates unless the amount waiting grows.
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
  /// One ESS flush: clusters the inserted hits into the open time clusters, hands the closed
  /// ones to the matcher and matches what is ready (everything, when `full`). Appends events in
  /// the order the ESS EFU stashes them.
  void flush(std::vector<Event2D> &out, bool full = false);

  /// Hits inserted but not yet flushed, hits in open time clusters, clusters waiting in the
  /// matcher (a requeued event counts one per non-empty plane).
  [[nodiscard]] size_t pendingHits() const noexcept;
  [[nodiscard]] size_t waitingClusters() const noexcept { return queue_.size(); }
  /// Nothing waits anywhere: a full flush would emit nothing.
  [[nodiscard]] bool idle() const noexcept { return pendingHits() == 0 && queue_.empty(); }
  [[nodiscard]] int64_t invalidPlane() const noexcept { return invalidPlane_; }
  /// The matcher's latest cluster start per plane (the ESS LatestA / LatestB).
  [[nodiscard]] uint64_t latest(int plane) const noexcept { return latest_[plane]; }
  [[nodiscard]] const StreamingParams &params() const noexcept { return params_; }

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
  void match(std::vector<Event2D> &out, bool full);
  [[nodiscard]] bool ready(const PlaneCluster &c) const noexcept;

  StreamingParams params_;
  std::vector<Hit> incoming_[2];          ///< this datagram's hits
  std::vector<Hit> open_[2];              ///< the open time cluster, in insertion order
  std::vector<PlaneClusterOf> closed_[2]; ///< clusters closed during this flush, until matched
  /// The matcher's unmatched clusters in the ESS list's sorted order, reversed: the latest start
  /// first, so matching takes from the back. Clusters later than everything that arrives (left
  /// behind when time steps back, as in a replay) sit at the front and are never moved again.
  std::vector<PlaneClusterOf> queue_;
  std::vector<FreshKey> fresh_; ///< this flush's clusters, sorted as the list orders them
  uint64_t latest_[2] = {0, 0};
  int64_t invalidPlane_ = 0;
};

} // namespace efu::reduction
