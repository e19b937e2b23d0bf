// SPDX-License-Identifier: BSD-2-Clause
// efu-dump pictures: detector geometry from an instrument config, pixel counts, PNG output.
#include "efu/tools/dump/Image.h"

#include "common/system/BoundedJson.h"

#include <png.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <initializer_list>

namespace efu::tools {
namespace {

constexpr int64_t kMaxDimension = 65535;
// The caen module's defaults (modules/caen/CaenConfig.cpp kCaenKeys; ImageTest checks them).
constexpr int64_t kCaenDefaultBanks = 1;
constexpr int64_t kCaenDefaultPixelsPerTube = 512;

std::string joined(const std::vector<std::string> &names) {
  std::string out;
  for (const auto &name : names) {
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

std::vector<std::string> present(const nlohmann::json &config,
                                 std::initializer_list<const char *> keys) {
  std::vector<std::string> found;
  for (const char *key : keys) {
    if (config.contains(key)) {
      found.emplace_back(key);
    }
  }
  return found;
}

uint32_t dimension(const nlohmann::json &config, const std::string &source, const char *key,
                   std::optional<int64_t> fallback) {
  if (!config.contains(key)) {
    return static_cast<uint32_t>(*fallback);
  }
  const auto &value = config.at(key);
  if (!value.is_number_integer() || value.get<int64_t>() < 1 ||
      value.get<int64_t>() > kMaxDimension) {
    throw GeometryError(source + ": " + key + " = " + value.dump() + ": must be an integer 1.." +
                        std::to_string(kMaxDimension));
  }
  return static_cast<uint32_t>(value.get<int64_t>());
}

} // namespace

ImageGeometry geometryFromJson(const nlohmann::json &config, const std::string &source) {
  if (!config.is_object()) {
    throw GeometryError(source + ": an instrument config must be a JSON object");
  }
  const auto caen = present(config, {"banks", "tubes_per_bank", "pixels_per_tube"});
  const auto vmm3 = present(config, {"nx", "ny"});
  if (!caen.empty() && !vmm3.empty()) {
    throw GeometryError(source + ": has caen keys (" + joined(caen) + ") and vmm3 keys (" +
                        joined(vmm3) + "); cannot tell which geometry to use");
  }
  if (caen.empty() && vmm3.empty()) {
    throw GeometryError(source + ": no detector geometry: missing the caen keys banks, "
                                 "tubes_per_bank, pixels_per_tube or the vmm3 keys nx, ny");
  }

  ImageGeometry geometry;
  if (config.contains("instrument") && config.at("instrument").is_string()) {
    geometry.instrument = config.at("instrument").get<std::string>();
  }
  if (!caen.empty()) {
    if (!config.contains("tubes_per_bank")) {
      throw GeometryError(source + ": caen geometry (found " + joined(caen) +
                          ") is missing the key tubes_per_bank");
    }
    geometry.kind = "caen";
    const uint32_t banks = dimension(config, source, "banks", kCaenDefaultBanks);
    const uint32_t tubesPerBank = dimension(config, source, "tubes_per_bank", std::nullopt);
    geometry.width = dimension(config, source, "pixels_per_tube", kCaenDefaultPixelsPerTube);
    geometry.height = banks * tubesPerBank;
  } else {
    std::vector<std::string> missing;
    for (const char *key : {"nx", "ny"}) {
      if (!config.contains(key)) {
        missing.emplace_back(key);
      }
    }
    if (!missing.empty()) {
      throw GeometryError(source + ": vmm3 geometry (found " + joined(vmm3) +
                          ") is missing the key " + joined(missing));
    }
    geometry.kind = "vmm3";
    geometry.width = dimension(config, source, "nx", std::nullopt);
    geometry.height = dimension(config, source, "ny", std::nullopt);
  }
  if (geometry.pixels() > kMaxGeometryPixels) {
    throw GeometryError(source + ": " + geometry.kind + " geometry of " +
                        std::to_string(geometry.width) + " x " + std::to_string(geometry.height) +
                        " pixels is larger than the " + std::to_string(kMaxGeometryPixels) +
                        " efu-dump can draw");
  }
  return geometry;
}

ImageGeometry loadGeometry(const std::string &path) {
  nlohmann::json config;
  try {
    config = readJsonFile(path);
  } catch (const JsonFileError &e) {
    throw GeometryError(std::string("--geometry ") + e.what());
  }
  return geometryFromJson(config, "--geometry " + path);
}

PixelCounts::PixelCounts(ImageGeometry geometry)
    : geometry_(std::move(geometry)), counts_(geometry_.pixels(), 0) {}

uint64_t PixelCounts::maxCount() const noexcept {
  return counts_.empty() ? 0 : *std::max_element(counts_.begin(), counts_.end());
}

RgbImage::RgbImage(uint32_t w, uint32_t h, uint8_t r, uint8_t g, uint8_t b)
    : width(w), height(h), rgb(size_t{w} * h * 3) {
  for (size_t i = 0; i < rgb.size(); i += 3) {
    rgb[i] = r;
    rgb[i + 1] = g;
    rgb[i + 2] = b;
  }
}

void RgbImage::set(uint32_t x, uint32_t y, const uint8_t (&colour)[3]) noexcept {
  if (x < width && y < height) {
    std::memcpy(&rgb[(size_t{y} * width + x) * 3], colour, 3);
  }
}

void RgbImage::fill(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1,
                    const uint8_t (&colour)[3]) noexcept {
  for (uint32_t y = y0; y < std::min(y1, height); ++y) {
    for (uint32_t x = x0; x < std::min(x1, width); ++x) {
      std::memcpy(&rgb[(size_t{y} * width + x) * 3], colour, 3);
    }
  }
}

void viridis(double t, uint8_t (&colour)[3]) noexcept {
  // matplotlib's viridis sampled at 9 points; linear in between.
  static constexpr std::array<std::array<double, 3>, 9> kAnchors = {{{68, 1, 84},
                                                                     {71, 44, 122},
                                                                     {59, 81, 139},
                                                                     {44, 113, 142},
                                                                     {33, 144, 141},
                                                                     {39, 173, 129},
                                                                     {92, 200, 99},
                                                                     {170, 220, 50},
                                                                     {253, 231, 37}}};
  if (!(t > 0.0)) {
    t = 0.0;
  }
  t = std::min(t, 1.0);
  const double position = t * static_cast<double>(kAnchors.size() - 1);
  const auto low = std::min(static_cast<size_t>(position), kAnchors.size() - 2);
  const double frac = position - static_cast<double>(low);
  for (size_t c = 0; c < 3; ++c) {
    const double value = kAnchors[low][c] + (kAnchors[low + 1][c] - kAnchors[low][c]) * frac;
    colour[c] = static_cast<uint8_t>(std::lround(value));
  }
}

void checkImageStyle(const ImageGeometry &geometry, const ImageStyle &style) {
  if (style.scale < 1 || style.scale > kMaxImageScale) {
    throw ImageError("--image-scale " + std::to_string(style.scale) + ": must be 1.." +
                     std::to_string(kMaxImageScale));
  }
  if (geometry.pixels() * style.scale * style.scale > kMaxPicturePixels) {
    throw ImageError("--image-scale " + std::to_string(style.scale) + ": the " +
                     std::to_string(geometry.width) + " x " + std::to_string(geometry.height) +
                     " image scaled up is larger than " + std::to_string(kMaxPicturePixels) +
                     " pixels");
  }
}

RgbImage renderCounts(const PixelCounts &counts, const ImageStyle &style) {
  const auto &geometry = counts.geometry();
  checkImageStyle(geometry, style);
  const uint64_t maxCount = counts.maxCount();
  const double top =
      style.logScale ? std::log1p(static_cast<double>(maxCount)) : static_cast<double>(maxCount);
  RgbImage image(geometry.width * style.scale, geometry.height * style.scale, 0, 0, 0);
  for (uint32_t y = 0; y < geometry.height; ++y) {
    for (uint32_t x = 0; x < geometry.width; ++x) {
      const uint64_t count = counts.counts()[size_t{y} * geometry.width + x];
      if (count == 0) {
        continue;
      }
      double t = 1.0;
      if (style.logScale) {
        t = std::log1p(static_cast<double>(count)) / top;
      } else if (maxCount > 1) {
        // 1 count → the dark end, max → the bright end.
        t = static_cast<double>(count - 1) / (top - 1.0);
      }
      uint8_t colour[3];
      viridis(t, colour);
      image.fill(x * style.scale, y * style.scale, (x + 1) * style.scale, (y + 1) * style.scale,
                 colour);
    }
  }
  return image;
}

void writePng(const RgbImage &image, const std::string &path) {
  if (image.width == 0 || image.height == 0 ||
      image.rgb.size() != size_t{image.width} * image.height * 3) {
    throw ImageError("'" + path + "': empty or inconsistent image (" + std::to_string(image.width) +
                     " x " + std::to_string(image.height) + ")");
  }
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = image.width;
  png.height = image.height;
  png.format = PNG_FORMAT_RGB;
  const auto stride = static_cast<png_int_32>(image.width * 3);
  if (png_image_write_to_file(&png, tmp.c_str(), 0, image.rgb.data(), stride, nullptr) == 0) {
    const std::string why = png.message;
    png_image_free(&png);
    std::remove(tmp.c_str());
    throw ImageError("cannot write '" + tmp + "': " + why);
  }
  png_image_free(&png);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw ImageError("cannot rename '" + tmp + "' to '" + path + "': " + why);
  }
}

} // namespace efu::tools
