// SPDX-License-Identifier: BSD-2-Clause
// efu-dump pictures: the "signal" of da00 data arrays (the cbm module's histograms), summed per
// source over the run, as a bar chart against its time-bin axis.
#pragma once

#include "efu/tools/dump/TofHistogram.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace efu::tools {

/// The summed histogram of one source.
struct Da00Series {
  std::string source;
  std::string axis;          ///< the signal's axis (the cbm module: frame_time)
  std::string axisUnit;      ///< its unit ("ns")
  std::string signalUnit;    ///< the signal's unit
  std::vector<double> edges; ///< bin edges (size bins + 1) or centres (size bins)
  std::vector<int64_t> sums; ///< per bin, the signal of every message added
  uint64_t messages = 0;     ///< messages summed
  uint64_t skipped = 0;      ///< messages of this source not summed (see Da00Histograms::add)
};

/// Sums the variable "signal" of da00 messages, bin by bin, per source. Drawn: a 1-D signal of
/// integers whose axis names a variable of the message holding its bin edges (bins + 1 values)
/// or centres (bins values), as the cbm module's histograms are (signal over frame_time).
class Da00Histograms {
public:
  /// Adds a message as decodeMessage() decodes it. Returns "" when it was summed; otherwise why
  /// not (no signal, not 1-D, no axis variable, float values, or a source whose axis differs
  /// from its first message's: those count as skipped).
  std::string add(const nlohmann::json &da00);

  [[nodiscard]] const std::map<std::string, Da00Series> &series() const noexcept { return series_; }

private:
  std::map<std::string, Da00Series> series_;
};

/// The most bars a chart has: more bins are merged, da00BinsPerBar() neighbours per bar.
inline constexpr size_t kMaxDa00Bars = 4096;
[[nodiscard]] size_t da00BinsPerBar(size_t bins) noexcept;

/// The bar chart of a series: one bar per bin (per da00BinsPerBar() bins beyond kMaxDa00Bars,
/// summed), negative sums drawn as 0. An axis in ns whose edges are 0, w, 2w, ... is labelled as
/// --tof-histogram's (ms, us or ns); any other axis gets its first and last value at the ends.
/// ImageError when the series has no bins.
RgbImage renderDa00Chart(const Da00Series &series, ChartLayout *layout = nullptr);

/// The longest file name da00PngPath() makes from a source (without prefix and ".png").
inline constexpr size_t kMaxDa00NameBytes = 200;

/// `prefix` + the source name with every character other than A-Z a-z 0-9 . _ - replaced by
/// '_' (so a message cannot name a path: "../x" becomes ".._x") + ".png". A name longer than
/// kMaxDa00NameBytes is cut there, its last 17 bytes "-" and 16 hex digits of a hash of the
/// whole source name.
std::string da00PngPath(const std::string &prefix, const std::string &source);

} // namespace efu::tools
