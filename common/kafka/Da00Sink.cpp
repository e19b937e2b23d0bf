// SPDX-License-Identifier: BSD-2-Clause
// da00 data array sink.
#include "common/kafka/Da00Sink.h"

#include "common/serialize/Da00.h"

namespace efu::kafka {

Da00Sink::Da00Sink(Producer &producer, std::string topic, std::string sourceName, Counter &messages,
                   Counter &invalid, size_t maxMessageBytes)
    : producer_(producer), topic_(std::move(topic)), source_(std::move(sourceName)),
      messages_(messages), invalid_(invalid), maxMessageBytes_(maxMessageBytes) {}

bool Da00Sink::publish(int64_t timestampNs, std::span<const sdk::DataVariable> variables) noexcept {
  std::span<const uint8_t> bytes;
  try {
    bytes = serialize::buildDa00(fbb_, source_, timestampNs, variables);
  } catch (const std::exception &) {
    invalid_.add(1);
    return false;
  }
  // A message the producer refuses at once (MSG_SIZE_TOO_LARGE, ...) is counted there, in
  // kafka.failed: not here, and not by the module as published.
  if (!producer_.produce(topic_, bytes, 0)) {
    return false;
  }
  messages_.add(1);
  return true;
}

} // namespace efu::kafka
