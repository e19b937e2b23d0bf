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
  void poll() noexcept override { ++polls; }
  int flush(int) override {
    ++flushes;
    return 0;
  }

  std::vector<Message> messages;
  int polls = 0;
  int flushes = 0;
};

} // namespace efu::kafka::test
