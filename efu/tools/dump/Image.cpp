// SPDX-License-Identifier: BSD-2-Clause
// efu-dump pictures: detector geometry from the module that reads the config, pixel counts, PNG.
#include "efu/tools/dump/Image.h"

#include "common/sdk/ModuleConfig.h"
#include "common/system/BoundedJson.h"
#include "common/sdk/ModuleLoader.h"

#include <png.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace efu::tools {
namespace {

/// Asks one module for the geometry of `config`; nullopt (and why, in *why) when it has none or
/// refuses the config.
std::optional<ImageGeometry> askModule(const ModuleLibrary &library, const nlohmann::json &config,
                                       const std::string &source, std::string *why) {
  const EfuModuleDescriptor &d = library.descriptor();
  if (d.geometry == nullptr) {
    *why = std::string("module '") + d.name + "' describes no image geometry (docs/modules.md)";
    return std::nullopt;
  }
  nlohmann::json validated;
  try {
    validated = validateModuleConfig(d, config, source);
  } catch (const sdk::ConfigError &e) {
    *why = e.what();
    return std::nullopt;
  }
  sdk::ImageGeometry size;
  if (!d.geometry(&validated, source.c_str(), &size, why)) {
    return std::nullopt;
  }
  ImageGeometry geometry;
  geometry.kind = d.name;
  // Our modules' "instrument"; the ESS files' "InstrumentGeometry" (the Multi-Blade files, which
  // all say "Detector": "Freia") or "Detector".
  for (const char *key : {"instrument", "InstrumentGeometry", "Detector"}) {
    if (geometry.instrument.empty() && validated.contains(key) && validated.at(key).is_string()) {
      geometry.instrument = validated.at(key).get<std::string>();
    }
  }
  geometry.width = size.width;
  geometry.height = size.height;
  geometry.firstPixel = size.firstPixel;
  return geometry;
}

} // namespace

ImageGeometry geometryFromModule(const std::string &module, const nlohmann::json &config,
                                 const std::string &source,
                                 const std::vector<std::string> &moduleDirs) {
  const auto dirs = moduleSearchPath(moduleDirs);
  std::optional<ImageGeometry> geometry;
  if (!module.empty()) {
    std::shared_ptr<ModuleLibrary> library;
    try {
      library = loadModule(module, dirs);
    } catch (const std::exception &e) {
      throw GeometryError(std::string("--det: ") + e.what());
    }
    std::string why;
    geometry = askModule(*library, config, source, &why);
    if (!geometry) {
      throw GeometryError(why);
    }
  } else {
    // No --det: every module with a geometry is asked; exactly one must take the config.
    std::vector<std::string> takers;
    std::string refusals;
    for (const auto &name : listModules(dirs)) {
      std::string why;
      std::optional<ImageGeometry> g;
      try {
        g = askModule(*loadModule(name, dirs), config, source, &why);
      } catch (const std::exception &e) {
        why = e.what();
      }
      if (g) {
        takers.push_back(name);
        geometry = std::move(g);
      } else {
        refusals += "\n  " + name + ": " + why;
      }
    }
    if (takers.size() != 1) {
      std::string list;
      for (const auto &name : takers) {
        list += (list.empty() ? "" : ", ") + name;
      }
      throw GeometryError(source + ": " +
                          (takers.empty()
                               ? "no module accepts it; give --det NAME. Their reasons:" + refusals
                               : "several modules accept it (" + list + "); give --det NAME"));
    }
  }
  if (geometry->width == 0 || geometry->height == 0 || geometry->firstPixel == 0 ||
      geometry->pixels() > kMaxGeometryPixels) {
    throw GeometryError(source + ": " + geometry->kind + " geometry of " +
                        std::to_string(geometry->width) + " x " + std::to_string(geometry->height) +
                        " pixels from id " + std::to_string(geometry->firstPixel) +
                        ": efu-dump draws 1 to " + std::to_string(kMaxGeometryPixels) + " pixels");
  }
  return *geometry;
}

ImageGeometry loadGeometry(const std::string &path, const std::string &module,
                           const std::vector<std::string> &moduleDirs) {
  nlohmann::json config;
  try {
    config = readJsonFile(path);
  } catch (const JsonFileError &e) {
    throw GeometryError(std::string("--geometry ") + e.what());
  }
  return geometryFromModule(module, config, "--geometry " + path, moduleDirs);
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
