// SPDX-License-Identifier: BSD-2-Clause
// udpgen --sweep: udpmon's "throughput vs spacing" curve, with the receiving efu's counts.
#pragma once

#include "generators/udpgen/UdpGenOptions.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace efu::udpgen {

/// The spacings of `--sweep FROM:TO:STEP` (µs, FROM <= TO, all > 0, at most 1000 steps),
/// FROM, FROM + STEP, ... up to TO inclusive. Throws std::invalid_argument naming the value.
[[nodiscard]] std::vector<double> sweepSpacings(const std::string &spec);

/// What one spacing gave. Receiver figures are absent without --cmdport.
struct SweepRow {
  double spacingUs = 0.0;
  uint64_t sent = 0;    ///< datagrams the kernel accepted in this step
  uint64_t failed = 0;  ///< datagrams refused by the kernel (ENOBUFS, ...)
  double seconds = 0.0; ///< from the step's first send to its last
  double txMbps = 0.0;  ///< user data sent / seconds
  double txKpps = 0.0;
  std::optional<int64_t> received; ///< receive.packets of the receiving efu, this step
  std::optional<int64_t> dropped;  ///< receive.dropped (socket buffer full), this step
  [[nodiscard]] double rxMbps(uint32_t sizeBytes) const noexcept;
  /// sent - received: every datagram not counted by the receiver, wherever it was lost.
  [[nodiscard]] std::optional<int64_t> lost() const noexcept;
};

/// Runs one step of `options.count` datagrams per spacing of `options.sweep`, one stream of
/// sequence numbers. With `options.cmdPort` it reads the receiving efu's counters on
/// `options.address`:cmdPort before and after each step (after: once what was sent has been
/// counted, or nothing new came for 1 s). `onRow` is called after each step.
std::vector<SweepRow> runSweep(const UdpGenOptions &options, const std::atomic<bool> &stop,
                               const std::function<void(const SweepRow &)> &onRow);

/// The table printed at the end (one line per spacing) and the --json form.
[[nodiscard]] std::string sweepText(const std::vector<SweepRow> &rows, uint32_t sizeBytes);
[[nodiscard]] std::string sweepJson(const std::vector<SweepRow> &rows, uint32_t sizeBytes);

} // namespace efu::udpgen
