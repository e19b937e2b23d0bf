// SPDX-License-Identifier: BSD-2-Clause
// EventSink that batches module events into ev44 messages and produces them.
#pragma once

#include "common/kafka/Producer.h"
#include "common/sdk/Module.h"
#include "common/serialize/Ev44Builder.h"
#include "common/stats/Stats.h"

#include <atomic>
#include <cstdint>
#include <string>

namespace efu::kafka {

/// Batches events into ev44 messages on one topic. A message is produced when it holds
/// maxEventsPerMessage events, when an event of a further pulse arrives and the message holds
/// maxPulsesPerMessage pulses already (default 1: one pulse per message, as the ESS EFU sends
/// and as consumers that read only reference_time[0], such as just-bin-it, need), when tick()
/// finds its first event buffered for flushIntervalMs, and on flush(). message_id starts at 0
/// and increases by one per message.
///
/// Counters registered in `stats`: kafka.ev44.messages (messages produced),
/// kafka.ev44.events (events in them).
///
/// Thread rules: add(), tick() and flush() on the one thread that owns `producer` (the
/// processing thread; each partition's thread has sinks of its own). No allocation after construction. `producer` and `stats` must outlive it.
class Ev44Sink final : public sdk::EventSink {
public:
  /// maxPulsesPerMessage 0 = as many pulses as events. Throws std::invalid_argument for
  /// maxEventsPerMessage 0; StatsError if the counters exist.
  Ev44Sink(Producer &producer, std::string topic, std::string sourceName,
           size_t maxEventsPerMessage, uint32_t flushIntervalMs, Stats &stats,
           size_t maxPulsesPerMessage = 1);
  /// Another source on `first`'s topic: the same producer, limits and counters (the counters
  /// count all sources), its own messages with source_name `sourceName` and message_id from 0.
  Ev44Sink(const Ev44Sink &first, std::string sourceName);
  /// The same source as `peer` on another thread (a further partition of the module, efu
  /// --proc-threads): peer's topic, source name and limits, produced through `producer` and
  /// counted in `messages` and `events` (parts of peer's counters, Stats::addPart). message_id
  /// comes from peer's sequence, so a source's ids stay gap-free over all partitions (their
  /// messages may reach Kafka out of id order). `peer` must outlive it.
  Ev44Sink(Ev44Sink &peer, Producer &producer, Counter &messages, Counter &events);
  /// Another source of the same partition: as Ev44Sink(first, sourceName), but message_id from
  /// `peer`'s sequence (peer: the same source in partition 0).
  Ev44Sink(const Ev44Sink &first, Ev44Sink &peer);
  Ev44Sink(const Ev44Sink &) = delete;
  Ev44Sink &operator=(const Ev44Sink &) = delete;

  /// Buffers one event; produces the message when it becomes full (may then block on
  /// back-pressure, see Producer::produce).
  void add(int64_t pulseTimeNs, int32_t tofNs, int32_t pixelId) noexcept override {
    // Per event: no call and no saved registers unless the pulse changes or the message fills.
    if (!builder_.appendToPulse(pulseTimeNs, tofNs, pixelId)) [[unlikely]] {
      addAtEdge(pulseTimeNs, tofNs, pixelId);
    }
  }

  /// Call at least every 10 ms, also when idle. Polls the producer, and produces the partial
  /// message once tick() has seen it non-empty for flushIntervalMs. nowNs: any clock, the same
  /// for every call (efu passes CLOCK_REALTIME ns as Module::tick does).
  void tick(int64_t nowNs) noexcept;

  /// Produces what is buffered (nothing if empty). Does not wait for delivery: the owner calls
  /// Producer::flush() afterwards at shutdown.
  void flush() noexcept;

  [[nodiscard]] size_t buffered() const noexcept { return builder_.events(); }
  [[nodiscard]] int64_t nextMessageId() const noexcept {
    return ids_->load(std::memory_order_relaxed);
  }
  [[nodiscard]] const std::string &topic() const noexcept { return topic_; }
  [[nodiscard]] const std::string &sourceName() const noexcept { return builder_.source(); }

private:
  /// add() for an event that opens a pulse, fills the message or finds it full.
  void addAtEdge(int64_t pulseTimeNs, int32_t tofNs, int32_t pixelId) noexcept;
  void send() noexcept;

  Producer &producer_;
  std::string topic_;
  serialize::Ev44Builder builder_;
  int64_t flushIntervalNs_;
  int64_t firstSeenNs_ = -1; // tick() time at which the buffered events were first seen
  bool firstSeen_ = false;
  std::atomic<int64_t> ownIds_{0}; ///< this source's message_id sequence (partition 0's sink)
  std::atomic<int64_t> *ids_;       ///< the sequence drawn from: own, or partition 0's sink's
  int64_t sendingId_ = 0;           ///< the id of the message being written
  Counter &messages_;
  Counter &events_;
};

} // namespace efu::kafka
