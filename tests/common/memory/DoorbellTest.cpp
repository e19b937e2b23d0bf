// SPDX-License-Identifier: BSD-2-Clause
// Doorbell: a sleeping consumer is woken by every ring, and never misses one (two-thread stress).
#include "common/memory/Doorbell.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace efu {
namespace {

// Waits far longer than any test may take: a lost wake-up hangs the test until ctest's
// timeout fails it, instead of being hidden by a short timeout.
constexpr int64_t kForeverNs = 3600LL * 1'000'000'000;

TEST(Doorbell, AWaitWithoutRingEndsAtTheTimeout) {
  Doorbell bell;
  const uint32_t ticket = bell.prepareWait();
  bell.wait(ticket, 1'000'000); // 1 ms, nobody rings
  SUCCEED();
}

TEST(Doorbell, RingWithoutSleeperCostsNothingAndMovesNoTicket) {
  Doorbell bell;
  const uint32_t before = bell.prepareWait();
  bell.cancelWait();
  bell.ring();
  EXPECT_EQ(bell.prepareWait(), before);
}

TEST(Doorbell, RingMovesTheTicketOfAnAnnouncedSleeper) {
  Doorbell bell;
  const uint32_t ticket = bell.prepareWait();
  bell.ring(); // between the announcement and the wait: the wait must return at once
  bell.wait(ticket, kForeverNs);
  EXPECT_NE(bell.prepareWait(), ticket);
}

/// A producer publishes numbered work items one at a time and rings; the consumer takes each
/// and sleeps whenever there is none. Any lost wake-up leaves the consumer asleep for good.
TEST(Doorbell, NoWakeUpIsLostUnderStress) {
  constexpr uint64_t kItems = 200000;
  Doorbell bell;
  std::atomic<uint64_t> published{0};
  std::atomic<uint64_t> consumed{0};
  std::atomic<uint64_t> sleeps{0};
  std::thread consumer([&] {
    uint64_t taken = 0;
    while (taken < kItems) {
      const uint64_t available = published.load(std::memory_order_acquire);
      if (available > taken) {
        taken = available;
        consumed.store(taken, std::memory_order_release);
        continue;
      }
      const uint32_t ticket = bell.prepareWait();
      if (published.load(std::memory_order_acquire) > taken) {
        bell.cancelWait();
      } else {
        sleeps.fetch_add(1);
        bell.wait(ticket, kForeverNs);
      }
    }
  });
  for (uint64_t i = 1; i <= kItems; ++i) {
    published.store(i, std::memory_order_release);
    bell.ring();
    if (i % 64 == 0) {
      // Let the consumer catch up and fall asleep now and then.
      while (consumed.load(std::memory_order_acquire) < i) {
        std::this_thread::yield();
      }
    }
  }
  consumer.join();
  EXPECT_EQ(consumed.load(), kItems);
  EXPECT_GT(sleeps.load(), 0U); // the sleeping path was exercised
}

TEST(Doorbell, SeveralProducersWakeOneConsumer) {
  constexpr int kProducers = 3;
  constexpr uint64_t kEach = 20000;
  Doorbell bell;
  std::atomic<uint64_t> published{0};
  std::thread consumer([&] {
    while (published.load(std::memory_order_acquire) < kProducers * kEach) {
      const uint32_t ticket = bell.prepareWait();
      if (published.load(std::memory_order_acquire) >= kProducers * kEach) {
        bell.cancelWait();
        break;
      }
      bell.wait(ticket, kForeverNs);
    }
  });
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&] {
      for (uint64_t i = 0; i < kEach; ++i) {
        published.fetch_add(1, std::memory_order_release);
        bell.ring();
      }
    });
  }
  for (auto &t : producers) {
    t.join();
  }
  consumer.join();
  EXPECT_EQ(published.load(), kProducers * kEach);
}

} // namespace
} // namespace efu
