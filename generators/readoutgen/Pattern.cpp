// SPDX-License-Identifier: BSD-2-Clause
// Test patterns and the PGM reader of readoutgen.
#include "generators/readoutgen/Pattern.h"

#include <array>
#include <cctype>
#include <fstream>
#include <new>
#include <sstream>
#include <stdexcept>

namespace efu::readoutgen {
namespace {

/// 5x7 glyphs, one string per row, '#' = lit.
constexpr std::array<const char *, 7> kGlyphE = {"#####", "#....", "#....", "####.",
                                                 "#....", "#....", "#####"};
constexpr std::array<const char *, 7> kGlyphS = {".####", "#....", "#....", ".###.",
                                                 "....#", "....#", "####."};

bool letterLit(double u, double v) {
  // Text "ESS": 3 glyphs of 5 columns with 1 column between them = 17 columns, 7 rows, placed
  // in the middle 80 % (x) by 60 % (y) of the image.
  constexpr double kX0 = 0.1, kW = 0.8, kY0 = 0.2, kH = 0.6;
  if (u < kX0 || u >= kX0 + kW || v < kY0 || v >= kY0 + kH) {
    return false;
  }
  const int col = static_cast<int>((u - kX0) / kW * 17);
  const int row = static_cast<int>((v - kY0) / kH * 7);
  const int glyph = col / 6;
  const int gx = col % 6;
  if (gx == 5 || glyph > 2 || row > 6) {
    return false;
  }
  const auto &g = glyph == 0 ? kGlyphE : kGlyphS;
  return g[static_cast<size_t>(row)][gx] == '#';
}

size_t skipSpaceAndComments(const std::string &s, size_t i) {
  while (i < s.size()) {
    if (s[i] == '#') {
      while (i < s.size() && s[i] != '\n') {
        ++i;
      }
    } else if (std::isspace(static_cast<unsigned char>(s[i])) != 0) {
      ++i;
    } else {
      break;
    }
  }
  return i;
}

uint32_t readNumber(const std::string &s, size_t &i, const std::string &name, const char *what) {
  i = skipSpaceAndComments(s, i);
  if (i >= s.size() || std::isdigit(static_cast<unsigned char>(s[i])) == 0) {
    throw std::runtime_error(name + ": PGM: expected " + what + " at byte " + std::to_string(i));
  }
  uint64_t v = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) {
    v = v * 10 + static_cast<uint64_t>(s[i] - '0');
    if (v > 0xFFFF'FFFF) {
      throw std::runtime_error(name + ": PGM: " + what + " too large");
    }
    ++i;
  }
  return static_cast<uint32_t>(v);
}

} // namespace

PgmImage parsePgm(const std::string &s, const std::string &name) {
  if (s.size() < 2 || s[0] != 'P' || (s[1] != '2' && s[1] != '5')) {
    throw std::runtime_error(name + ": not a PGM file (must start with P2 or P5)");
  }
  const bool binary = s[1] == '5';
  size_t i = 2;
  PgmImage img;
  img.width = readNumber(s, i, name, "width");
  img.height = readNumber(s, i, name, "height");
  img.maxValue = readNumber(s, i, name, "maxval");
  if (img.width == 0 || img.height == 0 || img.width > 65536 || img.height > 65536) {
    throw std::runtime_error(name + ": PGM: size " + std::to_string(img.width) + "x" +
                             std::to_string(img.height) + " out of range 1..65536");
  }
  if (img.maxValue == 0 || img.maxValue > 65535) {
    throw std::runtime_error(name + ": PGM: maxval " + std::to_string(img.maxValue) +
                             " out of range 1..65535");
  }
  const size_t count = static_cast<size_t>(img.width) * img.height;
  // The header's size against the bytes the file has, before anything is allocated: a header
  // may claim 65536 x 65536 pixels (8 GiB) in a file of a few bytes.
  const size_t bytesPer = img.maxValue < 256 ? 1 : 2;
  const size_t pixelsAt = binary ? i + 1 : i;
  const size_t present = s.size() > pixelsAt ? s.size() - pixelsAt : 0;
  const size_t needed = binary ? count * bytesPer : 2 * count - 1; // text: a digit, a space
  if (present < needed) {
    throw std::runtime_error(
        name + ": PGM: truncated: the header claims " + std::to_string(img.width) + " x " +
        std::to_string(img.height) + " pixels, " +
        (binary ? std::to_string(needed) + " bytes of pixels"
                : "at least " + std::to_string(needed) + " bytes of pixel text") +
        ", the file has " + std::to_string(present) + " after the header");
  }
  img.pixels.resize(count);
  if (binary) {
    if (i >= s.size() || std::isspace(static_cast<unsigned char>(s[i])) == 0) {
      throw std::runtime_error(name + ": PGM: expected one whitespace byte after maxval");
    }
    ++i;
    for (size_t k = 0; k < count; ++k) {
      const auto hi = static_cast<unsigned char>(s[i + k * bytesPer]);
      img.pixels[k] = bytesPer == 1
                          ? hi
                          : static_cast<uint16_t>(
                                (hi << 8) | static_cast<unsigned char>(s[i + k * bytesPer + 1]));
    }
  } else {
    for (size_t k = 0; k < count; ++k) {
      img.pixels[k] = static_cast<uint16_t>(readNumber(s, i, name, "pixel value"));
    }
  }
  for (uint16_t v : img.pixels) {
    if (v > img.maxValue) {
      throw std::runtime_error(name + ": PGM: pixel value " + std::to_string(v) + " > maxval " +
                               std::to_string(img.maxValue));
    }
  }
  return img;
}

PgmImage readPgm(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot open PGM mask '" + path + "'");
  }
  try {
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return parsePgm(bytes.str(), path);
  } catch (const std::bad_alloc &) {
    throw std::runtime_error(path + ": PGM: not enough memory to read the mask");
  }
}

Pattern::Pattern(const std::string &name, uint32_t width, uint32_t height) : name_(name) {
  if (name != "uniform" && name != "ring" && name != "letters") {
    throw std::invalid_argument("unknown pattern '" + name + "'; built in: " + builtinNames() +
                                " (or --mask FILE.pgm)");
  }
  for (uint32_t y = 0; y < height; ++y) {
    for (uint32_t x = 0; x < width; ++x) {
      const double u = (x + 0.5) / width;
      const double v = (y + 0.5) / height;
      bool lit = true;
      if (name == "ring") {
        const double r2 = (u - 0.5) * (u - 0.5) + (v - 0.5) * (v - 0.5);
        lit = r2 >= 0.25 * 0.25 && r2 <= 0.40 * 0.40;
      } else if (name == "letters") {
        lit = letterLit(u, v);
      }
      if (lit) {
        points_.push_back({x, y});
      }
    }
  }
  if (points_.empty()) {
    throw std::invalid_argument("pattern '" + name + "' has no pixels on a " +
                                std::to_string(width) + " x " + std::to_string(height) + " image");
  }
}

Pattern::Pattern(const PgmImage &mask, uint32_t width, uint32_t height) : name_("pgm") {
  for (uint32_t y = 0; y < height; ++y) {
    const uint64_t my = static_cast<uint64_t>(y) * mask.height / height;
    for (uint32_t x = 0; x < width; ++x) {
      const uint64_t mx = static_cast<uint64_t>(x) * mask.width / width;
      if (2U * mask.pixels[my * mask.width + mx] > mask.maxValue) {
        points_.push_back({x, y});
      }
    }
  }
  if (points_.empty()) {
    throw std::invalid_argument("the PGM mask has no pixel brighter than half its maxval");
  }
}

std::string Pattern::builtinNames() {
  return "ring, letters, uniform";
}

} // namespace efu::readoutgen
