// SPDX-License-Identifier: BSD-2-Clause
// efu-dump pictures: a time-of-flight histogram with exact bins and its bar chart.
#include "efu/tools/dump/TofHistogram.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string_view>

namespace efu::tools {

TofHistogram::TofHistogram(uint32_t bins, std::optional<int64_t> maxNs)
    : bins_(bins), maxNs_(maxNs) {
  if (bins < 1 || bins > kMaxBins) {
    throw std::invalid_argument("--tof-bins " + std::to_string(bins) + ": must be 1.." +
                                std::to_string(kMaxBins));
  }
  if (maxNs && (*maxNs < 1 || *maxNs > kMaxRangeNs)) {
    throw std::invalid_argument("--tof-max-ns " + std::to_string(*maxNs) + ": must be 1.." +
                                std::to_string(kMaxRangeNs));
  }
  counts_.assign(maxNs ? size_t{bins} : size_t{bins} * kFinePerBin, 0);
}

void TofHistogram::add(int64_t tofNs) noexcept {
  if (tofNs < 0) {
    ++negative_;
    return;
  }
  maxSeenNs_ = std::max(maxSeenNs_.value_or(0), tofNs);
  const auto tof = static_cast<uint64_t>(tofNs);
  if (maxNs_) {
    if (tofNs >= *maxNs_) {
      ++aboveRange_;
      return;
    }
    // tof < maxNs <= 1e13 and bins <= 1e5: the product fits in 64 bits.
    ++counts_[tof * bins_ / static_cast<uint64_t>(*maxNs_)];
    ++binned_;
    return;
  }
  while (tof / fineWidthNs_ >= counts_.size()) {
    const size_t half = counts_.size() / 2;
    for (size_t i = 0; i < half; ++i) {
      counts_[i] = counts_[2 * i] + counts_[2 * i + 1];
    }
    std::fill(counts_.begin() + static_cast<std::ptrdiff_t>(half), counts_.end(), 0);
    fineWidthNs_ *= 2;
  }
  ++counts_[tof / fineWidthNs_];
  ++binned_;
}

TofBins TofHistogram::result() const {
  TofBins out;
  out.bins.assign(bins_, 0);
  if (maxNs_) {
    out.bins = counts_;
    out.rangeNs = static_cast<uint64_t>(*maxNs_);
    return out;
  }
  // The smallest whole number of fine bins per output bin whose range covers maxSeen.
  const uint64_t maxSeen = static_cast<uint64_t>(maxSeenNs_.value_or(0));
  const uint64_t finePerOut = std::max<uint64_t>(
      1, (maxSeen + 1 + uint64_t{bins_} * fineWidthNs_ - 1) / (uint64_t{bins_} * fineWidthNs_));
  for (size_t j = 0; j < counts_.size(); ++j) {
    if (counts_[j] != 0) {
      out.bins[j / finePerOut] += counts_[j];
    }
  }
  out.rangeNs = uint64_t{bins_} * finePerOut * fineWidthNs_;
  return out;
}

uint64_t niceTickStep(uint64_t maxValue, uint32_t targetTicks) noexcept {
  const uint64_t ticks = std::max<uint32_t>(1, targetTicks);
  const uint64_t wanted = std::max<uint64_t>(1, maxValue / ticks + (maxValue % ticks != 0));
  for (uint64_t magnitude = 1;; magnitude *= 10) {
    for (const uint64_t mantissa : {1, 2, 5}) {
      if (mantissa * magnitude >= wanted || magnitude > UINT64_MAX / 100) {
        return mantissa * magnitude;
      }
    }
  }
}

namespace {

constexpr uint8_t kBlack[3] = {0, 0, 0};
constexpr uint8_t kGrid[3] = {225, 225, 225};
constexpr uint8_t kBar[3] = {49, 104, 142};

constexpr uint32_t kTargetPlotWidth = 800;
constexpr uint32_t kPlotHeight = 320;
constexpr uint32_t kMarginLeft = 72;
constexpr uint32_t kMarginRight = 32;
constexpr uint32_t kMarginTop = 12;
constexpr uint32_t kMarginBottom = 44;
constexpr uint32_t kTickLength = 5;
constexpr uint32_t kFontScale = 2;
constexpr uint32_t kGlyphWidth = 3;
constexpr uint32_t kGlyphHeight = 5;
constexpr uint32_t kAdvance = (kGlyphWidth + 1) * kFontScale;

/// 3x5 glyphs, one 3-bit row each (bit 2 = left column).
struct Glyph {
  char c;
  std::array<uint8_t, kGlyphHeight> rows;
};
constexpr Glyph kGlyphs[] = {
    {'0', {7, 5, 5, 5, 7}}, {'1', {2, 6, 2, 2, 7}}, {'2', {7, 1, 7, 4, 7}}, {'3', {7, 1, 7, 1, 7}},
    {'4', {5, 5, 7, 1, 1}}, {'5', {7, 4, 7, 1, 7}}, {'6', {7, 4, 7, 5, 7}}, {'7', {7, 1, 1, 1, 1}},
    {'8', {7, 5, 7, 5, 7}}, {'9', {7, 5, 7, 1, 7}}, {'.', {0, 0, 0, 0, 2}}, {'m', {0, 6, 7, 5, 5}},
    {'s', {0, 3, 4, 1, 6}}, {'u', {0, 5, 5, 5, 7}}, {'n', {0, 6, 5, 5, 5}}, {'k', {4, 5, 6, 5, 5}},
    {'M', {5, 7, 7, 5, 5}},
};

uint32_t textWidth(std::string_view text) {
  return text.empty() ? 0 : static_cast<uint32_t>(text.size()) * kAdvance - kFontScale;
}

void drawText(RgbImage &image, uint32_t x, uint32_t y, std::string_view text) {
  for (const char c : text) {
    for (const auto &glyph : kGlyphs) {
      if (glyph.c != c) {
        continue;
      }
      for (uint32_t row = 0; row < kGlyphHeight; ++row) {
        for (uint32_t col = 0; col < kGlyphWidth; ++col) {
          if ((glyph.rows[row] >> (kGlyphWidth - 1 - col) & 1U) != 0) {
            image.fill(x + col * kFontScale, y + row * kFontScale, x + (col + 1) * kFontScale,
                       y + (row + 1) * kFontScale, kBlack);
          }
        }
      }
    }
    x += kAdvance;
  }
}

/// A count with a k or M suffix when it is a whole number of thousands or millions.
std::string countLabel(uint64_t value) {
  if (value >= 1'000'000 && value % 1'000'000 == 0) {
    return std::to_string(value / 1'000'000) + "M";
  }
  if (value >= 10'000 && value % 1'000 == 0) {
    return std::to_string(value / 1'000) + "k";
  }
  return std::to_string(value);
}

/// `ns` in `unitNs` units with as many decimals as `stepNs` needs.
std::string timeLabel(uint64_t ns, uint64_t stepNs, uint64_t unitNs) {
  int decimals = 0;
  for (uint64_t scaled = stepNs; scaled % unitNs != 0 && decimals < 9; scaled *= 10) {
    ++decimals;
  }
  char text[32];
  std::snprintf(text, sizeof(text), "%.*f", decimals,
                static_cast<double>(ns) / static_cast<double>(unitNs));
  return text;
}

} // namespace

RgbImage renderBarChart(const std::vector<uint64_t> &bars, const std::vector<XTick> &xTicks,
                        std::string_view xUnit, ChartLayout *layout) {
  if (bars.empty()) {
    throw ImageError("bar chart has no bars");
  }
  ChartLayout l;
  const auto binCount = static_cast<uint32_t>(bars.size());
  l.barWidth = std::max<uint32_t>(1, kTargetPlotWidth / binCount);
  l.plotWidth = binCount * l.barWidth;
  l.plotHeight = kPlotHeight;
  l.plotX0 = kMarginLeft;
  l.plotY0 = kMarginTop;
  const uint64_t maxBin = *std::max_element(bars.begin(), bars.end());
  l.yTick = niceTickStep(std::max<uint64_t>(maxBin, 1), 5);
  l.yMax = std::max<uint64_t>(1, (maxBin + l.yTick - 1) / l.yTick) * l.yTick;

  RgbImage image(kMarginLeft + l.plotWidth + kMarginRight,
                 kMarginTop + l.plotHeight + kMarginBottom, 255, 255, 255);
  const uint32_t axisY = l.plotY0 + l.plotHeight; // the x axis row, just below the plot area
  auto rowOf = [&](uint64_t count) {
    const auto height = static_cast<uint32_t>(
        std::llround(static_cast<double>(count) / static_cast<double>(l.yMax) * l.plotHeight));
    return axisY - std::min(height, l.plotHeight);
  };

  for (uint64_t v = l.yTick; v <= l.yMax; v += l.yTick) {
    image.fill(l.plotX0, rowOf(v), l.plotX0 + l.plotWidth, rowOf(v) + 1, kGrid);
  }
  for (uint32_t i = 0; i < binCount; ++i) {
    if (bars[i] == 0) {
      continue;
    }
    // A non-empty bin shows at least one pixel.
    const uint32_t top = std::min(rowOf(bars[i]), axisY - 1);
    image.fill(l.plotX0 + i * l.barWidth, top, l.plotX0 + (i + 1) * l.barWidth, axisY, kBar);
  }

  image.fill(l.plotX0 - 1, l.plotY0, l.plotX0, axisY + 1, kBlack);
  image.fill(l.plotX0 - 1, axisY, l.plotX0 + l.plotWidth, axisY + 1, kBlack);
  const uint32_t glyphPx = kGlyphHeight * kFontScale;
  for (uint64_t v = 0; v <= l.yMax; v += l.yTick) {
    const uint32_t row = rowOf(v);
    image.fill(l.plotX0 - 1 - kTickLength, row, l.plotX0 - 1, row + 1, kBlack);
    const std::string label = countLabel(v);
    drawText(image, l.plotX0 - 1 - kTickLength - 4 - textWidth(label), row - glyphPx / 2, label);
  }
  for (const XTick &tick : xTicks) {
    const auto column =
        l.plotX0 + static_cast<uint32_t>(std::llround(std::clamp(tick.position, 0.0, 1.0) *
                                                      static_cast<double>(l.plotWidth)));
    image.fill(column, axisY + 1, column + 1, axisY + 1 + kTickLength, kBlack);
    drawText(image, column - std::min(column, textWidth(tick.label) / 2), axisY + kTickLength + 4,
             tick.label);
  }
  drawText(image, l.plotX0 + l.plotWidth - textWidth(xUnit), axisY + kTickLength + 8 + glyphPx,
           xUnit);
  if (layout != nullptr) {
    *layout = l;
  }
  return image;
}

RgbImage renderTofChart(const TofBins &tof, ChartLayout *layout) {
  if (tof.bins.empty() || tof.rangeNs == 0) {
    throw ImageError("tof histogram has no bins or an empty range");
  }
  const uint64_t xTickNs = niceTickStep(tof.rangeNs, 8);
  const uint64_t unitNs = tof.rangeNs >= 1'000'000 ? 1'000'000 : tof.rangeNs >= 1'000 ? 1'000 : 1;
  std::vector<XTick> ticks;
  for (uint64_t ns = 0; ns <= tof.rangeNs; ns += xTickNs) {
    ticks.push_back({static_cast<double>(ns) / static_cast<double>(tof.rangeNs),
                     timeLabel(ns, xTickNs, unitNs)});
  }
  const std::string unit = unitNs == 1'000'000 ? "ms" : unitNs == 1'000 ? "us" : "ns";
  RgbImage image = renderBarChart(tof.bins, ticks, unit, layout);
  if (layout != nullptr) {
    layout->xTickNs = xTickNs;
  }
  return image;
}

} // namespace efu::tools
