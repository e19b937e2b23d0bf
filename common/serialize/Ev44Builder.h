// SPDX-License-Identifier: BSD-2-Clause
// Reusable ev44 (Event44Message) builder: batches events without allocating, serialises on finish.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace efu::serialize {

/// Collects neutron events and serialises them as one ev44 flatbuffer per finishInto().
///
/// A new reference_time entry (with its reference_time_index) is opened whenever the pulse time
/// differs from the previous event's, so one message may hold several pulses. All storage is
/// allocated in the constructor: add() and finishInto() never allocate.
///
/// The flatbuffer is written front to back in one fixed layout (docs/wire-formats.md, section
/// 5), straight into the caller's memory with finishInto(): the events are copied once, from
/// the builder's arrays into the message. Any flatbuffers reader of the schema reads it.
///
/// Thread rules: not thread-safe; one thread owns an instance. Non-copyable.
class Ev44Builder {
public:
  /// maxEvents: events per message (>= 1); maxPulses: reference times per message (>= 1;
  /// 0 means maxEvents, i.e. every event may start a new pulse). Throws std::invalid_argument.
  explicit Ev44Builder(size_t maxEvents, size_t maxPulses = 0);
  Ev44Builder(const Ev44Builder &) = delete;
  Ev44Builder &operator=(const Ev44Builder &) = delete;

  /// source_name of the following messages. Set-up path (allocates); keeps buffered events.
  void setSource(std::string sourceName);
  [[nodiscard]] const std::string &source() const noexcept { return source_; }

  /// Appends one event. pulseTimeNs: ns since the Unix epoch; tofNs: ns after that pulse.
  /// Returns false (and stores nothing) when the message is full: no room for another event,
  /// or the pulse changes and no room for another reference time. Call finishInto(), then add
  /// again.
  bool add(int64_t pulseTimeNs, int32_t tofNs, int32_t pixelId) noexcept {
    if (events_ == maxEvents_) {
      return false;
    }
    if (pulses_ == 0 || pulseTimeNs != lastPulseNs_) {
      if (pulses_ == maxPulses_) {
        return false;
      }
      referenceTime_[pulses_] = pulseTimeNs;
      referenceIndex_[pulses_] = static_cast<int32_t>(events_);
      ++pulses_;
      lastPulseNs_ = pulseTimeNs;
    }
    timeOfFlight_[events_] = tofNs;
    pixelId_[events_] = pixelId;
    ++events_;
    return true;
  }

  /// The common case of add(), kept small enough to inline into a caller's fast path: appends
  /// the event and returns true only when it belongs to the pulse of the previous event and
  /// leaves the message short of full. Otherwise stores nothing and returns false: call add().
  bool appendToPulse(int64_t pulseTimeNs, int32_t tofNs, int32_t pixelId) noexcept {
    if (events_ == 0 || events_ + 1 >= maxEvents_ || pulseTimeNs != lastPulseNs_) {
      return false;
    }
    timeOfFlight_[events_] = tofNs;
    pixelId_[events_] = pixelId;
    ++events_;
    return true;
  }

  /// Events buffered since the last finishInto().
  [[nodiscard]] size_t events() const noexcept { return events_; }
  /// Reference times (pulses) buffered since the last finishInto().
  [[nodiscard]] size_t pulses() const noexcept { return pulses_; }
  [[nodiscard]] bool full() const noexcept { return events_ == maxEvents_; }
  [[nodiscard]] size_t maxEvents() const noexcept { return maxEvents_; }
  [[nodiscard]] size_t maxPulses() const noexcept { return maxPulses_; }

  /// Bytes of the message the buffered events make (what finishInto() writes).
  [[nodiscard]] size_t messageBytes() const noexcept;

  /// Serialises the buffered events (possibly none) with this message_id into `out`, which
  /// holds messageBytes() bytes and starts 8-byte aligned, and empties the event buffers.
  void finishInto(int64_t messageId, std::span<uint8_t> out) noexcept;

  /// Upper bound of a serialised message's size in bytes, for sizing Kafka limits.
  [[nodiscard]] static size_t maxMessageBytes(size_t maxEvents, size_t maxPulses,
                                              size_t sourceNameBytes) noexcept;

private:
  size_t maxEvents_;
  size_t maxPulses_;
  size_t events_ = 0;
  size_t pulses_ = 0;
  int64_t lastPulseNs_ = 0;
  std::unique_ptr<int64_t[]> referenceTime_;
  std::unique_ptr<int32_t[]> referenceIndex_;
  std::unique_ptr<int32_t[]> timeOfFlight_;
  std::unique_ptr<int32_t[]> pixelId_;
  std::string source_;
};

} // namespace efu::serialize
