// SPDX-License-Identifier: BSD-2-Clause
// When perfgen's batches fall due: a schedule on the wall clock that ticks of any period follow
// exactly on average, with a bound on what one tick makes.
#pragma once

#include <cstdint>

namespace efu::perfgen {

/// Batch k (k = 0, 1, 2, ...) falls due at origin + ceil(k * 1e12 / milliRate) ns, the origin
/// being the time of the first advance(). Each due time is computed from k, never summed up
/// period by period, so there is no drift: by time t, floor((t - origin) * rate) + 1 batches
/// have fallen due, whatever the ticks in between. A tick makes at most `maxPerTick` of the
/// batches due; the older ones beyond that are skipped for good (a stall is not made up for in a
/// burst). When the clock goes back, the schedule starts again from that time.
class BatchSchedule {
public:
  /// milliRate >= 1 (batches per 1000 s), maxPerTick >= 1.
  BatchSchedule(uint64_t milliRate, uint64_t maxPerTick) noexcept
      : milliRate_(milliRate), maxPerTick_(maxPerTick) {}

  /// What to do at one tick: make batches [first, first + count), after skipping `skipped`
  /// (those before `first`); `restarted` when the clock went back and the schedule began again.
  struct Step {
    uint64_t first = 0;
    uint64_t count = 0;
    uint64_t skipped = 0;
    bool restarted = false;
  };

  Step advance(int64_t nowNs) noexcept {
    Step step;
    if (!started_ || nowNs < lastNowNs_) {
      step.restarted = started_;
      started_ = true;
      originNs_ = nowNs;
      next_ = 0;
    }
    lastNowNs_ = nowNs;
    const auto elapsed = static_cast<Wide>(nowNs - originNs_);
    const auto dueUpTo = static_cast<uint64_t>(elapsed * milliRate_ / kMilliNsPerSecond) + 1;
    const uint64_t due = dueUpTo > next_ ? dueUpTo - next_ : 0;
    step.skipped = due > maxPerTick_ ? due - maxPerTick_ : 0;
    step.first = next_ + step.skipped;
    step.count = due - step.skipped;
    next_ = dueUpTo > next_ ? dueUpTo : next_;
    return step;
  }

  /// When batch k falls due (its reference time), ns on the clock advance() is given.
  [[nodiscard]] int64_t dueNs(uint64_t k) const noexcept {
    const Wide scaled = static_cast<Wide>(k) * kMilliNsPerSecond;
    return originNs_ + static_cast<int64_t>((scaled + milliRate_ - 1) / milliRate_);
  }

private:
  // ns x milli-batches passes 64 bits (after 18 s at the highest rate): 128-bit arithmetic.
  __extension__ typedef unsigned __int128 Wide;
  static constexpr Wide kMilliNsPerSecond = 1'000'000'000'000; // 1e9 ns x 1000

  uint64_t milliRate_;
  uint64_t maxPerTick_;
  bool started_ = false;
  int64_t originNs_ = 0;
  int64_t lastNowNs_ = 0;
  uint64_t next_ = 0; ///< the first batch not yet made or skipped
};

} // namespace efu::perfgen
