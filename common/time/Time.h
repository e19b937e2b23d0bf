// SPDX-License-Identifier: BSD-2-Clause
// Clock helpers: monotonic time for intervals and pacing, realtime for timestamps on the wire.
#pragma once

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

/// Sleeps until the given CLOCK_MONOTONIC time (absolute, so repeated calls never drift).
inline void sleepUntilMonotonicNs(int64_t deadlineNs) noexcept {
  timespec ts{static_cast<time_t>(deadlineNs / kNsPerSec), static_cast<long>(deadlineNs % kNsPerSec)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
  }
}

} // namespace efu
