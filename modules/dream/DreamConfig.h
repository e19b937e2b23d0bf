// SPDX-License-Identifier: BSD-2-Clause
// The dream module's configuration: the ESS EFU's CDT instrument files (DREAM, MAGIC, HEIMDAL),
// read unchanged: which detector part each (ring, FEN) reads out.
#pragma once

#include "common/sdk/Module.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace efu::dream {

/// The instrument a file is for (its "Detector"); each has its own ESS header type.
enum class Instrument : uint8_t { Dream, Magic, Heimdal };

/// The kinds of CDT detector part, by the names of the files' "Type".
enum class PartType : uint8_t {
  BwEndCap,      ///< DREAM backward endcap (SUMO cassettes)
  FwEndCap,      ///< DREAM forward endcap (SUMO cassettes)
  DreamMantle,   ///< DREAM mantle
  HR,            ///< DREAM high-resolution detector (cuboids)
  SANS,          ///< DREAM SANS detector (cuboids)
  FRDetector,    ///< MAGIC forward detector (a mantle of 128 strips)
  PADetector,    ///< MAGIC polarisation analyser
  HeimdalMantle, ///< HEIMDAL mantle
};
constexpr size_t kPartTypes = 8;

/// Rings and FENs a file may name (0..11 each, as the ESS EFU's file reader allows).
constexpr uint8_t kMaxRing = 11;
constexpr uint8_t kMaxFen = 11;
constexpr size_t kSlots = size_t{kMaxRing + 1} * (kMaxFen + 1);
constexpr size_t slotOf(uint8_t ring, uint8_t fen) noexcept {
  return size_t{ring} * (kMaxFen + 1) + fen;
}

/// One Config entry: the part a (ring, FEN) reads out and its two indices (by type: the endcap
/// sector; the mantle's mounting unit and cassette; the cuboid of unit 0 and of unit 1; the PA
/// sector).
struct Part {
  bool used = false;
  PartType type = PartType::BwEndCap;
  uint8_t index = 0;  ///< "Index" (0 when absent)
  uint8_t index2 = 0; ///< "Index2" (0 when absent)
};

/// The parsed and checked file, shared by the module, readoutgen's source and efu-dump.
struct DreamConfig {
  Instrument instrument = Instrument::Dream;
  /// Pulse time − previous pulse time above this rejects the datagram; MaxPulseTimeDiffNS
  /// modulo 2^32, as the ESS EFU reads it into 32 bits (the ESS files' 5000000000 is 705032704).
  int64_t maxPulseTimeDiffNs = 0;
  bool maxPulseWrapped = false;      ///< MaxPulseTimeDiffNS was above 2^32 − 1
  std::array<Part, kSlots> parts{};  ///< by slotOf(ring, FEN)
  std::vector<uint8_t> slotsInOrder; ///< slots of the entries, in file order
  std::array<bool, kPartTypes> hasType{};
};

/// Type names as the files write them, and the instrument names.
const char *partTypeName(PartType type) noexcept;
const char *instrumentName(Instrument instrument) noexcept;
/// The ESS header type of an instrument's datagrams (0x60, 0x64, 0x68).
uint8_t detectorType(Instrument instrument) noexcept;

/// Parses a file validated against kDreamConfigKeys. Throws sdk::ConfigError naming file, key
/// path and value: a Detector that is not DREAM, MAGIC or HEIMDAL; an entry without Ring, FEN
/// or Type, a ring or FEN above 11, a second entry for one (ring, FEN), a Type the instrument
/// has no part of, an Index or Index2 outside 0..255, Index2 without Index, unknown keys.
DreamConfig parseDreamConfig(const nlohmann::json &config, const std::string &source);

extern const EfuConfigKey kDreamConfigKeys[];
extern const size_t kDreamConfigKeyCount;

} // namespace efu::dream
