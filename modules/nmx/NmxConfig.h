// SPDX-License-Identifier: BSD-2-Clause
// The nmx module's configuration: the ESS EFU's NMX instrument files (nmx.json, nmx_p0.json,
// nmx_split.json, mininmx.json), read unchanged, and the ESS logical geometry they imply.
#pragma once

#include "common/readout/EssHeader.h"
#include "common/readout/Vmm3Readout.h"
#include "common/sdk/Module.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace efu::nmx {

/// The ESS limits on a hybrid's address, shared by the VMM3 families.
using vmm3::kHybridIdLength;
using vmm3::kMaxFen;
using vmm3::kMaxHybrid;
using vmm3::kMaxRing;
constexpr uint16_t kStrips = 64; ///< channels per VMM: 0..63
/// The ESS overlap check keeps coordinates of 4 panels of 2 planes: panels 0..3.
constexpr uint8_t kMaxPanels = 4;
/// The highest Offset: a hybrid reaches Offset + 127, and 65535 is the ESS invalid coordinate.
constexpr uint16_t kMaxOffset = 65535 - 2 * kStrips;

/// One entry of the file's Config array: a hybrid (VMMs 2h, 2h + 1) reading 128 strips of one
/// plane of a panel.
struct Hybrid {
  uint8_t ring = 0;
  uint8_t fen = 0;
  uint8_t hybrid = 0;
  std::string hybridId;  ///< 32 characters, as in the file
  uint8_t plane = 0;     ///< Plane: 0 = x (event plane A), 1 = y (B); default 0
  uint16_t offset = 0;   ///< Offset: the coordinate of its first strip; default 0
  bool reversed = false; ///< ReversedChannels; default false
  uint8_t panel = 0;     ///< Panel: the event builder; default 0
};

/// The parsed and checked file, shared by the module, readoutgen's source and efu-dump.
struct NmxConfig {
  int64_t maxPulseTimeNs = 0; ///< MaxPulseTimeNS
  uint16_t sizeX = 1280;      ///< SizeX: image width
  uint16_t sizeY = 1280;      ///< SizeY: image height
  uint16_t numPanels = 4;     ///< NumPanels
  uint16_t maxSpanX = 10, maxSpanY = 10;
  uint16_t minSpanX = 1, minSpanY = 1;
  uint16_t minAdc = 50;               ///< DefaultMinADC: raw ADC below it is dropped
  bool splitMultiEvents = false;      ///< SplitMultiEvents
  float coefficientLow = 0.8f;        ///< SplitMultiEventsCoefficientLow
  float coefficientHigh = 1.2f;       ///< SplitMultiEventsCoefficientHigh
  uint16_t matchingTimeGapNs = 500;   ///< MaxMatchingTimeGap
  uint16_t clusteringTimeGapNs = 500; ///< MaxClusteringTimeGap
  /// The ESS EFU's MaxTimeSpan: not read from the file there, always 500 ns.
  static constexpr uint64_t kMaxTimeSpanNs = 500;
  std::vector<Hybrid> hybrids; ///< in file order
  /// [ring][fen][hybrid] -> index in hybrids, or -1.
  std::array<int16_t, (kMaxRing + 1) * (kMaxFen + 1) * (kMaxHybrid + 1)> slots{};

  /// The configured entry for (ring, FEN, hybrid), or -1. Arguments within the ESS limits.
  [[nodiscard]] int16_t slot(uint8_t ring, uint8_t fen, uint8_t hybrid) const noexcept {
    return slots[(static_cast<size_t>(ring) * (kMaxFen + 1) + fen) * (kMaxHybrid + 1) + hybrid];
  }
  /// Event builders efu runs: panels 0..min(NumPanels, 4) - 1 (no entry may name another).
  [[nodiscard]] size_t builders() const noexcept {
    return numPanels < kMaxPanels ? numPanels : kMaxPanels;
  }
  /// Pixel id of image (x, y): y * SizeX + x + 1, or 0 outside the image (ESS logical geometry).
  [[nodiscard]] uint32_t pixel(uint32_t x, uint32_t y) const noexcept {
    return x < sizeX && y < sizeY ? y * uint32_t{sizeX} + x + 1 : 0;
  }
};

/// The module's key table (the top level of the ESS file; also used by readoutgen and efu-dump).
extern const EfuConfigKey kNmxConfigKeys[];
extern const size_t kNmxConfigKeyCount;

/// Parses a configuration the key table has already validated (unknown keys refused, defaults
/// filled in), then checks the Config entries as the ESS EFU does. Throws sdk::ConfigError naming
/// `source`, the key path and the value.
NmxConfig parseNmxConfig(const nlohmann::json &config, const std::string &source);

/// Reads a JSON file, validates it with the key table and parses it. Throws sdk::ConfigError.
NmxConfig loadNmxConfig(const std::string &path);

} // namespace efu::nmx
