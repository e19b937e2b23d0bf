// SPDX-License-Identifier: BSD-2-Clause
// The cbm module's configuration: the ESS EFU's common beam monitor files (Detector "CBM", a
// Topology of monitors by FEN and channel), read unchanged.
#pragma once

#include "common/readout/EssHeader.h"
#include "common/sdk/Module.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace efu::cbm {

/// The readout's type byte, and a Topology entry's "Type".
enum class MonitorType : uint8_t { Event0D = 1, Event2D = 2, Ibm = 3 };
/// Where a monitor's data go: events (ev44) or a histogram per pulse (da00).
enum class Schema : uint8_t { Da00, Ev44 };
/// How a da00 histogram combines the entries of a bin: their sum, or their integer mean.
enum class Aggregation : uint8_t { Sum = 0, Average = 1 };

/// One Topology entry: the monitor read on (FEN, Channel).
struct Monitor {
  uint8_t fen = 0;
  uint8_t channel = 0;
  std::string source; ///< Source: the ev44 / da00 source_name
  MonitorType type = MonitorType::Event0D;
  Schema schema = Schema::Ev44;
  int32_t pixelOffset = 0;      ///< EVENT_0D: the pixel; EVENT_2D: added to y * Width + x + 1
  uint16_t width = 0;           ///< EVENT_2D
  uint16_t height = 0;          ///< EVENT_2D
  int32_t maxTofBin = 0;        ///< IBM: the histogram's range, ns
  int32_t binCount = 0;         ///< IBM: bins
  uint8_t aggregatedFrames = 1; ///< IBM: pulses per histogram message
  Aggregation aggregation = Aggregation::Sum;
  /// The bin width of a histogram: MaxTofBin / BinCount in integer ns, as the ESS EFU computes
  /// its edges (so the last edge may fall short of MaxTofBin).
  [[nodiscard]] int32_t binWidth() const noexcept { return maxTofBin / binCount; }
};

/// The ESS limits of the readout fields (the same for every ESS family).
using readout::kMaxFen;
using readout::kMaxFiber;

/// The parsed and checked file, shared by the module and readoutgen's source.
struct CbmConfig {
  /// "Detector": "CBM" (detector type 0x10) or "BEER" (0x50: EVENT_2D monitors only, each
  /// Topology entry's Type and Schema preset to EVENT_2D and ev44, readouts of other types
  /// refused as parser.readout.errors.type).
  bool beer = false;
  [[nodiscard]] uint8_t detectorType() const noexcept {
    return beer ? readout::kTypeBeer : readout::kTypeCbm;
  }
  int64_t maxTofNs = 0;           ///< MaxTOFNS as the ESS EFU reads it (modulo 2^32)
  int64_t maxPulseTimeDiffNs = 0; ///< MaxPulseTimeDiffNS (modulo 2^32)
  bool maxTofWrapped = false;     ///< MaxTOFNS was beyond 32 bits
  bool maxPulseWrapped = false;   ///< MaxPulseTimeDiffNS was beyond 32 bits
  uint8_t monitorRing = 11;       ///< MonitorRing: the only ring accepted
  uint8_t maxRing = 11;           ///< MaxRing
  uint8_t maxFenId = 0;           ///< MaxFENId
  bool normalizeIbm = true;       ///< NormalizeIBMReadouts
  std::vector<Monitor> monitors;  ///< in file order
  /// [fen][channel] -> index in monitors, or -1.
  std::array<int16_t, 256 * 256> slots{};

  [[nodiscard]] int16_t slot(uint8_t fen, uint8_t channel) const noexcept {
    return slots[static_cast<size_t>(fen) * 256 + channel];
  }
};

/// The module's key table (also used by readoutgen and the tests).
extern const EfuConfigKey kCbmConfigKeys[];
extern const size_t kCbmConfigKeyCount;

/// Parses a configuration the key table has already validated, then checks the Topology.
/// Throws sdk::ConfigError naming `source`, the key path and the value.
CbmConfig parseCbmConfig(const nlohmann::json &config, const std::string &source);

/// Reads a JSON file, validates it with the key table and parses it. Throws sdk::ConfigError.
CbmConfig loadCbmConfig(const std::string &path);

/// "EVENT_0D", "EVENT_2D", "IBM".
const char *typeName(MonitorType type) noexcept;

/// A Source as a counter name segment: lower case, [a-z0-9_] (others become '_').
std::string counterSegment(const std::string &source);

} // namespace efu::cbm
