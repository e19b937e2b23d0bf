// SPDX-License-Identifier: BSD-2-Clause
// The trex module's configuration: the ESS EFU's Multi-Grid VMM3 instrument files (TREX, LET),
// read unchanged, and the ESS logical geometry they imply.
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

namespace efu::trex {

/// Which ESS digital geometry InstrumentGeometry names (the wire hybrid and the channel maps).
enum class Instrument : uint8_t { Trex, Let };

/// The ESS VMM3 limits on a Config entry (and on a readout's ring and FEN), shared by the VMM3
/// families.
using vmm3::kHybridIdLength;
using vmm3::kMaxFen;
using vmm3::kMaxHybrid;
using vmm3::kMaxRing;
/// The ESS EFU's events spanning more grids than this are rejected; its files' MaxGridsSpan
/// and MaxGridsPerEvent are not read.
constexpr uint16_t kMaxGridsSpan = 3;
/// The ESS builders are indexed ring * MaxFEN + FEN with MaxFEN = 13, so (ring, FEN 13) and
/// (ring + 1, FEN 0) share one; kBuilderKeys covers every key a valid readout can have.
constexpr size_t kBuilderKeys = size_t{kMaxRing} * kMaxFen + kMaxFen + 1;
constexpr size_t builderKey(uint8_t ring, uint8_t fen) noexcept {
  return size_t{ring} * kMaxFen + fen;
}

/// One entry of the file's Config array with its vessel's settings.
struct TrexHybrid {
  uint8_t ring = 0;
  uint8_t fen = 0;
  uint8_t hybrid = 0;   ///< the entry's Hybrid: readouts of VMMs 2h and 2h + 1
  std::string hybridId; ///< 32 characters, as in the file
  std::string vesselId;
  bool rotated = false; ///< the vessel's Rotation
  bool isShort = false; ///< the vessel's Short (default false)
  uint16_t xOffset = 0; ///< XOffset (default 0)
  uint16_t yOffset = 0; ///< YOffset (default 0)
  uint16_t minAdc = 0;  ///< the vessel's MinADC, else DefaultMinADC
};

/// The parsed and checked file, shared by the module, readoutgen's source and efu-dump.
struct TrexConfig {
  Instrument instrument = Instrument::Trex;
  std::string geometryName; ///< InstrumentGeometry as written
  int64_t maxPulseTimeNs = 0;
  uint16_t defaultMinAdc = 50;
  uint16_t sizeX = 384, sizeY = 140, sizeZ = 16;
  std::vector<TrexHybrid> hybrids; ///< in file order
  /// [ring][fen][hybrid] -> index in hybrids, or -1.
  std::array<int16_t, (kMaxRing + 1) * (kMaxFen + 1) * (kMaxHybrid + 1)> slots{};

  /// The configured entry for (ring, FEN, vmm / 2), or -1. Arguments within the limits.
  [[nodiscard]] int16_t slot(uint8_t ring, uint8_t fen, uint8_t hybrid) const noexcept {
    return slots[(size_t{ring} * (kMaxFen + 1) + fen) * (kMaxHybrid + 1) + hybrid];
  }
  /// The ESS logical geometry's 3-D pixel: x + SizeX * (y + SizeY * z) + 1, or 0 outside.
  [[nodiscard]] uint32_t pixel(uint32_t x, uint32_t y, uint32_t z) const noexcept {
    return x < sizeX && y < sizeY && z < sizeZ ? x + uint32_t{sizeX} * (y + uint32_t{sizeY} * z) + 1
                                               : 0;
  }
  /// The picture efu-dump draws: SizeX wide, SizeY * SizeZ high (row y + SizeY * z), so that
  /// pixel = row * width + x + 1.
  [[nodiscard]] uint32_t width() const noexcept { return sizeX; }
  [[nodiscard]] uint32_t height() const noexcept { return uint32_t{sizeY} * sizeZ; }
};

/// The module's key table (the top level of the ESS file; also used by readoutgen and efu-dump).
extern const EfuConfigKey kTrexConfigKeys[];
extern const size_t kTrexConfigKeyCount;

/// Parses a configuration the key table has already validated, then checks Vessel_Config and
/// the Config entries. Throws sdk::ConfigError naming `source`, the key path and the value.
TrexConfig parseTrexConfig(const nlohmann::json &config, const std::string &source);

} // namespace efu::trex
