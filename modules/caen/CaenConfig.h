// SPDX-License-Identifier: BSD-2-Clause
// The caen module's configuration: key table, geometry and the (fiber, FEN, group) → tube map.
#pragma once

#include "common/readout/EssHeader.h"
#include "common/sdk/Module.h"

#include <array>
#include <string>
#include <vector>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace efu::caen {

/// The caen module's key table (what `efu -d caen --help-module` prints).
extern const EfuConfigKey kCaenKeys[];
extern const size_t kCaenKeyCount;

/// Where a tube is read out.
struct Channel {
  uint8_t fiber = 0;
  uint8_t fen = 0;
  uint8_t group = 0;
};

/// One "mapping" entry: fiber `fiber`, FENs fenFirst..fenLast, groups 0..groups-1 feed the
/// tubes firstTube .. firstTube + (fenLast-fenFirst+1)*groups - 1 of bank `bank`, FEN-major:
/// tube-in-bank = firstTube + (fen - fenFirst) * groups + group.
struct MappingRule {
  uint32_t bank = 0;
  uint8_t fiber = 0;
  uint8_t fenFirst = 0;
  uint8_t fenLast = 0;
  uint32_t groups = 0;
  uint32_t firstTube = 0;
};

/// Geometry and mapping, checked. Tubes are numbered globally: tube = bank * tubesPerBank +
/// tube-in-bank. Pixels: pixel = tube * pixelsPerTube + pos + 1 (1-based, 0 is never used);
/// as an image, x = pos (0..pixelsPerTube-1, width), y = tube (0..tubes-1, height).
class CaenConfig {
public:
  /// `config` must have passed the key table (types, ranges, defaults filled in, as
  /// ModuleContext::config() gives it); the nested "mapping" is checked here. Throws
  /// sdk::ConfigError naming `source`, the key path (e.g. mapping[2].fens) and the value.
  CaenConfig(const nlohmann::json &config, const std::string &source);

  std::string instrument;
  uint8_t detectorType = readout::kTypeLoki;
  uint32_t banks = 0;
  uint32_t tubesPerBank = 0;
  uint32_t pixelsPerTube = 0;
  int32_t amplitudeThreshold = 0; ///< readouts with A + B below this are rejected
  int64_t maxTofNs = 0;
  std::vector<MappingRule> rules;
  std::vector<std::string> sources; ///< ev44 source_name per bank; empty = the default source

  [[nodiscard]] uint32_t tubes() const noexcept { return banks * tubesPerBank; }
  [[nodiscard]] uint32_t imageWidth() const noexcept { return pixelsPerTube; }
  [[nodiscard]] uint32_t imageHeight() const noexcept { return tubes(); }
  [[nodiscard]] int32_t pixel(uint32_t tube, uint32_t pos) const noexcept {
    return static_cast<int32_t>(tube * pixelsPerTube + pos + 1);
  }

  /// Lookup result for one (fiber, FEN): tubes base .. base + groups - 1; groups 0 = unmapped.
  struct FenEntry {
    uint32_t firstTube = 0;
    uint32_t groups = 0;
  };
  /// fiber, fen <= 23 (check first).
  [[nodiscard]] const FenEntry &fenEntry(uint8_t fiber, uint8_t fen) const noexcept {
    return fens_[static_cast<size_t>(fiber) * (readout::kMaxFen + 1) + fen];
  }
  /// The channel of each global tube (every tube is mapped exactly once... or is unmapped:
  /// `mapped[tube]` false). For generators.
  std::vector<Channel> channels;
  std::vector<bool> mapped;

private:
  std::array<FenEntry, (readout::kMaxFiber + 1) * (readout::kMaxFen + 1)> fens_{};
};

} // namespace efu::caen
