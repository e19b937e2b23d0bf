// SPDX-License-Identifier: BSD-2-Clause
// One statistics counter: a single-writer, relaxed atomic on its own cache line.
#pragma once

#include <atomic>
#include <cstdint>

namespace efu {

/// A counter or gauge. Exactly one thread writes it (add/set); any thread may read it.
/// Writes are relaxed load+store (no locked RMW): cheap enough for the hot path.
struct alignas(64) Counter {
  std::atomic<int64_t> value{0};

  void add(int64_t n = 1) noexcept {
    value.store(value.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void set(int64_t v) noexcept { value.store(v, std::memory_order_relaxed); }
  [[nodiscard]] int64_t get() const noexcept { return value.load(std::memory_order_relaxed); }
};
static_assert(sizeof(Counter) == 64, "one counter per cache line");

} // namespace efu
