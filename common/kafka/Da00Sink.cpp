// SPDX-License-Identifier: BSD-2-Clause
// da00 data array sink.
#include "common/kafka/Da00Sink.h"

#include "common/serialize/Da00.h"

namespace efu::kafka {

Da00Sink::Da00Sink(Producer &producer, std::string topic, std::string sourceName, Counter &messages,
                   Counter &invalid)
    : producer_(producer), topic_(std::move(topic)), source_(std::move(sourceName)),
      messages_(messages), invalid_(invalid) {}

void Da00Sink::publish(int64_t timestampNs, std::span<const sdk::DataVariable> variables) noexcept {
  std::span<const uint8_t> bytes;
  try {
    bytes = serialize::buildDa00(fbb_, source_, timestampNs, variables);
  } catch (const std::exception &) {
    invalid_.add(1);
    return;
  }
  (void)producer_.produce(topic_, bytes, 0);
  messages_.add(1);
}

} // namespace efu::kafka
