// SPDX-License-Identifier: BSD-2-Clause
// The caen module's configuration: the ESS EFU's CAEN instrument files, read unchanged.
#pragma once

#include "common/readout/EssHeader.h"
#include "common/sdk/Module.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace efu::caen {

/// The caen module's key table (what `efu -d caen --help-module` prints): the keys of the ESS
/// EFU's CAEN instrument files (e.g. LokiFull.json) plus efu's optional "sources".
extern const EfuConfigKey kCaenKeys[];
extern const size_t kCaenKeyCount;

/// Where a unit (a straw of LoKI) is read out: ring = fiber / 2.
struct Channel {
  uint8_t ring = 0;
  uint8_t fen = 0;
  uint8_t group = 0;
  uint8_t unit = 0;
};

/// The LoKI geometry of an ESS instrument file ("Detector": "loki"), modules/caen/README.md:
/// banks of 7-straw groups ("units") in GroupsZ = 4 layers; a ring feeds one bank through FENs
/// FENOffset.. of it, each FEN 8 groups (local group g: layer g % 4, pair g / 4).
struct LokiGeometry {
  static constexpr uint32_t kBanks = 9;  ///< bank numbers 0..8
  static constexpr uint32_t kRings = 12; ///< ring numbers 0..11
  static constexpr uint32_t kLayers = 4; ///< GroupsZ
  static constexpr uint32_t kUnitsPerGroup = 7;

  struct Bank {
    bool configured = false;
    std::string id;
    uint32_t groupsN = 0; ///< groups per layer
    uint32_t yOffset = 0; ///< first unit row of the bank
  };
  struct Ring {
    int32_t bank = -1; ///< -1: no bank on this ring
    uint32_t fens = 0;
    uint32_t fenOffset = 0;
  };
  std::array<Bank, kBanks> banks{};
  std::array<Ring, kRings> rings{};
  uint32_t totalGroups = 0; ///< sum of GroupsN x GroupsZ: the calibration's group count

  /// The bank-wide group index the calibration is keyed by. Ring must have a bank.
  [[nodiscard]] uint32_t globalGroup(uint32_t ring, uint32_t fen, uint32_t group) const noexcept {
    const Ring &r = rings[ring];
    const Bank &b = banks[static_cast<size_t>(r.bank)];
    return b.yOffset / kUnitsPerGroup + (group % kLayers) * b.groupsN + (r.fenOffset + fen) * 2 +
           group / kLayers;
  }
  /// The unit's row in the instrument's pixel image (0-based). Ring must have a bank.
  [[nodiscard]] uint32_t row(uint32_t ring, uint32_t fen, uint32_t group,
                             uint32_t unit) const noexcept {
    const Ring &r = rings[ring];
    const Bank &b = banks[static_cast<size_t>(r.bank)];
    return b.yOffset + (group % kLayers) * b.groupsN * kUnitsPerGroup +
           (r.fenOffset + fen) * 2 * kUnitsPerGroup + kUnitsPerGroup * (group / kLayers) + unit;
  }
  [[nodiscard]] uint32_t rows() const noexcept { return totalGroups * kUnitsPerGroup; }
};

/// The ESS CAEN geometries ("Detector"), modules/caen/README.md.
enum class Instrument : uint8_t { Loki, Bifrost, Cspec, Miracles, Tbl3he };

/// The ESS image (x, y extent) of the fixed-size geometries, as the ESS EFU's logical geometry
/// numbers them: pixel = y x width + x + 1.
struct FixedImage {
  uint32_t width, height;
};
constexpr FixedImage kBifrostImage{900, 15};
constexpr FixedImage kCspecImage{900, 180};
constexpr FixedImage kMiraclesImage{48, 128};
constexpr FixedImage kTbl3heImage{100, 8};

/// The TBL3HE topology: which bank a (ring, FEN) pair reads. The ESS EFU files each Topology
/// entry under FEN x NumOfFENs + Ring and looks a readout up by the same number, so a pair that
/// is not listed but shares the number of a listed one is read as that one (e.g. with
/// NumOfFENs 2, ring 8 FEN 1 as ring 10 FEN 0); efu does the same, pixel for pixel.
struct Tbl3heTopology {
  static constexpr uint32_t kBanks = 2; ///< banks of 4 tubes: the image has 8 rows
  std::array<std::array<int8_t, readout::kMaxFen + 1>, 12> bank{}; ///< [ring][fen], -1 = none
  struct Entry {
    uint8_t ring, fen, bank;
  };
  std::vector<Entry> entries; ///< as listed (what generators read out)
};

/// A checked ESS CAEN instrument file. Pixels are 1-based; 0 is never a pixel.
class CaenConfig {
public:
  /// `config` must have passed the key table (types, ranges, defaults filled in, as
  /// ModuleContext::config() gives it); the instrument's own sections are checked here. Throws
  /// sdk::ConfigError naming `source`, the key path (e.g. Config[2].Bank) and the value.
  CaenConfig(const nlohmann::json &config, const std::string &source);

  std::string detector; ///< the ESS instrument name: "loki", "bifrost", ...
  Instrument instrument = Instrument::Loki;
  uint8_t detectorType = readout::kTypeLoki;
  uint32_t resolution = 0;   ///< Resolution (its meaning is the instrument's)
  int64_t maxTofNs = 0;      ///< MaxTOFNS
  int64_t maxPulseGapNs = 0; ///< MaxPulseTimeNS: largest pulse − previous pulse
  uint32_t maxFen = 0;       ///< MaxFEN (BIFROST, CSPEC)
  uint32_t maxGroup = 0;     ///< MaxGroup (BIFROST, CSPEC, TBL3HE)
  int64_t maxAmplitude = 0;  ///< MaxAmpl (BIFROST): A + B above it is rejected
  int64_t minAmplitude = 0;  ///< MinValidAmplitude (TBL3HE): A or B below it is rejected
  LokiGeometry loki;
  Tbl3heTopology tbl3he;
  /// ev44 source_name per bank number (efu's "sources", in the order of "Banks"); empty = all
  /// events under efu's source name.
  std::vector<std::string> bankSources;

  [[nodiscard]] uint32_t imageWidth() const noexcept { return width_; }
  [[nodiscard]] uint32_t imageHeight() const noexcept { return height_; }
  /// y x width + x + 1; 0 when (x, y) lies outside the image, as the ESS logical geometry
  /// answers (negative coordinates, passed as their uint32 wrap, are outside too).
  [[nodiscard]] uint32_t pixel(uint32_t x, uint32_t y) const noexcept {
    return x < width_ && y < height_ ? y * width_ + x + 1 : 0;
  }

  /// LoKI: the channel of each row, and whether any channel reads it out (for generators).
  std::vector<Channel> channels;
  std::vector<bool> mapped;

private:
  uint32_t width_ = 0, height_ = 0; ///< the instrument's image
};

} // namespace efu::caen
