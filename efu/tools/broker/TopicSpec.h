// SPDX-License-Identifier: BSD-2-Clause
// Parses efu-broker's --topic NAME[:PARTITIONS] argument.
#pragma once

#include <string>

namespace efu::tools {

inline constexpr int kMaxTopicPartitions = 1000;
inline constexpr size_t kMaxTopicNameLength = 249; // Kafka's own limit

struct TopicSpec {
  std::string name;
  int partitions = 1;
};

/// Parses "NAME" or "NAME:PARTITIONS". Names follow Kafka's rules ([A-Za-z0-9._-], at most
/// 249 characters, not "." or ".."); partitions are 1..kMaxTopicPartitions. Throws
/// std::invalid_argument with a message that quotes the bad value.
TopicSpec parseTopicSpec(const std::string &text);

} // namespace efu::tools
