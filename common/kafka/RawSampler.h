// SPDX-License-Identifier: BSD-2-Clause
// Raw readout sampling: copies of received datagrams as ar51 messages, for commissioning.
#pragma once

#include "common/kafka/Producer.h"
#include "common/stats/Stats.h"

#include <flatbuffers/flatbuffers.h>

#include <atomic>
#include <cstdint>
#include <span>
#include <string>

namespace efu::kafka {

/// Sends copies of datagrams, byte for byte, as ar51 RawReadoutMessages on one topic: `every`
/// = 0 sends none, otherwise the first `consecutive` of every `every` datagrams; setAll(true)
/// (calibration mode, CALIB_MODE_SET 1) sends every datagram until setAll(false), and the
/// every/consecutive count pauses meanwhile.
///
/// Never stalls the data path: a sample that finds the producer queue full is dropped and
/// counted, not waited for. Counters: kafka.ar51.messages (samples queued for Kafka),
/// kafka.ar51.dropped (samples not taken by a full queue).
///
/// Thread rules: offer() on the one thread that owns `producer` (the thread that runs the
/// module); setAll()/all() from any thread. No allocation in offer() once the largest datagram
/// has been seen. `producer` and `stats` must outlive it.
class RawSampler {
public:
  RawSampler(Producer &producer, std::string topic, std::string sourceName, uint32_t every,
             uint32_t consecutive, Stats &stats);
  RawSampler(const RawSampler &) = delete;
  RawSampler &operator=(const RawSampler &) = delete;

  /// One datagram as received; sampled or not by the rule above. Hot path: one relaxed load
  /// and a counter when not sampling.
  void offer(std::span<const uint8_t> datagram) noexcept {
    if (all_.load(std::memory_order_relaxed)) {
      send(datagram);
      return;
    }
    if (every_ == 0) {
      return;
    }
    const uint32_t position = position_;
    position_ = position + 1 == every_ ? 0 : position + 1;
    if (position < consecutive_) {
      send(datagram);
    }
  }

  /// Any thread: calibration mode on (every datagram) or off (back to the every/consecutive rule).
  void setAll(bool on) noexcept { all_.store(on, std::memory_order_relaxed); }
  [[nodiscard]] bool all() const noexcept { return all_.load(std::memory_order_relaxed); }
  [[nodiscard]] const std::string &topic() const noexcept { return topic_; }

private:
  void send(std::span<const uint8_t> datagram) noexcept;

  Producer &producer_;
  std::string topic_;
  std::string sourceName_;
  uint32_t every_;
  uint32_t consecutive_;
  uint32_t position_ = 0;
  int64_t messageId_ = 0;
  std::atomic<bool> all_{false};
  flatbuffers::FlatBufferBuilder fbb_;
  Counter &messages_;
  Counter &dropped_;
};

} // namespace efu::kafka
