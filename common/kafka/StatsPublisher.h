// SPDX-License-Identifier: BSD-2-Clause
// Publishes every counter as an f144 message and one x5f2 status message per interval.
#pragma once

#include "common/kafka/Producer.h"
#include "common/serialize/X5f2.h"
#include "common/stats/Stats.h"

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <string>

namespace efu::kafka {

/// Each publish() sends, for every counter in `stats` (registration order), one f144 Long with
/// source_name "efu.<serviceId>.<counter>" on statsTopic, then one x5f2 on statusTopic.
///
/// Thread rules: publish() on the thread that owns `producer`. Reads `stats` without blocking
/// its writers. `producer` and `stats` must outlive it. Allocates (set-up rate, not hot path).
class StatsPublisher {
public:
  /// status.serviceId, when empty, is set to serviceId.
  StatsPublisher(Producer &producer, const Stats &stats, std::string serviceId,
                 std::string statsTopic, std::string statusTopic, serialize::StatusInfo status);
  StatsPublisher(const StatsPublisher &) = delete;
  StatsPublisher &operator=(const StatsPublisher &) = delete;

  /// nowNs: CLOCK_REALTIME ns, used as the f144 timestamp and the Kafka timestamp.
  /// statusJson: the x5f2 status_json (module, uptime, rates, ...).
  /// Returns the number of messages handed to the producer (counters + 1).
  size_t publish(int64_t nowNs, const std::string &statusJson);

  [[nodiscard]] const std::string &statsTopic() const noexcept { return statsTopic_; }
  [[nodiscard]] const std::string &statusTopic() const noexcept { return statusTopic_; }

private:
  Producer &producer_;
  const Stats &stats_;
  std::string prefix_; // "efu.<service>."
  std::string statsTopic_;
  std::string statusTopic_;
  serialize::StatusInfo status_;
  flatbuffers::FlatBufferBuilder fbb_;
  std::string name_; // reused for "efu.<service>.<counter>"
};

} // namespace efu::kafka
