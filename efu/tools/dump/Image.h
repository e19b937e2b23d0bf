// SPDX-License-Identifier: BSD-2-Clause
// efu-dump pictures: detector geometry from an instrument config, pixel counts, PNG output.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace efu::tools {

/// A problem with an instrument config given to --geometry (message names the file and keys).
class GeometryError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A picture could not be rendered or written (message names the file).
class ImageError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Where a pixel id lies in the detector image.
struct PixelPosition {
  uint32_t x = 0;
  uint32_t y = 0;
};

/// The 2-D layout of a detector's pixel ids, as its module describes it (sdk::ImageGeometry):
/// row-major from firstPixel, pixel = firstPixel + y * width + x, with y = 0 the top row.
struct ImageGeometry {
  std::string kind;       ///< the module that described it ("caen", "vmm3", ...)
  std::string instrument; ///< the config's "instrument", or empty
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t firstPixel = 1;

  [[nodiscard]] uint64_t pixels() const noexcept { return uint64_t{width} * height; }
  /// The last pixel id in the picture.
  [[nodiscard]] uint64_t lastPixel() const noexcept { return firstPixel + pixels() - 1; }

  /// (x, y) of a pixel id, or std::nullopt when it is outside the geometry (below firstPixel,
  /// or beyond the last).
  [[nodiscard]] std::optional<PixelPosition> locate(int64_t pixelId) const noexcept {
    if (pixelId < firstPixel || static_cast<uint64_t>(pixelId) > lastPixel()) {
      return std::nullopt;
    }
    const auto index = static_cast<uint64_t>(pixelId - firstPixel);
    return PixelPosition{static_cast<uint32_t>(index % width),
                         static_cast<uint32_t>(index / width)};
  }
};

/// Largest detector efu-dump draws, in pixels (4096 x 4096; 128 MiB of counters).
inline constexpr uint64_t kMaxGeometryPixels = uint64_t{1} << 24;
/// Largest picture after --image-scale, in pixels (192 MiB of RGB).
inline constexpr uint64_t kMaxPicturePixels = uint64_t{1} << 26;

/// The geometry of an instrument config as its module describes it (the module's
/// imageGeometry(), docs/modules.md), after validating the config with the module's key table.
/// `module` names the module; "" asks every module on the search path (`moduleDirs` first, as
/// efu --module-path) and exactly one must accept the config. Throws GeometryError naming
/// `source` and the reason (the module's own, with key and value).
ImageGeometry geometryFromModule(const std::string &module, const nlohmann::json &config,
                                 const std::string &source,
                                 const std::vector<std::string> &moduleDirs = {});

/// Reads the JSON file at `path` and calls geometryFromModule() with "--geometry PATH" as the
/// source named in errors. Throws GeometryError.
ImageGeometry loadGeometry(const std::string &path, const std::string &module = "",
                           const std::vector<std::string> &moduleDirs = {});

/// Counts per pixel of one geometry, plus the ids that fall outside it.
class PixelCounts {
public:
  explicit PixelCounts(ImageGeometry geometry);

  void add(int64_t pixelId) noexcept {
    const auto at = geometry_.locate(pixelId);
    if (!at) {
      ++outOfRange_;
      return;
    }
    ++counts_[size_t{at->y} * geometry_.width + at->x];
    ++inRange_;
  }

  [[nodiscard]] const ImageGeometry &geometry() const noexcept { return geometry_; }
  [[nodiscard]] uint64_t at(uint32_t x, uint32_t y) const {
    return counts_.at(size_t{y} * geometry_.width + x);
  }
  /// Row-major counts, width * height entries.
  [[nodiscard]] const std::vector<uint64_t> &counts() const noexcept { return counts_; }
  [[nodiscard]] uint64_t inRange() const noexcept { return inRange_; }
  [[nodiscard]] uint64_t outOfRange() const noexcept { return outOfRange_; }
  [[nodiscard]] uint64_t maxCount() const noexcept;

private:
  ImageGeometry geometry_;
  std::vector<uint64_t> counts_;
  uint64_t inRange_ = 0;
  uint64_t outOfRange_ = 0;
};

/// 8-bit RGB pixels, row-major, top row first.
struct RgbImage {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> rgb; ///< width * height * 3 bytes

  RgbImage() = default;
  RgbImage(uint32_t w, uint32_t h, uint8_t r, uint8_t g, uint8_t b);
  void set(uint32_t x, uint32_t y, const uint8_t (&colour)[3]) noexcept;
  /// Fills the rectangle [x0, x1) x [y0, y1), clipped to the image.
  void fill(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
            const uint8_t (&colour)[3]) noexcept;
};

/// How counts become colours.
struct ImageStyle {
  uint32_t scale = 1;    ///< each detector pixel becomes scale x scale picture pixels
  bool logScale = false; ///< colour by log(1 + count) instead of count
};

/// Largest --image-scale.
inline constexpr uint32_t kMaxImageScale = 64;

/// Colour of t in [0, 1] on a viridis-like map (dark blue-purple → green → yellow; perceived
/// brightness rises with t). Values outside [0, 1] are clamped.
void viridis(double t, uint8_t (&colour)[3]) noexcept;

/// Renders counts: 0 is black, 1 .. max run along viridis() (linearly, or by log(1 + count)
/// with logScale). Throws ImageError when the scale is outside 1..kMaxImageScale or the
/// scaled picture would exceed kMaxPicturePixels (checkImageStyle()).
void checkImageStyle(const ImageGeometry &geometry, const ImageStyle &style);
RgbImage renderCounts(const PixelCounts &counts, const ImageStyle &style);

/// Writes `image` as an 8-bit RGB PNG with libpng, first to `path`.tmp.<pid> and then renamed
/// to `path`, so a viewer never sees a partial file. Throws ImageError naming `path`.
void writePng(const RgbImage &image, const std::string &path);

} // namespace efu::tools
