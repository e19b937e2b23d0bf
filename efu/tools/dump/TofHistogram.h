// SPDX-License-Identifier: BSD-2-Clause
// efu-dump pictures: a time-of-flight histogram with exact bins and its bar chart.
#pragma once

#include "efu/tools/dump/Image.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace efu::tools {

/// Output bins of a finished histogram over [0, rangeNs): bins[i] counts tof in
/// [i * rangeNs / n, (i+1) * rangeNs / n) with n = bins.size() and integer division.
struct TofBins {
  std::vector<uint64_t> bins;
  uint64_t rangeNs = 0;
};

/// Time-of-flight histogram with `bins` bins over [0, maxNs).
///
/// With a fixed maxNs, bin i holds tof in [i * maxNs / bins, (i+1) * maxNs / bins) (integer
/// division on ns), and tof >= maxNs is counted as above range. Without one, the range follows
/// the data: a fine histogram of kFinePerBin * bins bins of 2^k ns doubles its bin width as
/// larger values arrive, and result() regroups it into `bins` bins of an integer number of fine
/// bins, the smallest width whose range covers the largest tof seen. Every event lands in
/// exactly the bin its tof belongs to; the range exceeds the maximum by less than
/// max(bins, 2 * max / kFinePerBin) ns. Negative tof is counted, never binned.
class TofHistogram {
public:
  static constexpr uint32_t kFinePerBin = 64;

  static constexpr uint32_t kMaxBins = 100000;
  static constexpr int64_t kMaxRangeNs = 10'000'000'000'000; // 10000 s

  /// `bins` in 1..kMaxBins; `maxNs` in 1..kMaxRangeNs when given (else std::invalid_argument
  /// naming --tof-bins or --tof-max-ns).
  TofHistogram(uint32_t bins, std::optional<int64_t> maxNs);

  void add(int64_t tofNs) noexcept;

  [[nodiscard]] TofBins result() const;
  [[nodiscard]] uint64_t binned() const noexcept { return binned_; }
  [[nodiscard]] uint64_t negative() const noexcept { return negative_; }
  [[nodiscard]] uint64_t aboveRange() const noexcept { return aboveRange_; }
  /// Largest tof seen (binned or not); nullopt before the first non-negative one.
  [[nodiscard]] std::optional<int64_t> maxSeenNs() const noexcept { return maxSeenNs_; }

private:
  uint32_t bins_;
  std::optional<int64_t> maxNs_;
  std::vector<uint64_t> counts_; ///< bins_ (fixed range) or kFinePerBin * bins_ (auto) bins
  uint64_t fineWidthNs_ = 1;     ///< auto range: width of a fine bin, a power of two
  uint64_t binned_ = 0;
  uint64_t negative_ = 0;
  uint64_t aboveRange_ = 0;
  std::optional<int64_t> maxSeenNs_;
};

/// Where the bar chart's axes were drawn, for tests and the stderr report.
struct ChartLayout {
  uint32_t plotX0 = 0; ///< first column of the plot area (right of the y axis)
  uint32_t plotY0 = 0; ///< top row of the plot area
  uint32_t plotWidth = 0;
  uint32_t plotHeight = 0; ///< rows above the x axis
  uint32_t barWidth = 0;   ///< columns per bin
  uint64_t yMax = 0;       ///< count at the top of the plot area
  uint64_t xTickNs = 0;    ///< spacing of the x ticks
  uint64_t yTick = 0;      ///< spacing of the y ticks
};

/// A labelled tick on a bar chart's x axis, at `position` (0 = left end, 1 = right end).
struct XTick {
  double position = 0.0;
  std::string label; ///< digits, '.', and the letters m s u n k M of the built-in font
};

/// Draws one bar per entry of `bars` (left to right, equal widths) on a white background: y
/// axis from 0 to a round count above the largest bar, the given x ticks, `xUnit` at the right
/// end of the x axis. Sets `layout` (all but xTickNs) if given. ImageError when `bars` is empty.
RgbImage renderBarChart(const std::vector<uint64_t> &bars, const std::vector<XTick> &xTicks,
                        std::string_view xUnit, ChartLayout *layout = nullptr);

/// Draws a bar chart of `bins`: white background, one bar per bin, x axis from 0 to the range
/// with ticks every 1, 2 or 5 x 10^n ns, y axis from 0 to a round count above the largest bin;
/// tick values are written with a small built-in digit font (x in ms or µs as the range
/// suggests; the unit is printed at the right end of the axis). Sets `layout` if given.
RgbImage renderTofChart(const TofBins &bins, ChartLayout *layout = nullptr);

/// A tick spacing of 1, 2 or 5 x 10^n such that [0, maxValue] has about `targetTicks` ticks.
uint64_t niceTickStep(uint64_t maxValue, uint32_t targetTicks) noexcept;

} // namespace efu::tools
