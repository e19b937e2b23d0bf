// SPDX-License-Identifier: BSD-2-Clause
// Exact packet-level accounting of a sequence-numbered datagram stream (docs/wire-formats.md §1).
#pragma once

#include <array>
#include <cstdint>

namespace efu::udp {

/// Tracks sequence numbers: loss (net of late arrivals), reordering, duplicates and restarts.
/// A restart is confirmed by the number after the jump, so it shows one datagram late.
/// A sliding window of kWindow numbers below the highest seen tells late arrivals from
/// duplicates. Single-threaded; no allocation.
class SequenceTracker {
public:
  static constexpr uint64_t kWindow = 65536;

  void add(uint64_t seq) noexcept;

  /// Numbers never received between the first and the highest seen, net of late arrivals.
  [[nodiscard]] uint64_t lost() const noexcept { return lost_; }
  /// Arrivals below the highest seen that had not been seen before.
  [[nodiscard]] uint64_t reordered() const noexcept { return reordered_; }
  [[nodiscard]] uint64_t duplicates() const noexcept { return duplicates_; }
  /// Jumps backwards beyond the window that the next number confirms (it follows the jump,
  /// not the old run); each starts a new run, and no loss is counted for the jump.
  [[nodiscard]] uint64_t restarts() const noexcept { return restarts_; }
  /// Single datagrams from beyond the window that no restart followed: too old to tell a late
  /// arrival from a duplicate, so neither count moves.
  [[nodiscard]] uint64_t stale() const noexcept { return stale_; }
  /// Numbers expected so far: highest - first + 1, summed over runs.
  [[nodiscard]] uint64_t expected() const noexcept {
    return started_ ? previousRunsExpected_ + highest_ - first_ + 1 : 0;
  }
  /// Packet error ratio: lost / expected (0 before the first packet).
  [[nodiscard]] double per() const noexcept {
    const uint64_t e = expected();
    return e == 0 ? 0.0 : static_cast<double>(lost_) / static_cast<double>(e);
  }

private:
  [[nodiscard]] bool test(uint64_t seq) const noexcept {
    return (bits_[(seq % kWindow) / 64] >> (seq % 64)) & 1U;
  }
  void set(uint64_t seq) noexcept { bits_[(seq % kWindow) / 64] |= uint64_t{1} << (seq % 64); }
  void clear(uint64_t seq) noexcept { bits_[(seq % kWindow) / 64] &= ~(uint64_t{1} << (seq % 64)); }
  void clearAll() noexcept { bits_.fill(0); }
  void startRun(uint64_t seq) noexcept;

  bool started_ = false;
  uint64_t first_ = 0;
  uint64_t highest_ = 0;
  uint64_t previousRunsExpected_ = 0;
  uint64_t lost_ = 0;
  uint64_t reordered_ = 0;
  uint64_t duplicates_ = 0;
  uint64_t restarts_ = 0;
  uint64_t stale_ = 0;
  bool restartPending_ = false;
  uint64_t restartCandidate_ = 0;
  std::array<uint64_t, kWindow / 64> bits_{}; ///< bit (n % kWindow) set: n was received
};

} // namespace efu::udp
