// SPDX-License-Identifier: BSD-2-Clause
// A Producer for a further processing thread: messages wait in a ring until the thread that owns
// the real producer forwards them (efu --proc-threads).
#pragma once

#include "common/kafka/Producer.h"
#include "common/memory/SpscRing.h"

#include <cstdint>
#include <string>
#include <vector>

namespace efu::kafka {

/// One message waiting in a ForwardingProducer's ring.
struct ForwardedMessage {
  std::string topic;
  std::vector<uint64_t> words; ///< the payload, 8-byte aligned as produceWritten promises
  size_t bytes = 0;
  int64_t timestampMs = 0;
};

/// What a further partition of a module (efu --proc-threads) produces through: every message is
/// written into a slot of a ring, and the thread that owns the real producer hands the waiting
/// ones to it with forwardTo() (KafkaOutput::tick(), at least every 10 ms). The real producer
/// counts, delivers and applies back-pressure; here a full ring makes produce() wait until a
/// slot is forwarded, so nothing is dropped.
///
/// Thread rules: produce()/tryProduce()/produceWritten() from one thread (the partition's),
/// forwardTo() from another (the real producer's). A slot's buffer grows to the largest message
/// it held and is then reused.
class ForwardingProducer final : public Producer {
public:
  /// `maxPayloadBytes`: the real producer's limit (KafkaProducer::maxPayloadBytes(); 0 = none).
  /// A larger message is still forwarded, so that the real producer refuses and counts it
  /// (kafka.failed), but produce() says false at once, as the real producer would.
  explicit ForwardingProducer(size_t slots = 256, size_t maxPayloadBytes = 0);

  bool produce(std::string_view topic, std::span<const uint8_t> payload,
               int64_t timestampMs) noexcept override;
  bool tryProduce(std::string_view topic, std::span<const uint8_t> payload,
                  int64_t timestampMs) noexcept override;
  bool produceWritten(std::string_view topic, size_t bytes, PayloadWriter write, void *context,
                      int64_t timestampMs) noexcept override;
  /// Nothing to serve: delivery reports arrive on the real producer's thread.
  void poll() noexcept override {}
  /// Forwarding is the other thread's: returns the messages not yet forwarded.
  int flush(int timeoutMs) override;

  /// The real producer's thread: produces every waiting message through `to`; returns how many.
  size_t forwardTo(Producer &to) noexcept;
  /// Times a produce found the ring full and waited (diagnostics, any thread).
  [[nodiscard]] uint64_t fullWaits() const noexcept {
    return fullWaits_.load(std::memory_order_relaxed);
  }

private:
  using Slot = ForwardedMessage;
  /// A free slot with room for `bytes`, waiting while the ring is full (`wait`), or nullptr.
  Slot *claim(std::string_view topic, size_t bytes, int64_t timestampMs, bool wait) noexcept;
  /// produce() (`wait`) and tryProduce().
  bool put(std::string_view topic, std::span<const uint8_t> payload, int64_t timestampMs,
           bool wait) noexcept;

  SpscRing<Slot> ring_;
  size_t maxPayloadBytes_;
  std::atomic<uint64_t> fullWaits_{0};
};

} // namespace efu::kafka
