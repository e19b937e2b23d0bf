// SPDX-License-Identifier: BSD-2-Clause
// Datagrams a sender's kernel refused, counted by errno: one shape for every generator's summary.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>

namespace efu {

/// Datagrams the kernel refused, by errno (udpgen's generator and replay, readoutgen).
struct SendErrors {
  uint64_t enobufs = 0;     ///< ENOBUFS (queue full).
  uint64_t connRefused = 0; ///< ECONNREFUSED (an ICMP said nobody listens).
  uint64_t other = 0;       ///< any other errno
  int lastOtherErrno = 0;   ///< errno of the last "other" failure, 0 if none.

  void count(int err, uint64_t datagrams) noexcept;
  [[nodiscard]] uint64_t total() const noexcept { return enobufs + connRefused + other; }
  /// "N (ENOBUFS a, ECONNREFUSED b, other c[, last: text])" for the summaries.
  [[nodiscard]] std::string text() const;
  /// {"total", "enobufs", "econnrefused", "other"}
  [[nodiscard]] nlohmann::json json() const;
};

} // namespace efu
