// SPDX-License-Identifier: BSD-2-Clause
// f144 counters and x5f2 status publisher.
#include "common/kafka/StatsPublisher.h"

#include "common/serialize/F144.h"
#include "common/time/Time.h"

namespace efu::kafka {

StatsPublisher::StatsPublisher(Producer &producer, const Stats &stats, std::string serviceId,
                               std::string statsTopic, std::string statusTopic,
                               serialize::StatusInfo status)
    : producer_(producer), stats_(stats), prefix_("efu." + serviceId + "."),
      statsTopic_(std::move(statsTopic)), statusTopic_(std::move(statusTopic)),
      status_(std::move(status)), fbb_(1024) {
  if (status_.serviceId.empty()) {
    status_.serviceId = std::move(serviceId);
  }
}

size_t StatsPublisher::publish(int64_t nowNs, const std::string &statusJson) {
  const int64_t timestampMs = nowNs / kNsPerMs;
  size_t sent = 0;
  for (const auto &entry : stats_.snapshot()) {
    name_.assign(prefix_).append(entry.name);
    (void)producer_.produce(statsTopic_, serialize::buildF144Long(fbb_, name_, nowNs, entry.value),
                            timestampMs);
    ++sent;
  }
  (void)producer_.produce(statusTopic_, serialize::buildX5f2(fbb_, status_, statusJson),
                          timestampMs);
  return sent + 1;
}

} // namespace efu::kafka
