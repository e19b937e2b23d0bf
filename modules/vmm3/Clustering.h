// SPDX-License-Identifier: BSD-2-Clause
// VMM3 event formation: per-plane time/strip clustering across datagrams and x/y matching.
#pragma once

#include "modules/vmm3/Vmm3Config.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace efu::vmm3 {

/// One accepted hit of a plane. Times are ns since the Unix epoch.
struct Hit {
  int64_t timeNs;
  uint16_t strip;
  uint16_t adc;
  uint8_t pulseSlot = 0; ///< opaque tag of the pulse the hit's datagram referred to (see module)
};

/// A cluster of hits of one plane.
struct Cluster {
  int64_t timeNs;          ///< time of its earliest hit (the event time)
  int64_t endTimeNs;       ///< time of its latest hit
  uint64_t weightedStrips; ///< sum of adc * strip
  uint32_t charge;         ///< sum of adc
  uint16_t hits;
  uint16_t stripMin;
  uint16_t stripMax;
  uint8_t pulseSlot; ///< the pulse tag of its earliest hit
  /// Charge-weighted centre rounded to the nearest strip (ties up); the lowest strip for an
  /// all-zero charge.
  [[nodiscard]] uint32_t centreStrip() const noexcept {
    return charge == 0 ? stripMin
                       : static_cast<uint32_t>((2 * weightedStrips + charge) / (2ULL * charge));
  }
};

/// Receives closed clusters of a plane (in the order their time groups close).
class ClusterSink {
public:
  virtual ~ClusterSink() = default;
  virtual void cluster(Plane plane, const Cluster &c) noexcept = 0;
};

/// Clustering parameters of a plane (see the config keys of the same names).
struct ClusterParams {
  int64_t timeGapNs = 100;
  uint32_t stripGap = 1;
  int64_t sortWindowNs = 2000;
  uint32_t maxGroupHits = 1024;
  uint32_t sortCapacity = 65536; ///< hits the sort window may hold; the oldest leave when full
};

/// Per-plane counts (plain integers; the module copies them to its counters).
struct PlaneStats {
  int64_t late = 0; ///< hits older than the last hit already released: dropped
  int64_t clusters = 0;
  int64_t forcedCloses = 0;  ///< time groups closed because they held maxGroupHits
  int64_t sortOverflows = 0; ///< hits released early because the sort buffer was full
};

/// Clusters the hits of one plane. Hits go into a bounded sort buffer (insertion from the back,
/// cheap for nearly ordered input) and leave it in time order once they are sortWindowNs older
/// than the newest hit. Released hits form a time group while consecutive times differ by at
/// most timeGapNs; a larger gap closes the group, which is sorted by strip and split wherever
/// neighbouring strips differ by more than stripGap + 1. Each part is one cluster.
/// Open groups survive between datagrams; flush() closes everything. All buffers are
/// allocated in the constructor; add() and flush() never allocate. Single thread.
class PlaneClusterer {
public:
  PlaneClusterer(Plane plane, const ClusterParams &params, ClusterSink &sink);
  PlaneClusterer(const PlaneClusterer &) = delete;
  PlaneClusterer &operator=(const PlaneClusterer &) = delete;

  /// Adds a hit; false (and counted late) when it is older than a hit already released.
  bool add(const Hit &hit) noexcept;
  /// Releases every buffered hit and closes the open group.
  void flush() noexcept;
  /// flush(), then forget the time: the next hit may have any time (a sender restarted).
  void restart() noexcept;
  /// Time of the last hit released to clustering (hits older than this are late).
  [[nodiscard]] int64_t releasedNs() const noexcept { return releasedNs_; }
  /// No cluster still to come from this plane can start before this time (hits arriving later
  /// than it are refused as late). INT64_MIN before the first hit.
  [[nodiscard]] int64_t watermarkNs() const noexcept;
  [[nodiscard]] bool idle() const noexcept { return sortHead_ == sortSize_ && groupSize_ == 0; }
  [[nodiscard]] const PlaneStats &stats() const noexcept { return stats_; }

private:
  void release(const Hit &hit) noexcept;
  void closeGroup() noexcept;

  const Plane plane_;
  const ClusterParams params_;
  ClusterSink &sink_;
  std::vector<Hit> sort_; ///< [sortHead_, sortSize_) pending, ordered by time
  size_t sortHead_ = 0;
  size_t sortSize_ = 0;
  std::vector<Hit> group_; ///< the open time group (time order until closeGroup sorts it)
  size_t groupSize_ = 0;
  int64_t newestNs_ = std::numeric_limits<int64_t>::min();
  int64_t releasedNs_ = std::numeric_limits<int64_t>::min();
  PlaneStats stats_;
};

/// A neutron event: matched x and y clusters.
struct Event {
  int64_t timeNs; ///< the earlier of the two cluster times
  uint32_t x;
  uint32_t y;
  int32_t pixelId;   ///< y * nx + x + 1
  uint8_t pulseSlot; ///< the pulse tag of the earlier cluster (the event's first hit)
  Cluster cx;
  Cluster cy;
};

/// Receives events and unmatched clusters from EventFormer.
class EventOutput {
public:
  virtual ~EventOutput() = default;
  virtual void event(const Event &e) noexcept = 0;
  virtual void unmatched(Plane plane, const Cluster &c) noexcept { (void)plane, (void)c; }
};

/// Counts of the whole former (plane counts inside).
struct FormerStats {
  PlaneStats planes[kPlanes];
  int64_t events = 0;
  int64_t unmatched[kPlanes] = {0, 0};
  int64_t matchOverflows = 0; ///< clusters decided early because the match buffer was full
  int64_t restarts = 0;       ///< hits far older than the released ones: everything flushed
};

/// Both planes plus matching. Clusters wait in a per-plane buffer ordered by time; the earliest
/// cluster c of either plane is decided once the other plane's watermark is past
/// c.time + matchWindowNs (nothing that could match it can still come): it pairs with the other
/// plane's earliest waiting cluster if that starts within matchWindowNs of it, else it is
/// unmatched. Call advance() after each batch of hits (a datagram), flush() at the end.
class EventFormer final : private ClusterSink {
public:
  struct Params {
    ClusterParams planes;
    int64_t matchWindowNs = 200;
    uint32_t nx = 1;
    uint32_t ny = 1;
    uint32_t matchCapacity = 16384; ///< clusters waiting per plane
  };

  EventFormer(const Params &params, EventOutput &out);
  /// The parameters of a configuration.
  static Params paramsFrom(const Vmm3Config &c);

  /// A hit this much older than the hits already released means the sender restarted (or the
  /// clock jumped): everything open is flushed and time starts over instead of counting every
  /// following hit late.
  static constexpr int64_t kRestartJumpNs = 1'000'000'000;

  /// False when the hit was late (counted).
  bool addHit(Plane plane, const Hit &hit) noexcept {
    PlaneClusterer &p = planes_[static_cast<size_t>(plane)];
    if (hit.timeNs < p.releasedNs() && p.releasedNs() - hit.timeNs > kRestartJumpNs) [[unlikely]] {
      restart();
    }
    return p.add(hit);
  }
  /// Matches what can be decided now.
  void advance() noexcept;
  /// Closes all clusters and decides every waiting one.
  void flush() noexcept;
  [[nodiscard]] bool idle() const noexcept;
  [[nodiscard]] FormerStats stats() const noexcept;

private:
  /// A fixed-capacity queue of clusters ordered by time (insertion from the back).
  struct Waiting {
    std::vector<Cluster> items;
    size_t head = 0;
    size_t size = 0;
    [[nodiscard]] bool empty() const noexcept { return head == size; }
    [[nodiscard]] const Cluster &front() const noexcept { return items[head]; }
  };

  void cluster(Plane plane, const Cluster &c) noexcept override;
  void restart() noexcept;
  /// Decides the earliest waiting cluster (match or unmatched); false when there is none or
  /// (unless `force`) the other plane may still send a partner.
  bool decideEarliest(bool force = true) noexcept;
  void emit(const Cluster &x, const Cluster &y) noexcept;
  void pop(size_t plane) noexcept;

  const Params params_;
  EventOutput &out_;
  PlaneClusterer planes_[kPlanes];
  Waiting waiting_[kPlanes];
  int64_t events_ = 0;
  int64_t unmatched_[kPlanes] = {0, 0};
  int64_t matchOverflows_ = 0;
  int64_t restarts_ = 0;
};

} // namespace efu::vmm3
