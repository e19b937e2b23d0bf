// SPDX-License-Identifier: BSD-2-Clause
// The counter registry in the Prometheus text exposition format (version 0.0.4).
#pragma once

#include "common/stats/Stats.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace efu::metrics {

/// Labels every series carries: --instrument and -r/--region.
struct CommonLabels {
  std::string instrument;
  std::string region;
};

/// Where one efu counter goes: metric name and the labels its name held.
///
/// `a.b.c` becomes `efu_a_b_c`, with `_total` for a counter (not for a gauge). A segment
/// `q<digits>` (rx queue: `receive.q1.packets`) becomes the label queue="1" and a pair
/// `oq.<digits>` (ESS output queue: `parser.essheader.oq.03.packets`) the label
/// output_queue="3", leading zeros dropped; each is taken out of the name, the first of each
/// kind only. Characters outside [a-zA-Z0-9_] become `_`. A name ending in an abbreviated time
/// unit (`_us`, `_ms`, `_ns`: `udp.delay.p50_us`) ends in `_seconds` instead and its value is
/// written in seconds (Prometheus's base unit): `efu_udp_delay_p50_seconds`.
struct Series {
  std::string metric;      ///< e.g. efu_receive_packets_total
  std::string queue;       ///< "" when the name has no q<digits> segment
  std::string outputQueue; ///< "" when the name has no oq.<digits> pair
  std::string pattern;     ///< the efu name with placeholders: receive.q<queue>.packets
  uint64_t unitsPerSecond = 0; ///< 1000000 for a name in _us; 0 = written as it is
};
[[nodiscard]] Series seriesOf(std::string_view counterName, CounterKind kind);

/// A label value as the text format writes it between quotes: \ " and newline escaped.
[[nodiscard]] std::string escapeLabelValue(std::string_view value);

/// The whole exposition of `entries` (a Stats::snapshot()): per metric family one `# HELP`
/// (the efu names it holds) and one `# TYPE` line, then its samples, families in the order of
/// their first counter. Series with the same name and labels as an earlier one, or whose family
/// already has the other type, cannot be told apart by a scraper and are left out (the first
/// wins); efu's own names never collide.
[[nodiscard]] std::string exposition(const std::vector<Stats::Entry> &entries,
                                     const CommonLabels &labels);

} // namespace efu::metrics
