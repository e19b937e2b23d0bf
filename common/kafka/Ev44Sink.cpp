// SPDX-License-Identifier: BSD-2-Clause
// ev44 event sink.
#include "common/kafka/Ev44Sink.h"

#include "common/time/Time.h"

#include <algorithm>

namespace efu::kafka {

Ev44Sink::Ev44Sink(Producer &producer, std::string topic, std::string sourceName,
                   size_t maxEventsPerMessage, uint32_t flushIntervalMs, Stats &stats,
                   size_t maxPulsesPerMessage)
    : producer_(producer), topic_(std::move(topic)),
      builder_(maxEventsPerMessage, std::min(maxPulsesPerMessage, maxEventsPerMessage)),
      flushIntervalNs_(static_cast<int64_t>(flushIntervalMs) * kNsPerMs),
      ids_(&ownIds_), messages_(stats.add("kafka.ev44.messages")),
      events_(stats.add("kafka.ev44.events")) {
  builder_.setSource(std::move(sourceName));
}

Ev44Sink::Ev44Sink(const Ev44Sink &first, std::string sourceName)
    : producer_(first.producer_), topic_(first.topic_),
      builder_(first.builder_.maxEvents(), first.builder_.maxPulses()),
      flushIntervalNs_(first.flushIntervalNs_), ids_(&ownIds_), messages_(first.messages_),
      events_(first.events_) {
  builder_.setSource(std::move(sourceName));
}

Ev44Sink::Ev44Sink(Ev44Sink &peer, Producer &producer, Counter &messages, Counter &events)
    : producer_(producer), topic_(peer.topic_),
      builder_(peer.builder_.maxEvents(), peer.builder_.maxPulses()),
      flushIntervalNs_(peer.flushIntervalNs_), ids_(peer.ids_), messages_(messages),
      events_(events) {
  builder_.setSource(peer.builder_.source());
}

Ev44Sink::Ev44Sink(const Ev44Sink &first, Ev44Sink &peer)
    : producer_(first.producer_), topic_(first.topic_),
      builder_(first.builder_.maxEvents(), first.builder_.maxPulses()),
      flushIntervalNs_(first.flushIntervalNs_), ids_(peer.ids_), messages_(first.messages_),
      events_(first.events_) {
  builder_.setSource(peer.builder_.source());
}

void Ev44Sink::addAtEdge(int64_t pulseTimeNs, int32_t tofNs, int32_t pixelId) noexcept {
  if (!builder_.add(pulseTimeNs, tofNs, pixelId)) {
    send();
    (void)builder_.add(pulseTimeNs, tofNs, pixelId); // always fits in an empty message
  }
  if (builder_.full()) {
    send();
  }
}

void Ev44Sink::tick(int64_t nowNs) noexcept {
  producer_.poll();
  if (builder_.events() == 0) {
    return;
  }
  if (!firstSeen_) {
    firstSeen_ = true;
    firstSeenNs_ = nowNs;
  }
  if (nowNs - firstSeenNs_ >= flushIntervalNs_) {
    send();
  }
}

void Ev44Sink::flush() noexcept {
  if (builder_.events() > 0) {
    send();
  }
}

void Ev44Sink::send() noexcept {
  const auto events = static_cast<int64_t>(builder_.events());
  // The message is written once, into the producer's memory (a pooled block for a large one).
  // Timestamp 0: librdkafka stamps the send time. Pulse times are not used for it because a
  // module without real pulses may send 0, which would make the broker expire the data at once.
  sendingId_ = ids_->fetch_add(1, std::memory_order_relaxed);
  (void)producer_.produceWritten(
      topic_, builder_.messageBytes(),
      [](void *sink, std::span<uint8_t> out) noexcept {
        auto *self = static_cast<Ev44Sink *>(sink);
        self->builder_.finishInto(self->sendingId_, out);
      },
      this, 0);
  messages_.add(1);
  events_.add(events);
  firstSeen_ = false;
}

} // namespace efu::kafka
