// SPDX-License-Identifier: BSD-2-Clause
// The seam between efu and Kafka: what the event sink and the stats publisher produce into.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace efu::kafka {

/// Sends payloads to topics. Implemented by KafkaProducer, and by fakes in tests.
///
/// Thread rule: exactly one thread uses a Producer (in efu: the processing thread, which
/// publishes both events and stats). Counters behind it are written by that thread.
class Producer {
public:
  virtual ~Producer() = default;

  /// Hands a copy of `payload` to the producer. timestampMs: Kafka message timestamp in ms since
  /// the Unix epoch; 0 means "now". May block while the producer queue is full (back-pressure).
  /// Returns false when the message was refused for good (counted as failed); true when queued.
  virtual bool produce(std::string_view topic, std::span<const uint8_t> payload,
                       int64_t timestampMs) noexcept = 0;

  /// The same, but never waits: when the producer queue is full the message is not taken and
  /// not counted (the caller counts it as dropped). For data that must not stall the pipeline,
  /// such as raw-readout samples. Returns true when queued.
  virtual bool tryProduce(std::string_view topic, std::span<const uint8_t> payload,
                          int64_t timestampMs) noexcept {
    return produce(topic, payload, timestampMs);
  }

  /// Writes the message into the producer's own memory instead of copying a buffer of the
  /// caller's: calls `write(context, out)` once, before queueing, with `out` of exactly `bytes`
  /// bytes, 8-byte aligned, to fill. Otherwise as produce(). KafkaProducer hands a large
  /// message to librdkafka as written, without a copy.
  using PayloadWriter = void (*)(void *context, std::span<uint8_t> out) noexcept;
  virtual bool produceWritten(std::string_view topic, size_t bytes, PayloadWriter write,
                              void *context, int64_t timestampMs) noexcept = 0;

  /// Serves delivery reports and errors without blocking. Call regularly (every few ms).
  virtual void poll() noexcept = 0;

  /// Waits up to timeoutMs for everything produced to be delivered or to fail.
  /// Returns the number of messages still undelivered.
  virtual int flush(int timeoutMs) = 0;
};

} // namespace efu::kafka
