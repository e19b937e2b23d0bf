// SPDX-License-Identifier: BSD-2-Clause
// Clock helpers: monotonic time for intervals and pacing, realtime for timestamps on the wire.
#pragma once

#include <atomic>
#include <cstdint>
#include <ctime>

namespace efu {

constexpr int64_t kNsPerSec = 1'000'000'000;
constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kNsPerUs = 1'000;

/// CLOCK_MONOTONIC in ns: for measuring intervals and scheduling.
inline int64_t monotonicNs() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

/// CLOCK_REALTIME in ns since the Unix epoch: for timestamps that leave the process.
inline int64_t realtimeNs() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

/// Longest single sleep of sleepUntilMonotonicNs(): a stop request is seen at most this late
/// even when the signal that set it went to another thread.
constexpr int64_t kStopCheckNs = 50 * kNsPerMs;

/// The one paced wait of every program: sleeps until the given CLOCK_MONOTONIC time (absolute,
/// so repeated calls never drift) or until `stop` is set, whichever comes first. It sleeps in
/// slices of at most kStopCheckNs and a signal cuts a slice short, so a stop is noticed within
/// 50 ms however far the deadline is. Returns true at the deadline, false when stopped.
inline bool sleepUntilMonotonicNs(int64_t deadlineNs, const std::atomic<bool> &stop) noexcept {
  for (;;) {
    if (stop.load(std::memory_order_relaxed)) {
      return false;
    }
    const int64_t nowNs = monotonicNs();
    if (nowNs >= deadlineNs) {
      return true;
    }
    const int64_t wakeNs = deadlineNs - nowNs > kStopCheckNs ? nowNs + kStopCheckNs : deadlineNs;
    const timespec ts{static_cast<time_t>(wakeNs / kNsPerSec),
                      static_cast<long>(wakeNs % kNsPerSec)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr); // EINTR: look at `stop`
  }
}

} // namespace efu
