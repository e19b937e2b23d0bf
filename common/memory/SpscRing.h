// SPDX-License-Identifier: BSD-2-Clause
// Bounded single-producer ring with batch reserve/commit on both sides, read by one consumer or
// by several that each read every slot (a broadcast).
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace efu {

/// Lock-free SPSC ring of `capacity` (a power of two) default-constructed slots that are reused
/// in place: the producer writes into a slot, commits it, the consumer reads it in place and
/// releases it. No element is ever copied or moved by the ring.
///
/// With `consumers` > 1 every consumer reads every slot (each has its own read index, the
/// `consumer` argument of the consumer side), and a slot is free again once all of them have
/// released it: efu's processing threads, one per module partition, all read one rx ring.
///
/// Thread rules: reserve()/producerSlot()/commit()/tryPush() only from the one producer thread;
/// available()/consumerSlot()/release()/tryPop() for consumer c only from consumer c's thread.
/// Each side owns its index (relaxed), reads the other's with acquire, publishes with release,
/// and caches the other side's index to avoid touching its cache line on every call.
template <typename T> class SpscRing {
  static_assert(std::is_default_constructible_v<T>, "slots are constructed once, up front");
  static_assert(std::is_nothrow_destructible_v<T>);

public:
  explicit SpscRing(size_t capacity, size_t consumers = 1)
      : capacity_(capacity), mask_(capacity - 1), slots_(std::make_unique<T[]>(capacity)),
        readers_(consumers == 0 ? 1 : consumers) {
    if (capacity < 2 || !std::has_single_bit(capacity)) {
      throw std::invalid_argument("SpscRing capacity must be a power of two >= 2");
    }
    if (consumers == 0 || consumers > kMaxConsumers) {
      throw std::invalid_argument("SpscRing consumers must be 1.." + std::to_string(kMaxConsumers));
    }
  }
  /// The most consumers one ring serves.
  static constexpr size_t kMaxConsumers = 64;
  SpscRing(const SpscRing &) = delete;
  SpscRing &operator=(const SpscRing &) = delete;

  [[nodiscard]] size_t capacity() const noexcept { return capacity_; }
  [[nodiscard]] size_t consumers() const noexcept { return readers_.size(); }

  // ---- producer side ----

  /// Number of free slots the producer may fill, at most `max`. They are producerSlot(0..n-1).
  [[nodiscard]] size_t reserve(size_t max) noexcept {
    const size_t head = head_.value.load(std::memory_order_relaxed);
    size_t free = capacity_ - (head - tailCache_);
    if (free < max) {
      tailCache_ = slowestTail();
      free = capacity_ - (head - tailCache_);
    }
    return free < max ? free : max;
  }
  /// The i-th reserved slot (i < the value returned by reserve()).
  [[nodiscard]] T &producerSlot(size_t i) noexcept {
    return slots_[(head_.value.load(std::memory_order_relaxed) + i) & mask_];
  }
  /// Publishes the first n reserved slots to the consumer.
  void commit(size_t n) noexcept {
    head_.value.store(head_.value.load(std::memory_order_relaxed) + n, std::memory_order_release);
  }
  /// Copy-in convenience for tests and small items. False when full.
  [[nodiscard]] bool tryPush(const T &item) noexcept(std::is_nothrow_copy_assignable_v<T>) {
    if (reserve(1) == 0) {
      return false;
    }
    producerSlot(0) = item;
    commit(1);
    return true;
  }

  // ---- consumer side ----

  /// Number of filled slots consumer `c` may read, at most `max`. They are consumerSlot(0..n-1).
  [[nodiscard]] size_t available(size_t max, size_t c = 0) noexcept {
    Reader &r = readers_[c];
    const size_t tail = r.tail.load(std::memory_order_relaxed);
    size_t filled = r.headCache - tail;
    if (filled < max) {
      r.headCache = head_.value.load(std::memory_order_acquire);
      filled = r.headCache - tail;
    }
    return filled < max ? filled : max;
  }
  [[nodiscard]] T &consumerSlot(size_t i, size_t c = 0) noexcept {
    return slots_[(readers_[c].tail.load(std::memory_order_relaxed) + i) & mask_];
  }
  /// Consumer `c` is done with its first n readable slots (free once every consumer is).
  void release(size_t n, size_t c = 0) noexcept {
    std::atomic<size_t> &tail = readers_[c].tail;
    tail.store(tail.load(std::memory_order_relaxed) + n, std::memory_order_release);
  }
  /// Copy-out convenience for tests and small items (one consumer). False when empty.
  [[nodiscard]] bool tryPop(T &out) noexcept(std::is_nothrow_copy_assignable_v<T>) {
    if (available(1) == 0) {
      return false;
    }
    out = consumerSlot(0);
    release(1);
    return true;
  }

  /// Approximate fill level, for any thread (monitoring only).
  [[nodiscard]] size_t sizeApprox() const noexcept {
    // Tail first: head only grows, so head read later is >= that tail (never wraps below 0).
    // Both may move in between, so clamp to the capacity.
    const size_t tail = slowestTail();
    const size_t head = head_.value.load(std::memory_order_acquire);
    const size_t size = head - tail;
    return size < capacity_ ? size : capacity_;
  }

private:
  static constexpr size_t kCacheLine = 64;
  struct alignas(kCacheLine) Index {
    std::atomic<size_t> value{0};
  };
  /// One consumer's read index and its copy of head_, on a cache line of their own.
  struct alignas(kCacheLine) Reader {
    std::atomic<size_t> tail{0}; ///< next slot this consumer reads; written by it
    size_t headCache = 0;        ///< this consumer's copy of head_
  };

  /// The read index of the consumer furthest behind (the producer may reuse slots below it).
  [[nodiscard]] size_t slowestTail() const noexcept {
    const size_t head = head_.value.load(std::memory_order_relaxed);
    size_t slowest = readers_[0].tail.load(std::memory_order_acquire);
    for (size_t c = 1; c < readers_.size(); ++c) {
      const size_t tail = readers_[c].tail.load(std::memory_order_acquire);
      if (head - tail > head - slowest) {
        slowest = tail;
      }
    }
    return slowest;
  }

  const size_t capacity_;
  const size_t mask_;
  std::unique_ptr<T[]> slots_;
  Index head_; ///< next slot the producer fills; written by the producer
  std::vector<Reader> readers_;
  alignas(kCacheLine) size_t tailCache_{0}; ///< producer's copy of the slowest tail
};

} // namespace efu
