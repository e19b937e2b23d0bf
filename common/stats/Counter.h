// SPDX-License-Identifier: BSD-2-Clause
// One statistics counter: a single-writer, relaxed atomic on its own cache line.
#pragma once

#include <atomic>
#include <cstdint>

namespace efu {

/// What a registered value means to a reader, chosen at registration (Stats::add).
/// Counter: a running total that only grows while efu runs (datagrams, bytes, errors).
/// Gauge: a level or a reading that may go down (memory, queue depth, a last-interval figure,
/// a loss net of late arrivals). Prometheus exposes them as `counter` and `gauge`.
enum class CounterKind : uint8_t { Counter, Gauge };

/// A counter or gauge. Exactly one thread writes it (add/set); any thread may read it.
/// A write is a load of the writer's own value plus a release store (no locked RMW; on x86 both
/// are plain moves). Reads acquire, so a reader that sees a counter's new value also sees
/// everything its writer wrote before it — e.g. a module's counters once processing.packets shows
/// the datagram.
/// A counter that several partitions of a module register (efu --proc-threads) is a chain: the
/// registered counter heads it and each further partition's part hangs on it (Stats::addPart);
/// get() on the head reads the sum, each part is written by its own thread.
struct alignas(64) Counter {
  std::atomic<int64_t> value{0};
  std::atomic<Counter *> firstPart{nullptr}; ///< on the registered counter only
  std::atomic<Counter *> nextPart{nullptr};  ///< on a part: the next part of the same head

  void add(int64_t n = 1) noexcept {
    value.store(value.load(std::memory_order_relaxed) + n, std::memory_order_release);
  }
  /// For the rare counter several threads add to (a total over rx queues): a locked add.
  /// Every writer of such a counter must use addShared(), never add() or set().
  void addShared(int64_t n) noexcept { value.fetch_add(n, std::memory_order_acq_rel); }
  void set(int64_t v) noexcept { value.store(v, std::memory_order_release); }
  /// This counter's value plus its parts' (Stats::addPart).
  [[nodiscard]] int64_t get() const noexcept {
    int64_t sum = value.load(std::memory_order_acquire);
    for (const Counter *p = firstPart.load(std::memory_order_acquire); p != nullptr;
         p = p->nextPart.load(std::memory_order_acquire)) {
      sum += p->value.load(std::memory_order_acquire);
    }
    return sum;
  }
};
static_assert(sizeof(Counter) == 64, "one counter per cache line");

} // namespace efu
