// SPDX-License-Identifier: BSD-2-Clause
// The vmm3 module's configuration: the ESS EFU's Multi-Blade instrument files (FREIA, AMOR,
// TBLMB, ESTIA), read unchanged, and the ESS logical geometry they imply.
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

namespace efu::vmm3 {

/// Which ESS logical geometry the file's InstrumentGeometry names.
///  - Freia (and Amor): x from the strips (64 per cassette), y from the wires (32 per cassette,
///    cassette c covers rows 32c..32c+31); Freia reads x on odd VMMs, AMOR on even ones.
///  - Estia: x from the wires (cassette c covers columns 32(c % 48)..+31), y from the strips
///    (rows 64(c / 48)..+63); x on odd VMMs.
enum class Layout : uint8_t { Freia, Amor, Estia };

/// (The ESS limits on a hybrid's address, kMaxRing, kMaxFen, kMaxHybrid and kHybridIdLength,
/// are in common/readout/Vmm3Readout.h, shared by the VMM3 families.)
constexpr uint8_t kStrips = 64;           ///< strip channels 0..63
constexpr uint8_t kFirstWireChannel = 16; ///< wire channels 16..47
constexpr uint8_t kLastWireChannel = 47;
constexpr uint16_t kWiresPerCassette = 32;
constexpr uint16_t kStripsPerCassette = 64;
constexpr uint16_t kEstiaCassettesPerRow = 48;

/// One entry of the file's Config array: a cassette read out by one hybrid (two VMMs).
struct Hybrid {
  uint8_t cassette = 0;
  uint8_t ring = 0;
  uint8_t fen = 0;
  uint8_t hybrid = 0;   ///< the entry's Hybrid: VMMs 2h and 2h + 1
  std::string hybridId; ///< 32 characters, as in the file (matched exactly by calibrations)
  std::array<int32_t, 2> threshold{}; ///< Thresholds[vmm % 2][0]: raw OTADC below it is dropped
  uint16_t xOffset = 0;               ///< first x coordinate of the cassette
  uint16_t yOffset = 0;               ///< first y coordinate of the cassette
};

/// The parsed and checked file, shared by the module, readoutgen's source and efu-dump.
struct Vmm3Config {
  Layout layout = Layout::Freia;
  std::string geometryName;           ///< InstrumentGeometry as written
  int64_t maxPulseTimeNs = 0;         ///< MaxPulseTimeNS
  uint8_t maxGapWire = 0;             ///< MaxGapWire
  uint8_t maxGapStrip = 0;            ///< MaxGapStrip
  bool splitMultiEvents = false;      ///< SplitMultiEvents
  float coefficientLow = 0.8f;        ///< SplitMultiEventsCoefficientLow
  float coefficientHigh = 1.2f;       ///< SplitMultiEventsCoefficientHigh
  uint16_t matchingTimeGapNs = 500;   ///< MaxMatchingTimeGap
  uint16_t clusteringTimeGapNs = 500; ///< MaxClusteringTimeGap
  std::vector<Hybrid> hybrids;        ///< in file order; the index is the event builder's
  /// [ring][fen][hybrid] -> index in hybrids, or -1.
  std::array<int16_t, (kMaxRing + 1) * (kMaxFen + 1) * (kMaxHybrid + 1)> slots{};

  /// The configured entry for (ring, FEN, vmm / 2), or -1. Arguments within the ESS limits.
  [[nodiscard]] int16_t slot(uint8_t ring, uint8_t fen, uint8_t hybrid) const noexcept {
    return slots[(static_cast<size_t>(ring) * (kMaxFen + 1) + fen) * (kMaxHybrid + 1) + hybrid];
  }
  /// The ESS logical image: Freia 64 x 1024, AMOR 64 x 448, ESTIA 1536 x 128.
  [[nodiscard]] uint32_t width() const noexcept { return layout == Layout::Estia ? 1536 : 64; }
  [[nodiscard]] uint32_t height() const noexcept {
    return layout == Layout::Freia ? 1024 : layout == Layout::Amor ? 448 : 128;
  }
  /// Pixel id of image (x, y): y * width + x + 1, or 0 outside the image (ESS logical geometry).
  [[nodiscard]] uint32_t pixel(uint32_t x, uint32_t y) const noexcept {
    return x < width() && y < height() ? y * width() + x + 1 : 0;
  }
  /// True when VMM `vmm` reads the x plane.
  [[nodiscard]] bool isX(uint8_t vmm) const noexcept {
    return layout == Layout::Amor ? (vmm & 1) == 0 : (vmm & 1) != 0;
  }
  /// True when the plane of VMM `vmm` is read by wires (else by strips).
  [[nodiscard]] bool isWire(uint8_t vmm) const noexcept {
    return isX(vmm) == (layout == Layout::Estia);
  }
  /// The ESS header detector types a datagram may carry: FREIA 0x48 for Freia; 0x48 and TBLMB
  /// 0x49 for AMOR (the ESS EFU runs AMOR files as freia and as tblmb); ESTIA 0x4C.
  [[nodiscard]] readout::DetectorTypes detectorTypes() const noexcept;
  /// The type readoutgen writes: 0x48, or 0x4C for ESTIA.
  [[nodiscard]] uint8_t detectorType() const noexcept;
};

/// The module's key table (the top level of the ESS file; also used by readoutgen and efu-dump).
extern const EfuConfigKey kVmm3ConfigKeys[];
extern const size_t kVmm3ConfigKeyCount;

/// Parses a configuration the key table has already validated (unknown keys refused, defaults
/// filled in), then checks the Config entries. Throws sdk::ConfigError naming `source`, the key
/// path and the value.
Vmm3Config parseVmm3Config(const nlohmann::json &config, const std::string &source);

/// Reads a JSON file, validates it with the key table and parses it. Throws sdk::ConfigError.
Vmm3Config loadVmm3Config(const std::string &path);

} // namespace efu::vmm3
