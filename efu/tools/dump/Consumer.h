// SPDX-License-Identifier: BSD-2-Clause
// The Kafka consumer of the tools (efu-dump, efu-view): created with the same defaults, -X on top,
// and the partitions of a topic looked up without a consumer group.
#pragma once

#include "common/kafka/RdKafka.h"

#include <librdkafka/rdkafka.h>

#include <functional>
#include <string>
#include <vector>

namespace efu::tools {

/// What a tool's consumer is made of.
struct ConsumerSettings {
  std::string brokers;               ///< -b/--broker
  std::string clientId;              ///< the program's name
  std::vector<std::string> settings; ///< -X key=value, applied last (they override the defaults)
  /// Called on the configuration before -X is applied: a program's callbacks and own defaults.
  std::function<void(rd_kafka_conf_t *)> configure;
};

/// A consumer for assigning partitions directly: a group.id of its own (`<clientId>-<pid>`,
/// which librdkafka wants though nothing is committed), no commits, and
/// auto.offset.reset=earliest (a position the broker trimmed away restarts at the oldest message
/// kept). Log lines go to spdlog. Throws std::runtime_error naming the setting (and -X or
/// -b/--broker) that librdkafka refused.
kafka::RdKafkaPtr<rd_kafka_t> createConsumer(const ConsumerSettings &settings);

/// One metadata request for a topic: its partition count, or why there is none (yet).
struct PartitionLookup {
  int partitions = 0;                                   ///< > 0 when the topic is there
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR; ///< of the request itself
  std::string problem; ///< when partitions == 0: what to tell the user
};

/// Asks the cluster for `topic`'s partitions, waiting at most `timeoutMs`. A request that timed
/// out has err RD_KAFKA_RESP_ERR__TIMED_OUT (librdkafka keeps connecting in the background).
PartitionLookup lookupPartitions(rd_kafka_t *rk, const std::string &topic,
                                 const std::string &brokers, int timeoutMs);

} // namespace efu::tools
