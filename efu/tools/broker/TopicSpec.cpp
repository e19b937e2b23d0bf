// SPDX-License-Identifier: BSD-2-Clause
// Parses efu-broker's --topic NAME[:PARTITIONS] argument.
#include "efu/tools/broker/TopicSpec.h"

#include <charconv>
#include <stdexcept>

namespace efu::tools {

TopicSpec parseTopicSpec(const std::string &text) {
  TopicSpec spec;
  const auto colon = text.rfind(':');
  spec.name = text.substr(0, colon);
  if (colon != std::string::npos) {
    const std::string count = text.substr(colon + 1);
    const char *end = count.data() + count.size();
    const auto [ptr, ec] = std::from_chars(count.data(), end, spec.partitions);
    if (count.empty() || ec != std::errc() || ptr != end || spec.partitions < 1 ||
        spec.partitions > kMaxTopicPartitions) {
      throw std::invalid_argument("--topic '" + text + "': partition count '" + count +
                                  "' is not a number from 1 to " +
                                  std::to_string(kMaxTopicPartitions));
    }
  }
  if (spec.name.empty() || spec.name.size() > kMaxTopicNameLength || spec.name == "." ||
      spec.name == "..") {
    throw std::invalid_argument("--topic '" + text + "': topic name must be 1 to " +
                                std::to_string(kMaxTopicNameLength) +
                                " characters and not '.' or '..'");
  }
  for (const char c : spec.name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) {
      throw std::invalid_argument("--topic '" + text + "': topic name '" + spec.name +
                                  "' may only contain letters, digits, '.', '_' and '-'");
    }
  }
  return spec;
}

} // namespace efu::tools
