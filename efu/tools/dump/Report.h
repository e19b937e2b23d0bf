// SPDX-License-Identifier: BSD-2-Clause
// efu-dump --report: a module's report read from efu's control port (REPORT_GET), printed, and
// its log-binned histograms drawn as PNG bar charts.
#pragma once

#include "efu/tools/dump/TofHistogram.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace efu::tools {

/// One histogram of a report: {"unit":"ns","count":N,"max":M,"bins":[[lower bound, count],...]}
/// with the bins of common/stats/LogHistogram.h (non-empty ones only).
struct ReportHistogram {
  std::string name; ///< its key in the report: delay, interarrival, burst, reorder
  std::string unit; ///< "ns" or what is counted ("datagrams")
  uint64_t count = 0;
  uint64_t max = 0;
  std::vector<std::pair<uint64_t, uint64_t>> bins; ///< [lower bound, count], ascending
};

/// The members of `report` that are histograms, in the report's order; other members are
/// left out. std::invalid_argument naming the member when one looks like a histogram but is
/// malformed (bins not pairs of non-negative integers, not ascending, not LogHistogram bounds).
[[nodiscard]] std::vector<ReportHistogram> histogramsOf(const nlohmann::json &report);

/// A text table of one histogram: a header line (count, max, p50/p90/p99 as bin lower bounds),
/// then one line per non-empty bin: its range, its count, its share and a bar of '#'.
[[nodiscard]] std::string histogramText(const ReportHistogram &histogram);

/// A bar chart of the bins from the first non-empty one to the last, one bar per log bin (so the
/// x axis is logarithmic: 8 bars per power of two above 16), ticks at powers of two labelled in
/// µs for "ns" histograms, as plain numbers otherwise.
[[nodiscard]] RgbImage renderHistogramChart(const ReportHistogram &histogram);

/// REPORT_GET `name` from efu's control port at address:port: the report's JSON.
/// ControlError when efu cannot be reached; std::runtime_error naming the report when efu has
/// no report of that name or the reply is not JSON parseJson() accepts (nesting, size, duplicate
/// keys: common/system/BoundedJson.h).
[[nodiscard]] nlohmann::json fetchReport(const std::string &address, uint16_t port,
                                         const std::string &name);

/// efu-dump --report: fetches the report `name` (fetchReport), prints its histograms as tables
/// and any other member as "key: JSON" on stdout; with a non-empty `pngPrefix`, draws each
/// non-empty histogram as <pngPrefix><histogram>.png. Throws what fetchReport, histogramsOf and
/// writePng throw.
void showReport(const std::string &address, uint16_t port, const std::string &name,
                const std::string &pngPrefix);

} // namespace efu::tools
