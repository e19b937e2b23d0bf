// SPDX-License-Identifier: BSD-2-Clause
// Where readoutgen puts neutrons in the detector image: built-in test patterns and PGM masks.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace efu::readoutgen {

/// A greyscale image read from a PGM file (P2 text or P5 binary, maxval up to 65535).
struct PgmImage {
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t maxValue = 0;
  std::vector<uint16_t> pixels; ///< row-major, row 0 at the top
};

/// Parses PGM text (the bytes of a file). Throws std::runtime_error naming `name` and the problem.
PgmImage parsePgm(const std::string &bytes, const std::string &name);
/// Reads and parses a PGM file. Throws std::runtime_error.
PgmImage readPgm(const std::string &path);

/// The set of image pixels neutrons are drawn from (uniformly). Built once; pick() is cheap.
/// Image coordinates: x = column (0 .. width-1), y = row (0 .. height-1), row 0 at the top.
class Pattern {
public:
  /// Built-in patterns: "uniform" (every pixel), "ring" (an annulus, radii 0.25..0.40 of the
  /// image in normalised coordinates), "letters" (the text "ESS" in a 5x7 font, stretched).
  /// Throws std::invalid_argument for another name or an empty result.
  Pattern(const std::string &name, uint32_t width, uint32_t height);
  /// A mask scaled to the image (nearest neighbour): pixels with value > maxValue / 2 are
  /// allowed (bright = neutrons). Throws std::invalid_argument when no pixel is allowed.
  Pattern(const PgmImage &mask, uint32_t width, uint32_t height);

  struct Point {
    uint32_t x;
    uint32_t y;
  };
  template <class Rng> Point pick(Rng &rng) const noexcept {
    std::uniform_int_distribution<size_t> d(0, points_.size() - 1);
    return points_[d(rng)];
  }
  [[nodiscard]] const std::vector<Point> &points() const noexcept { return points_; }
  /// "ring", "letters", "uniform", or "pgm".
  [[nodiscard]] const std::string &name() const noexcept { return name_; }

  /// Names of the built-in patterns, comma-separated.
  static std::string builtinNames();

private:
  std::string name_;
  std::vector<Point> points_;
};

} // namespace efu::readoutgen
