// SPDX-License-Identifier: BSD-2-Clause
// efu-view: which ev44 message ids of one source arrived, when partitions deliver them out of order.
#pragma once

#include <array>
#include <cstdint>

namespace efu::tools::view {

/// Counts the message ids of one source that never arrived.
///
/// A producer numbers a source's messages 0, 1, 2, ... but spreads them over the topic's
/// partitions, and a consumer reads the partitions side by side: ids arrive out of order, and
/// "an id above the next expected one" is no loss. So the tracker counts the ids between the
/// lowest and the highest seen that have not arrived (yet): an id that comes late fills its gap.
/// It remembers the last kWindow ids; an id further below the highest than that starts a new run
/// (the producer restarted and numbers from 0 again), and what the old run missed stays counted.
class MessageIds {
public:
  static constexpr int64_t kWindow = 1 << 16;

  void add(int64_t id) noexcept {
    if (!seen_) {
      startRun(id);
      return;
    }
    if (id > highest_) {
      // Ids up to the new highest are not seen yet; forget what falls out of the window.
      if (static_cast<uint64_t>(id) - static_cast<uint64_t>(highest_) >= uint64_t{kWindow}) {
        bits_.fill(0);
      } else {
        for (int64_t i = highest_ + 1; i < id; ++i) {
          clear(i);
        }
      }
      highest_ = id;
      set(id);
      ++distinct_;
      return;
    }
    if (static_cast<uint64_t>(highest_) - static_cast<uint64_t>(id) >= uint64_t{kWindow}) {
      missedBefore_ += missingInRun();
      ++restarts_;
      startRun(id);
      return;
    }
    if (isSet(id)) {
      ++duplicates_;
      return;
    }
    set(id);
    ++distinct_;
    if (id < lowest_) {
      // An earlier id of a partition read later than another: the run began before the first
      // id seen; the ids between are missing until they arrive.
      lowest_ = id;
    }
  }

  /// Ids not (yet) arrived: between the lowest and highest of each run.
  [[nodiscard]] uint64_t missing() const noexcept { return missedBefore_ + missingInRun(); }
  /// Ids that arrived twice (within the window).
  [[nodiscard]] uint64_t duplicates() const noexcept { return duplicates_; }
  /// Times the ids went back by kWindow or more: a new run of the producer.
  [[nodiscard]] uint64_t restarts() const noexcept { return restarts_; }

private:
  void startRun(int64_t id) noexcept {
    seen_ = true;
    bits_.fill(0);
    lowest_ = highest_ = id;
    distinct_ = 1;
    set(id);
  }
  [[nodiscard]] uint64_t missingInRun() const noexcept {
    const uint64_t span = static_cast<uint64_t>(highest_) - static_cast<uint64_t>(lowest_) + 1;
    return span > distinct_ ? span - distinct_ : 0;
  }
  static size_t slot(int64_t id) noexcept {
    return static_cast<size_t>(static_cast<uint64_t>(id) % uint64_t{kWindow});
  }
  void set(int64_t id) noexcept { bits_[slot(id) / 64] |= uint64_t{1} << (slot(id) % 64); }
  void clear(int64_t id) noexcept { bits_[slot(id) / 64] &= ~(uint64_t{1} << (slot(id) % 64)); }
  [[nodiscard]] bool isSet(int64_t id) const noexcept {
    return (bits_[slot(id) / 64] >> (slot(id) % 64)) & 1U;
  }

  std::array<uint64_t, kWindow / 64> bits_{};
  bool seen_ = false;
  int64_t lowest_ = 0;
  int64_t highest_ = 0;
  uint64_t distinct_ = 0;
  uint64_t missedBefore_ = 0;
  uint64_t duplicates_ = 0;
  uint64_t restarts_ = 0;
};

} // namespace efu::tools::view
