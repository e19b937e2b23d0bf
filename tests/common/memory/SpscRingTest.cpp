// SPDX-License-Identifier: BSD-2-Clause
// SpscRing: capacity rules, empty/full edges, wrap-around, batches, slot lifetime, two threads.
#include "common/memory/SpscRing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

namespace efu {
namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr uint64_t kStressItems = 200'000;
#else
constexpr uint64_t kStressItems = 4'000'000;
#endif

/// Counts constructions and destructions of ring slots; assignment is not construction.
struct Counted {
  static inline int constructed = 0;
  static inline int destroyed = 0;
  static void reset() {
    constructed = 0;
    destroyed = 0;
  }

  Counted() noexcept { ++constructed; }
  Counted(const Counted &other) noexcept : value(other.value) { ++constructed; }
  Counted &operator=(const Counted &other) noexcept = default;
  ~Counted() { ++destroyed; }

  int value = 0;
};

TEST(SpscRing, RejectsCapacityThatIsNotAPowerOfTwo) {
  for (size_t capacity : {size_t{0}, size_t{1}, size_t{3}, size_t{6}, size_t{1000}, size_t{1025}}) {
    EXPECT_THROW(SpscRing<int>{capacity}, std::invalid_argument) << "capacity " << capacity;
  }
}

TEST(SpscRing, AcceptsPowersOfTwo) {
  for (size_t capacity : {size_t{2}, size_t{4}, size_t{64}, size_t{1024}, size_t{65536}}) {
    SpscRing<int> ring(capacity);
    EXPECT_EQ(ring.capacity(), capacity);
    EXPECT_EQ(ring.sizeApprox(), 0U);
  }
}

TEST(SpscRing, RejectedCapacityLeavesNoLiveSlots) {
  Counted::reset();
  EXPECT_THROW(SpscRing<Counted>{6}, std::invalid_argument);
  EXPECT_EQ(Counted::constructed, Counted::destroyed);
}

TEST(SpscRing, EmptyRingHasNothingToPop) {
  SpscRing<int> ring(4);
  int out = -1;
  EXPECT_FALSE(ring.tryPop(out));
  EXPECT_EQ(out, -1);
  EXPECT_EQ(ring.available(16), 0U);
  EXPECT_EQ(ring.reserve(16), 4U);
}

TEST(SpscRing, FullRingRefusesPushUntilOneIsPopped) {
  SpscRing<int> ring(4);
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(ring.tryPush(i));
  }
  EXPECT_EQ(ring.sizeApprox(), 4U);
  EXPECT_FALSE(ring.tryPush(99));
  EXPECT_EQ(ring.reserve(1), 0U);
  EXPECT_EQ(ring.available(100), 4U);

  int out = -1;
  ASSERT_TRUE(ring.tryPop(out));
  EXPECT_EQ(out, 0);
  EXPECT_EQ(ring.reserve(8), 1U);
  EXPECT_TRUE(ring.tryPush(4));
  EXPECT_FALSE(ring.tryPush(5));

  for (int expected = 1; expected <= 4; ++expected) {
    ASSERT_TRUE(ring.tryPop(out));
    EXPECT_EQ(out, expected);
  }
  EXPECT_FALSE(ring.tryPop(out));
  EXPECT_EQ(ring.sizeApprox(), 0U);
}

TEST(SpscRing, CapacityTwoAlternates) {
  SpscRing<int> ring(2);
  int out = 0;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(ring.tryPush(2 * i));
    ASSERT_TRUE(ring.tryPush(2 * i + 1));
    ASSERT_FALSE(ring.tryPush(-1));
    ASSERT_TRUE(ring.tryPop(out));
    ASSERT_EQ(out, 2 * i);
    ASSERT_TRUE(ring.tryPop(out));
    ASSERT_EQ(out, 2 * i + 1);
    ASSERT_FALSE(ring.tryPop(out));
  }
}

TEST(SpscRing, WrapsAroundManyTimesKeepingOrder) {
  SpscRing<uint64_t> ring(8);
  uint64_t next = 0;
  uint64_t expected = 0;
  // Fill levels vary between 1 and 7 so the indices cross the end at every offset.
  for (int round = 0; round < 10'000; ++round) {
    const int pushes = 1 + round % 7;
    for (int i = 0; i < pushes; ++i) {
      ASSERT_TRUE(ring.tryPush(next++));
    }
    uint64_t out = 0;
    while (ring.tryPop(out)) {
      ASSERT_EQ(out, expected++);
    }
  }
  EXPECT_EQ(expected, next);
  EXPECT_GT(next, 8U * 1000U);
}

TEST(SpscRing, ReserveReturnsFewerThanAskedWhenNearlyFull) {
  SpscRing<int> ring(8);
  ASSERT_EQ(ring.reserve(5), 5U);
  for (size_t i = 0; i < 5; ++i) {
    ring.producerSlot(i) = static_cast<int>(i);
  }
  ring.commit(5);
  EXPECT_EQ(ring.reserve(10), 3U);
  EXPECT_EQ(ring.reserve(2), 2U);
  EXPECT_EQ(ring.reserve(0), 0U);
  EXPECT_EQ(ring.available(10), 5U);
  EXPECT_EQ(ring.available(3), 3U);
}

TEST(SpscRing, BatchCommitPublishesOnlyTheCommittedSlots) {
  SpscRing<int> ring(16);
  ASSERT_EQ(ring.reserve(10), 10U);
  for (size_t i = 0; i < 10; ++i) {
    ring.producerSlot(i) = 100 + static_cast<int>(i);
  }
  const int *const fifthSlot = &ring.producerSlot(4);
  ring.commit(4); // e.g. recvmmsg filled only 4 of the 10
  ASSERT_EQ(ring.available(16), 4U);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(ring.consumerSlot(i), 100 + static_cast<int>(i));
  }
  // The uncommitted reservations are handed out again, from the same position.
  ASSERT_EQ(ring.reserve(16), 12U);
  EXPECT_EQ(&ring.producerSlot(0), fifthSlot);
  EXPECT_EQ(ring.producerSlot(0), 104);
  ring.producerSlot(0) = 7;
  ring.commit(1);
  EXPECT_EQ(ring.available(16), 5U);
  EXPECT_EQ(ring.consumerSlot(4), 7);
}

TEST(SpscRing, BatchReleaseHandsSlotsBackInPart) {
  SpscRing<int> ring(8);
  ASSERT_EQ(ring.reserve(8), 8U);
  for (size_t i = 0; i < 8; ++i) {
    ring.producerSlot(i) = static_cast<int>(i);
  }
  ring.commit(8);
  EXPECT_EQ(ring.reserve(1), 0U);

  ASSERT_EQ(ring.available(8), 8U);
  ring.release(3);
  EXPECT_EQ(ring.sizeApprox(), 5U);
  EXPECT_EQ(ring.reserve(8), 3U);
  ASSERT_EQ(ring.available(8), 5U);
  EXPECT_EQ(ring.consumerSlot(0), 3);
  EXPECT_EQ(ring.consumerSlot(4), 7);
  ring.release(5);
  EXPECT_EQ(ring.available(8), 0U);
  EXPECT_EQ(ring.reserve(8), 8U);
}

TEST(SpscRing, SlotsAreReusedInPlace) {
  SpscRing<int> ring(4);
  ASSERT_EQ(ring.reserve(1), 1U);
  int *first = &ring.producerSlot(0);
  ring.commit(1);
  ASSERT_EQ(ring.available(1), 1U);
  EXPECT_EQ(&ring.consumerSlot(0), first);
  ring.release(1);
  for (int i = 0; i < 4; ++i) { // one full lap
    ASSERT_TRUE(ring.tryPush(i));
    int out = 0;
    ASSERT_TRUE(ring.tryPop(out));
  }
  ASSERT_EQ(ring.reserve(1), 1U);
  EXPECT_EQ(&ring.producerSlot(0), first + 1);
}

TEST(SpscRing, SlotsAreConstructedOnceUpFrontAndDestroyedOnce) {
  Counted::reset();
  {
    SpscRing<Counted> ring(8);
    EXPECT_EQ(Counted::constructed, 8);
    EXPECT_EQ(Counted::destroyed, 0);

    Counted item;
    Counted out;
    Counted::reset();
    for (int i = 0; i < 100; ++i) {
      item.value = i;
      ASSERT_TRUE(ring.tryPush(item));
      ASSERT_TRUE(ring.tryPop(out));
      ASSERT_EQ(out.value, i);
    }
    for (int lap = 0; lap < 10; ++lap) {
      const size_t n = ring.reserve(8);
      ASSERT_EQ(n, 8U);
      for (size_t i = 0; i < n; ++i) {
        ring.producerSlot(i).value = lap;
      }
      ring.commit(n);
      ASSERT_EQ(ring.available(8), 8U);
      ring.release(8);
    }
    EXPECT_EQ(Counted::constructed, 0) << "the ring must not construct elements after set-up";
    EXPECT_EQ(Counted::destroyed, 0) << "the ring must not destroy elements before its end";
    Counted::reset();
  }
  // The ring's 8 slots plus the two locals.
  EXPECT_EQ(Counted::constructed, 0);
  EXPECT_EQ(Counted::destroyed, 8 + 2);
}

TEST(SpscRing, SizeApproxFollowsPushesAndPops) {
  SpscRing<int> ring(16);
  EXPECT_EQ(ring.sizeApprox(), 0U);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(ring.tryPush(i));
    EXPECT_EQ(ring.sizeApprox(), static_cast<size_t>(i + 1));
  }
  ASSERT_EQ(ring.reserve(3), 3U);
  EXPECT_EQ(ring.sizeApprox(), 10U) << "reserved but uncommitted slots are not filled";
  ring.commit(3);
  EXPECT_EQ(ring.sizeApprox(), 13U);
  ASSERT_EQ(ring.available(5), 5U);
  EXPECT_EQ(ring.sizeApprox(), 13U) << "readable but unreleased slots are still filled";
  ring.release(5);
  EXPECT_EQ(ring.sizeApprox(), 8U);
}

TEST(SpscRing, TwoThreadStressKeepsStrictOrderWithRandomBatches) {
  SpscRing<uint64_t> ring(1024);
  std::atomic<bool> failed{false};
  uint64_t firstBad = 0;
  uint64_t received = 0;

  std::thread consumer([&] {
    std::mt19937 random(7);
    std::uniform_int_distribution<size_t> batch(1, 96);
    uint64_t expected = 0;
    while (expected < kStressItems) {
      const size_t n = ring.available(batch(random));
      if (n == 0) {
        std::this_thread::yield();
        continue;
      }
      for (size_t i = 0; i < n; ++i) {
        if (ring.consumerSlot(i) != expected && !failed.load(std::memory_order_relaxed)) {
          firstBad = expected;
          failed.store(true);
        }
        ++expected;
      }
      ring.release(n);
    }
    received = expected;
  });

  std::mt19937 random(42);
  std::uniform_int_distribution<size_t> batch(1, 128);
  uint64_t next = 0;
  while (next < kStressItems) {
    const size_t want = std::min<uint64_t>(batch(random), kStressItems - next);
    const size_t n = ring.reserve(want);
    if (n == 0) {
      std::this_thread::yield();
      continue;
    }
    ASSERT_LE(n, want);
    for (size_t i = 0; i < n; ++i) {
      ring.producerSlot(i) = next++;
    }
    ring.commit(n);
  }
  consumer.join();

  EXPECT_FALSE(failed.load()) << "first out-of-order item expected " << firstBad;
  EXPECT_EQ(received, kStressItems);
  EXPECT_EQ(ring.sizeApprox(), 0U);
}

TEST(SpscRing, TwoThreadStressWithTryPushTryPopOnTinyRing) {
  SpscRing<uint64_t> ring(2);
  const uint64_t items = kStressItems / 80;
  uint64_t mismatches = 0;
  uint64_t sum = 0;

  std::thread consumer([&] {
    uint64_t expected = 0;
    uint64_t out = 0;
    while (expected < items) {
      if (!ring.tryPop(out)) {
        std::this_thread::yield();
        continue;
      }
      mismatches += out != expected ? 1 : 0;
      sum += out;
      ++expected;
    }
  });
  for (uint64_t i = 0; i < items;) {
    if (ring.tryPush(i)) {
      ++i;
    } else {
      std::this_thread::yield();
    }
  }
  consumer.join();
  EXPECT_EQ(mismatches, 0U);
  EXPECT_EQ(sum, items * (items - 1) / 2);
}

// Regression: sizeApprox() once loaded head_ before tail_. A third thread could read head, then
// both sides advance, then read a tail beyond the head it saw: head - tail wrapped to ~2^64.
// sizeApprox() is documented as callable from any thread, for monitoring; while both sides run
// it must never report more than the capacity.
TEST(SpscRing, SizeApproxFromMonitorThreadStaysWithinCapacity) {
  SpscRing<uint64_t> ring(16);
  std::atomic<bool> done{false};
  size_t worst = 0;

  // Producer and consumer run until the monitor has taken its samples. The monitor never
  // yields: being preempted between its two loads is what opens the window.
  std::thread producer([&] {
    for (uint64_t i = 0; !done.load(std::memory_order_relaxed);) {
      if (ring.tryPush(i)) {
        ++i;
      } else {
        std::this_thread::yield();
      }
    }
  });
  std::thread consumer([&] {
    uint64_t out = 0;
    while (!done.load(std::memory_order_relaxed)) {
      if (!ring.tryPop(out)) {
        std::this_thread::yield();
      }
    }
  });
  for (uint64_t sample = 0; sample < kStressItems * 25 && worst <= ring.capacity(); ++sample) {
    worst = std::max(worst, ring.sizeApprox());
  }
  done.store(true);
  producer.join();
  consumer.join();
  EXPECT_LE(worst, ring.capacity())
      << "sizeApprox() read from a monitor thread wrapped around";
}

} // namespace
} // namespace efu

namespace efu {
namespace {

// Several consumers (efu's module partitions): each reads every slot; a slot is free again once
// the slowest has released it.
TEST(SpscRingBroadcast, EachConsumerReadsEverySlotAndTheSlowestHoldsTheSpace) {
  SpscRing<int> ring(4, 3);
  EXPECT_EQ(ring.consumers(), 3U);
  ASSERT_EQ(ring.reserve(4), 4U);
  for (int i = 0; i < 4; ++i) {
    ring.producerSlot(static_cast<size_t>(i)) = i;
  }
  ring.commit(4);
  EXPECT_EQ(ring.reserve(1), 0U);
  for (size_t c = 0; c < 3; ++c) {
    ASSERT_EQ(ring.available(8, c), 4U);
    EXPECT_EQ(ring.consumerSlot(2, c), 2);
  }
  ring.release(4, 0);
  ring.release(2, 2);
  EXPECT_EQ(ring.reserve(4), 0U) << "consumer 1 has released nothing";
  ring.release(1, 1);
  EXPECT_EQ(ring.reserve(4), 1U);
  ring.release(3, 1);
  EXPECT_EQ(ring.reserve(4), 2U) << "consumer 2 is now the slowest";
  EXPECT_EQ(ring.available(8, 0), 0U);
  EXPECT_EQ(ring.available(8, 2), 2U);
  EXPECT_THROW((SpscRing<int>{4, 0}), std::invalid_argument);
}

TEST(SpscRingBroadcast, ThreeConsumersThreadsEachGetEveryItemInOrder) {
  constexpr uint64_t kItems = 300000;
  constexpr size_t kConsumers = 3;
  SpscRing<uint64_t> ring(64, kConsumers);
  std::array<std::atomic<uint64_t>, kConsumers> received{};
  std::array<std::atomic<bool>, kConsumers> ordered{};
  std::vector<std::thread> consumers;
  for (size_t c = 0; c < kConsumers; ++c) {
    ordered[c] = true;
    consumers.emplace_back([&, c] {
      std::mt19937 random(static_cast<unsigned>(c));
      std::uniform_int_distribution<size_t> batch(1, 40);
      uint64_t expected = 0;
      while (expected < kItems) {
        const size_t n = ring.available(batch(random), c);
        if (n == 0) {
          std::this_thread::yield();
          continue;
        }
        for (size_t i = 0; i < n; ++i) {
          if (ring.consumerSlot(i, c) != expected) {
            ordered[c] = false;
          }
          ++expected;
        }
        ring.release(n, c);
      }
      received[c] = expected;
    });
  }
  uint64_t next = 0;
  while (next < kItems) {
    const size_t n = ring.reserve(std::min<uint64_t>(17, kItems - next));
    if (n == 0) {
      std::this_thread::yield();
      continue;
    }
    for (size_t i = 0; i < n; ++i) {
      ring.producerSlot(i) = next++;
    }
    ring.commit(n);
  }
  for (std::thread &t : consumers) {
    t.join();
  }
  for (size_t c = 0; c < kConsumers; ++c) {
    EXPECT_EQ(received[c].load(), kItems) << "consumer " << c;
    EXPECT_TRUE(ordered[c].load()) << "consumer " << c;
  }
}

} // namespace
} // namespace efu
