// SPDX-License-Identifier: BSD-2-Clause
// The per-interval receiver line (the printout of Christensen and Richter's UDP paper, named in
// docs/performance.md): rates, drops, loss and PER.
#pragma once

#include "common/stats/Stats.h"

#include <string>

namespace efu {

/// Builds one log line per stats interval: rates from the counter deltas since the previous
/// line, the other figures as totals since start. Main thread only.
class IntervalReport {
public:
  /// `lost`/`expected` are the module's sequence-loss counters, or nullptr if it declared none.
  IntervalReport(const Stats &stats, const Counter *lost, const Counter *expected);

  /// "rx 8600.1 Mb/s 119.8 kpps (1234 total) | lost 0 PER 0 | drops kernel 0 trunc 0 |
  ///  RcvbufErrors +0 | ring full 0x | kafka delivered 10 failed 0 queued 2"
  /// (ring full: times the rx thread waited for a free slot; the kafka part when the registry
  /// has the producer's counters, i.e. not with --no-kafka)
  /// Rates are over the time since the previous call (nowNs: CLOCK_MONOTONIC).
  std::string line(int64_t nowNs);
  /// The same over the whole run since construction (for the final line at shutdown).
  std::string total(int64_t nowNs);
  /// Same numbers as one JSON object (for RUNTIMESTATS_JSON).
  [[nodiscard]] std::string json() const { return json_; }

  /// RUNTIMESTATS bits of the last interval (line()): kReceiving, kLosing, kKafkaFailing.
  static constexpr uint32_t kReceiving = 1;    ///< datagrams arrived
  static constexpr uint32_t kLosing = 2;       ///< kernel drops, truncations or sequence loss grew
  static constexpr uint32_t kKafkaFailing = 4; ///< Kafka messages failed
  [[nodiscard]] uint32_t runtimeStatus() const noexcept { return status_; }

private:
  const Counter &need(const Stats &stats, const char *name);

  const Counter &packets_;
  const Counter &bytes_;
  const Counter &ringFullWaits_;
  const Counter &kernel_;
  const Counter &truncated_;
  const Counter &unread_;
  const Counter &rcvbufErrors_;
  const Counter *lost_;
  const Counter *expected_;
  const Counter *kafkaDelivered_;
  const Counter *kafkaFailed_;
  const Counter *kafkaQueued_;
  int64_t startNs_ = 0;
  int64_t lastNs_ = 0;
  int64_t lastPackets_ = 0;
  int64_t lastBytes_ = 0;
  int64_t lastDropped_ = 0;
  int64_t lastLost_ = 0;
  int64_t lastFailed_ = 0;
  uint32_t status_ = 0;
  std::string json_ = "{}";
};

} // namespace efu
