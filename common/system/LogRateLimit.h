// SPDX-License-Identifier: BSD-2-Clause
// At most one log line per interval for one kind of trouble (a broker, a carbon server away).
#pragma once

#include <cstdint>
#include <string>

namespace efu {

/// The rule of efu's problem logs (KafkaProducer, GraphiteOutput): the first line of a problem
/// is logged at once, then at most one per `intervalNs`; the lines swallowed meanwhile are
/// counted, the newest kept, and said when the window closes (the owner calls dueReport() on
/// its periodic path and logs "N further ... (the last was: ...)"). Not thread-safe: one
/// owner thread.
struct LogRateLimit {
  int64_t intervalNs;
  int64_t lastNs = 0;
  bool logged = false;
  int64_t suppressed = 0;
  std::string last; ///< the newest suppressed line

  /// True: log now (a new window starts). False: counted as suppressed.
  bool allow(int64_t nowNs) noexcept {
    if (logged && nowNs - lastNs < intervalNs) {
      ++suppressed;
      return false;
    }
    logged = true;
    lastNs = nowNs;
    return true;
  }
  /// True when the window has closed with lines swallowed: the owner says so now (rather than
  /// at the next problem, which may never come), then calls reported().
  [[nodiscard]] bool dueReport(int64_t nowNs) const noexcept {
    return suppressed > 0 && nowNs - lastNs >= intervalNs;
  }
  /// After the owner has logged the count: the next problem is logged at once.
  void reported() noexcept {
    suppressed = 0;
    logged = false;
  }
};

} // namespace efu
