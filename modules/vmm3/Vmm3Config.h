// SPDX-License-Identifier: BSD-2-Clause
// The vmm3 instrument configuration: key table, hybrid map and clustering parameters.
#pragma once

#include "common/readout/EssHeader.h"
#include "common/sdk/Module.h"
#include "modules/vmm3/Vmm3Readout.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace efu::vmm3 {

/// A detector plane: strips along x or along y.
enum class Plane : uint8_t { X = 0, Y = 1 };
constexpr size_t kPlanes = 2;
constexpr const char *planeName(Plane p) noexcept {
  return p == Plane::X ? "x" : "y";
}

/// One hybrid (fiber, FEN, VMM pair) of the config: its plane and first strip.
/// Strip of a hit = stripOffset + (vmm % 2) * 64 + channel.
struct Hybrid {
  uint8_t fiber = 0;
  uint8_t fen = 0;
  uint8_t vmmPair = 0;
  Plane plane = Plane::X;
  uint16_t stripOffset = 0;
  std::string hybridId; ///< 32 hex digits, upper case (as in ESS calibration files); "" = none
};

/// What a (fiber, FEN, VMM pair) maps to; `known` false when the config does not list it.
struct HybridSlot {
  bool known = false;
  Plane plane = Plane::X;
  uint16_t stripOffset = 0;
  uint16_t index = 0; ///< position in Vmm3Config::hybrids
};

/// The parsed and cross-checked configuration, shared by the module and readoutgen.
struct Vmm3Config {
  std::string instrument;       ///< free text, e.g. "freia"
  uint8_t detectorType = 0;     ///< ESS header detector type accepted (0x48 FREIA, ...)
  uint32_t nx = 0;              ///< strips (pixels) along x; image width
  uint32_t ny = 0;              ///< strips (pixels) along y; image height
  uint16_t adcThreshold = 0;    ///< hits with ADC < threshold are counted and ignored
  bool fineTime = false;        ///< add BC/TDC fine time to time high/low
  int64_t bcClockHz = 0;        ///< BC clock; one BC = 1e9 / bcClockHz ns, one TDC LSB 1/256 BC
  int64_t timeGapNs = 0;        ///< max time between consecutive hits of a cluster
  uint32_t stripGap = 0;        ///< max missing strips between neighbouring hits of a cluster
  int64_t matchWindowNs = 0;    ///< max |t_x - t_y| for an x and a y cluster to form an event
  int64_t sortWindowNs = 0;     ///< hits may arrive up to this much out of time order per plane
  int64_t clusterTimeoutNs = 0; ///< wall time without hits after which everything open is closed
  int64_t maxTofNs = 0;         ///< events with a larger time of flight are rejected
  uint32_t maxClusterHits = 0;  ///< capacity of one time group; a full group is closed early
  std::vector<Hybrid> hybrids;
  std::array<HybridSlot, (readout::kMaxFiber + 1) * (readout::kMaxFen + 1) * kVmmPairs> slots{};

  [[nodiscard]] const HybridSlot &slot(uint8_t fiber, uint8_t fen, uint8_t vmmPair) const noexcept {
    return slots[(static_cast<size_t>(fiber) * (readout::kMaxFen + 1) + fen) * kVmmPairs + vmmPair];
  }
  /// Fine time of a readout in ns (0 unless fineTime): floor((bc*256 + tdc) * 1e9 / (clock*256)).
  [[nodiscard]] int64_t fineTimeNs(uint16_t bc, uint8_t tdc) const noexcept {
    if (!fineTime) {
      return 0;
    }
    return ((static_cast<int64_t>(bc) * 256 + tdc) * 1'000'000'000) / (bcClockHz * 256);
  }
  /// Strips of a plane (nx for x, ny for y).
  [[nodiscard]] uint32_t strips(Plane p) const noexcept { return p == Plane::X ? nx : ny; }
};

/// Digits of a hybrid id (ESS: the hybrid's serial number as 32 hex digits, e.g. in
/// calibration files' VMMHybridCalibration.HybridId).
constexpr size_t kHybridIdDigits = 32;
/// True for 32 hex digits (either case).
bool isHybridId(const std::string &id) noexcept;
/// The id in upper case, as hybrid ids are compared.
std::string normalHybridId(std::string id);

/// The module's key table (also used by readoutgen to fill defaults and validate).
extern const EfuConfigKey kVmm3ConfigKeys[];
extern const size_t kVmm3ConfigKeyCount;

/// Parses a configuration the key table has already validated (as the daemon and the tools pass
/// it: unknown keys refused, defaults filled in), then checks the hybrid list and the geometry.
/// Throws sdk::ConfigError naming `source`, the key path and the value.
Vmm3Config parseVmm3Config(const nlohmann::json &config, const std::string &source);

/// Reads a JSON file, validates it with the key table and parses it. Throws sdk::ConfigError.
Vmm3Config loadVmm3Config(const std::string &path);

} // namespace efu::vmm3
