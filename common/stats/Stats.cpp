// SPDX-License-Identifier: BSD-2-Clause
// Registry of named counters.
#include "common/stats/Stats.h"

namespace efu {

bool Stats::validName(std::string_view name) noexcept {
  if (name.empty() || name.front() == '.' || name.back() == '.') {
    return false;
  }
  char previous = 0;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
    if (!ok || (c == '.' && previous == '.')) {
      return false;
    }
    previous = c;
  }
  return true;
}

Counter &Stats::add(std::string_view name, CounterKind kind) {
  if (!validName(name)) {
    throw StatsError("invalid counter name '" + std::string(name) +
                     "': use dotted lowercase segments of [a-z0-9_], e.g. receive.packets");
  }
  std::lock_guard lock(mutex_);
  for (const auto &existing : names_) {
    if (existing == name) {
      throw StatsError("counter '" + std::string(name) + "' is registered twice");
    }
  }
  names_.emplace_back(name);
  kinds_.push_back(kind);
  return counters_.emplace_back();
}

Counter &Stats::addPart(std::string_view name) {
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) {
      Counter &part = parts_.emplace_back();
      Counter &head = counters_[i];
      Counter *last = head.firstPart.load(std::memory_order_relaxed);
      if (last == nullptr) {
        head.firstPart.store(&part, std::memory_order_release);
      } else {
        while (Counter *next = last->nextPart.load(std::memory_order_relaxed)) {
          last = next;
        }
        last->nextPart.store(&part, std::memory_order_release);
      }
      return part;
    }
  }
  throw StatsError("counter '" + std::string(name) +
                   "' has no first part: partition 0 of the module did not register it");
}

size_t Stats::size() const {
  std::lock_guard lock(mutex_);
  return names_.size();
}

std::string Stats::name(size_t index) const {
  std::lock_guard lock(mutex_);
  return names_.at(index);
}

int64_t Stats::value(size_t index) const {
  std::lock_guard lock(mutex_);
  return counters_.at(index).get();
}

CounterKind Stats::kind(size_t index) const {
  std::lock_guard lock(mutex_);
  return kinds_.at(index);
}

const Counter *Stats::find(std::string_view name) const {
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) {
      return &counters_[i];
    }
  }
  return nullptr;
}

std::vector<Stats::Entry> Stats::snapshot() const {
  std::lock_guard lock(mutex_);
  std::vector<Entry> out;
  out.reserve(names_.size());
  for (size_t i = 0; i < names_.size(); ++i) {
    out.push_back({names_[i], counters_[i].get(), kinds_[i]});
  }
  return out;
}

} // namespace efu
