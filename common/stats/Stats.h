// SPDX-License-Identifier: BSD-2-Clause
// Registry of named counters: registered at set-up, written by one thread each, read by publishers.
#pragma once

#include "common/stats/Counter.h"

#include <cstddef>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace efu {

/// Thrown when a counter name is malformed or registered twice.
class StatsError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Names are dotted lowercase ("receive.packets", "readouts.errors.size"): [a-z0-9_] segments separated
/// by single dots. Counters keep their registration order, which is the 1-based index used by the
/// control protocol (STAT_GET i). References returned by add() stay valid for the registry's life.
/// Thread rules: add() may be called from any thread (it locks); reading values never locks
/// the writers. size()/name()/value() are safe while counters are being written.
class Stats {
public:
  Stats() = default;
  Stats(const Stats &) = delete;
  Stats &operator=(const Stats &) = delete;

  /// Registers a new counter, or a gauge with CounterKind::Gauge (a value that may go down).
  /// Throws StatsError on a bad or duplicate name.
  Counter &add(std::string_view name, CounterKind kind = CounterKind::Counter);

  /// A part of the registered counter `name` for another writer thread (a further partition of
  /// a module, efu --proc-threads): reading `name` (get(), value(), snapshot()) gives the sum of
  /// the counter and its parts. Throws StatsError when `name` is not registered.
  Counter &addPart(std::string_view name);

  [[nodiscard]] size_t size() const;
  /// 0-based access; throws std::out_of_range.
  [[nodiscard]] std::string name(size_t index) const;
  [[nodiscard]] int64_t value(size_t index) const;
  [[nodiscard]] CounterKind kind(size_t index) const;
  /// Looks a counter up by name; nullptr if absent.
  [[nodiscard]] const Counter *find(std::string_view name) const;

  struct Entry {
    std::string name;
    int64_t value;
    CounterKind kind = CounterKind::Counter;
  };
  /// A consistent list of names with their current values and kinds, in registration order.
  [[nodiscard]] std::vector<Entry> snapshot() const;

  [[nodiscard]] static bool validName(std::string_view name) noexcept;

private:
  mutable std::mutex mutex_;
  std::deque<Counter> counters_; // deque: stable addresses as it grows
  std::deque<Counter> parts_;
  std::vector<std::string> names_;
  std::vector<CounterKind> kinds_;
};

} // namespace efu
