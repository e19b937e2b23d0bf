// SPDX-License-Identifier: BSD-2-Clause
// Bounded single-producer single-consumer ring with batch reserve/commit on both sides.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>

namespace efu {

/// Lock-free SPSC ring of `capacity` (a power of two) default-constructed slots that are reused
/// in place: the producer writes into a slot, commits it, the consumer reads it in place and
/// releases it. No element is ever copied or moved by the ring.
///
/// Thread rules: reserve()/producerSlot()/commit()/tryPush() only from the one producer thread;
/// available()/consumerSlot()/release()/tryPop() only from the one consumer thread.
/// Each side owns its index (relaxed), reads the other's with acquire, publishes with release,
/// and caches the other side's index to avoid touching its cache line on every call.
template <typename T> class SpscRing {
  static_assert(std::is_default_constructible_v<T>, "slots are constructed once, up front");
  static_assert(std::is_nothrow_destructible_v<T>);

public:
  explicit SpscRing(size_t capacity)
      : capacity_(capacity), mask_(capacity - 1), slots_(std::make_unique<T[]>(capacity)) {
    if (capacity < 2 || !std::has_single_bit(capacity)) {
      throw std::invalid_argument("SpscRing capacity must be a power of two >= 2");
    }
  }
  SpscRing(const SpscRing &) = delete;
  SpscRing &operator=(const SpscRing &) = delete;

  [[nodiscard]] size_t capacity() const noexcept { return capacity_; }

  // ---- producer side ----

  /// Number of free slots the producer may fill, at most `max`. They are producerSlot(0..n-1).
  [[nodiscard]] size_t reserve(size_t max) noexcept {
    const size_t head = head_.value.load(std::memory_order_relaxed);
    size_t free = capacity_ - (head - tailCache_);
    if (free < max) {
      tailCache_ = tail_.value.load(std::memory_order_acquire);
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

  /// Number of filled slots the consumer may read, at most `max`. They are consumerSlot(0..n-1).
  [[nodiscard]] size_t available(size_t max) noexcept {
    const size_t tail = tail_.value.load(std::memory_order_relaxed);
    size_t filled = headCache_ - tail;
    if (filled < max) {
      headCache_ = head_.value.load(std::memory_order_acquire);
      filled = headCache_ - tail;
    }
    return filled < max ? filled : max;
  }
  [[nodiscard]] T &consumerSlot(size_t i) noexcept {
    return slots_[(tail_.value.load(std::memory_order_relaxed) + i) & mask_];
  }
  /// Hands the first n readable slots back to the producer.
  void release(size_t n) noexcept {
    tail_.value.store(tail_.value.load(std::memory_order_relaxed) + n, std::memory_order_release);
  }
  /// Copy-out convenience for tests and small items. False when empty.
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
    const size_t tail = tail_.value.load(std::memory_order_acquire);
    const size_t head = head_.value.load(std::memory_order_acquire);
    const size_t size = head - tail;
    return size < capacity_ ? size : capacity_;
  }

private:
  static constexpr size_t kCacheLine = 64;
  struct alignas(kCacheLine) Index {
    std::atomic<size_t> value{0};
  };

  const size_t capacity_;
  const size_t mask_;
  std::unique_ptr<T[]> slots_;
  Index head_; ///< next slot the producer fills; written by the producer
  Index tail_; ///< next slot the consumer reads; written by the consumer
  alignas(kCacheLine) size_t tailCache_{0}; ///< producer's copy of tail_
  alignas(kCacheLine) size_t headCache_{0}; ///< consumer's copy of head_
};

} // namespace efu
