// SPDX-License-Identifier: BSD-2-Clause
// sleepUntilMonotonicNs(deadline, stop): returns at the deadline, or as soon as stop is set,
// however far the deadline is (a hang here is what udpgen --pcap did over a 10-year gap).
#include "common/time/Time.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace efu {
namespace {

constexpr int64_t kTenYearsNs = int64_t{10} * 365 * 24 * 3600 * kNsPerSec;

TEST(SleepUntil, ReturnsTrueAtAPastOrNearDeadline) {
  const std::atomic<bool> stop{false};
  EXPECT_TRUE(sleepUntilMonotonicNs(monotonicNs() - kNsPerSec, stop));
  const int64_t deadlineNs = monotonicNs() + 2 * kNsPerMs;
  EXPECT_TRUE(sleepUntilMonotonicNs(deadlineNs, stop));
  EXPECT_GE(monotonicNs(), deadlineNs); // never early
}

TEST(SleepUntil, ASetStopReturnsFalseAtOnce) {
  const std::atomic<bool> stop{true};
  EXPECT_FALSE(sleepUntilMonotonicNs(monotonicNs() + kTenYearsNs, stop));
}

TEST(SleepUntil, AStopFromAnotherThreadEndsAFarWait) {
  std::atomic<bool> stop{false};
  std::atomic<bool> waiting{false};
  std::atomic<int> result{-1};
  std::thread waiter([&] {
    waiting.store(true);
    result.store(sleepUntilMonotonicNs(monotonicNs() + kTenYearsNs, stop) ? 1 : 0);
  });
  while (!waiting.load()) {
    std::this_thread::yield();
  }
  stop.store(true); // no signal: the sleep must look at the flag by itself
  waiter.join();    // hangs (ctest's timeout) if the wait does not wake for the flag
  EXPECT_EQ(result.load(), 0);
}

} // namespace
} // namespace efu
