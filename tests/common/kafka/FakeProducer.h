// SPDX-License-Identifier: BSD-2-Clause
// Test double for efu::kafka::Producer: records every message it is given.
#pragma once

#include "common/kafka/Producer.h"

#include <string>
#include <vector>

namespace efu::kafka::test {

class FakeProducer final : public Producer {
public:
  struct Message {
    std::string topic;
    std::vector<uint8_t> payload;
    int64_t timestampMs;
  };

  bool produce(std::string_view topic, std::span<const uint8_t> payload,
               int64_t timestampMs) noexcept override {
    messages.push_back({std::string(topic), {payload.begin(), payload.end()}, timestampMs});
    return true;
  }
  bool produceWritten(std::string_view topic, size_t bytes, PayloadWriter write, void *context,
                      int64_t timestampMs) noexcept override {
    std::vector<uint64_t> buffer((bytes + 7) / 8); // 8-byte aligned, as promised
    const std::span<uint8_t> out(reinterpret_cast<uint8_t *>(buffer.data()), bytes);
    write(context, out);
    ++written;
    return produce(topic, out, timestampMs);
  }
  /// A full queue for tryProduce() while `full` is set (produce() would wait: not modelled).
  bool tryProduce(std::string_view topic, std::span<const uint8_t> payload,
                  int64_t timestampMs) noexcept override {
    return !full && produce(topic, payload, timestampMs);
  }
  void poll() noexcept override { ++polls; }
  int flush(int) override {
    ++flushes;
    return 0;
  }

  std::vector<Message> messages;
  bool full = false;
  int written = 0; ///< messages that came through produceWritten()
  int polls = 0;
  int flushes = 0;
};

} // namespace efu::kafka::test
