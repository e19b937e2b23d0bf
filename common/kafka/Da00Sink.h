// SPDX-License-Identifier: BSD-2-Clause
// DataArraySink that serialises a module's data arrays as da00 messages and produces them.
#pragma once

#include "common/kafka/Producer.h"
#include "common/sdk/Module.h"
#include "common/stats/Counter.h"

#include <flatbuffers/flatbuffers.h>

#include <string>

namespace efu::kafka {

/// One source's data arrays on one topic: every publish() is one da00 message with source_name
/// `sourceName`, produced at once (Kafka timestamp: the send time, as for ev44).
/// Counters (shared by all sources, owned by the caller): `messages` counts messages the
/// producer took, `invalid` arrays refused because a variable's data does not match its shape.
/// A message the producer refuses (larger than `maxMessageBytes`, ...) is counted by the
/// producer (kafka.failed) and publish() returns false.
/// Thread rules: publish() on the thread that owns `producer`. The builder's memory is reused:
/// arrays of one shape allocate only for the first message.
class Da00Sink final : public sdk::DataArraySink {
public:
  /// maxMessageBytes: the largest payload `producer` takes (KafkaProducer::maxPayloadBytes()).
  Da00Sink(Producer &producer, std::string topic, std::string sourceName, Counter &messages,
           Counter &invalid, size_t maxMessageBytes);
  Da00Sink(const Da00Sink &) = delete;
  Da00Sink &operator=(const Da00Sink &) = delete;

  bool publish(int64_t timestampNs, std::span<const sdk::DataVariable> variables) noexcept override;
  [[nodiscard]] size_t maxMessageBytes() const noexcept override { return maxMessageBytes_; }

  [[nodiscard]] const std::string &topic() const noexcept { return topic_; }
  [[nodiscard]] const std::string &sourceName() const noexcept { return source_; }

private:
  Producer &producer_;
  std::string topic_;
  std::string source_;
  Counter &messages_;
  Counter &invalid_;
  size_t maxMessageBytes_;
  flatbuffers::FlatBufferBuilder fbb_{4096};
};

} // namespace efu::kafka
