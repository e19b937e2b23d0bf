// SPDX-License-Identifier: BSD-2-Clause
// The picture perfgen's events draw, and the order in which they visit it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace efu::perfgen {

/// Whether pixel (x, y) of a width x height test image is lit: a one-pixel frame round the
/// image and a capital F inside it. The F has no symmetry, so a consumer that mirrors or
/// transposes the image shows it wrongly at a glance; the frame shows where the first and last
/// rows and columns are. Both scale with the image (the F's strokes are fractions of the size,
/// tested at pixel centres); an image of 2 or fewer rows or columns is all frame.
[[nodiscard]] bool isLit(uint32_t x, uint32_t y, uint32_t width, uint32_t height) noexcept;

/// The walk over the lit pixels: row by row from the top row, left to right in each, and from
/// the first again after the last. Pixel ids as the image geometry says (y * width + x + 1).
/// Stored as runs of consecutive lit pixels, so next() is a few instructions.
class PixelWalk {
public:
  PixelWalk(uint32_t width, uint32_t height);

  /// The next pixel id of the walk.
  int32_t next() noexcept {
    const Run &run = runs_[run_];
    const int32_t pixel = run.first + static_cast<int32_t>(offset_);
    if (++offset_ == run.length) {
      offset_ = 0;
      run_ = run_ + 1 == runs_.size() ? 0 : run_ + 1;
    }
    return pixel;
  }
  /// How many pixels are lit: the walk's period.
  [[nodiscard]] uint64_t litPixels() const noexcept { return lit_; }

private:
  struct Run {
    int32_t first;   ///< pixel id of its first pixel
    uint32_t length; ///< >= 1
  };
  std::vector<Run> runs_; ///< never empty: pixel (0, 0) is always lit
  size_t run_ = 0;
  uint32_t offset_ = 0;
  uint64_t lit_ = 0;
};

} // namespace efu::perfgen
