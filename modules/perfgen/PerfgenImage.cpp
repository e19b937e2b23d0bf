// SPDX-License-Identifier: BSD-2-Clause
#include "modules/perfgen/PerfgenImage.h"

namespace efu::perfgen {
namespace {

/// Whether the centre of cell i of n lies in [loPercent, hiPercent) of the length, in integers:
/// the centre is (2i + 1) / 2n of it.
bool within(uint32_t i, uint32_t n, uint64_t loPercent, uint64_t hiPercent) noexcept {
  const uint64_t centre = 100 * (2 * uint64_t{i} + 1);
  return centre >= loPercent * 2 * n && centre < hiPercent * 2 * n;
}

} // namespace

bool isLit(uint32_t x, uint32_t y, uint32_t width, uint32_t height) noexcept {
  if (x == 0 || y == 0 || x + 1 == width || y + 1 == height) {
    return true; // the frame
  }
  const bool stem = within(x, width, 30, 40) && within(y, height, 20, 80);
  const bool top = within(x, width, 30, 70) && within(y, height, 20, 30);
  const bool middle = within(x, width, 30, 60) && within(y, height, 45, 55);
  return stem || top || middle;
}

PixelWalk::PixelWalk(uint32_t width, uint32_t height) {
  for (uint32_t y = 0; y < height; ++y) {
    for (uint32_t x = 0; x < width; ++x) {
      if (!isLit(x, y, width, height)) {
        continue;
      }
      const auto pixel = static_cast<int32_t>(uint64_t{y} * width + x + 1);
      ++lit_;
      // A run may go on into the next row: the walk's order is the same.
      if (!runs_.empty() &&
          runs_.back().first + static_cast<int32_t>(runs_.back().length) == pixel) {
        ++runs_.back().length;
      } else {
        runs_.push_back({pixel, 1});
      }
    }
  }
}

} // namespace efu::perfgen
