// SPDX-License-Identifier: BSD-2-Clause
// The ESS charge-division calibration of the caen module (efu --calibration FILE), and its
// inverse for readoutgen.
#pragma once

#include "modules/caen/CaenConfig.h"

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace efu::caen {

/// The ESS CDCalibration file (modules/caen/README.md, Calibration):
/// {"Calibration": {"instrument": NAME, "groups": G, "groupsize": U, "Parameters": [
///   {"groupindex": i, "intervals": [[lo, hi] x U], "polynomials": [[a, b, c, d] x U]} x G]}}
/// Group i is global tube i; a raw position p = B / (A + B) selects the first unit whose
/// interval holds it, and that unit's polynomial corrects it:
/// corrected = p - (a + b p + c p^2 + d p^3), clamped to [0, 1]; pos = floor(corrected x
/// pixels_per_tube), clamped to pixels_per_tube - 1.
class CaenCalibration {
public:
  /// Checks `calibration` against the configuration's instrument (compared ignoring case, when
  /// the configuration names one) and the geometry of `config`; throws sdk::ConfigError naming
  /// `source`, the key path (e.g. Calibration.Parameters[3].intervals[1]) and the value.
  CaenCalibration(const nlohmann::json &calibration, const std::string &source,
                  const CaenConfig &config);

  /// Pixel index along tube `tube` of amplitudes a, b (a + b > 0, a >= 0, b >= 0). False when
  /// the position is in none of the tube's intervals.
  bool position(uint32_t tube, int32_t a, int32_t b, uint32_t &pos) const noexcept;

  /// The inverse for generators: a B amplitude with which position(tube, sum - B, B) gives
  /// `pos`, or -1 when the calibration cannot reach `pos` with this sum.
  [[nodiscard]] int32_t amplitudeB(uint32_t tube, uint32_t pos, int32_t sum) const noexcept;

  [[nodiscard]] uint32_t unitsPerTube() const noexcept { return unitsPerTube_; }

private:
  struct Unit {
    double lo = 0, hi = 0;       ///< interval of raw positions, lo < hi
    double a = 0, b = 0, c = 0, d = 0; ///< delta = a + b p + c p^2 + d p^3
    [[nodiscard]] double delta(double p) const noexcept { return a + p * (b + p * (c + p * d)); }
  };
  [[nodiscard]] const Unit *unit(uint32_t tube, double p) const noexcept;

  uint32_t pixelsPerTube_ = 0;
  uint32_t unitsPerTube_ = 0;
  std::vector<Unit> units_; ///< tube-major, ascending intervals per tube
};

} // namespace efu::caen
