// SPDX-License-Identifier: BSD-2-Clause
// The ESS CAEN geometries: the null calibrations (the checks and pixels are inline in the
// header, for the hot path).
#include "modules/caen/CaenGeometry.h"

#include <array>

namespace efu::caen {

void CaenGeometry::initLoki() noexcept {
  if (config_.instrument != Instrument::Loki) {
    return;
  }
  lokiScale_ = static_cast<double>(config_.resolution - 1);
  const LokiGeometry &g = config_.loki;
  for (uint32_t ring = 0; ring < LokiGeometry::kRings; ++ring) {
    const LokiGeometry::Ring &rc = g.rings[ring];
    for (uint32_t fen = 0; fen <= readout::kMaxFen; ++fen) {
      LokiFen &out = lokiFens_[ring][fen];
      if (rc.bank < 0) {
        out.base = kNoBank;
      } else if (fen >= rc.fens) {
        out.base = kNoFen;
      } else {
        const LokiGeometry::Bank &bank = g.banks[static_cast<size_t>(rc.bank)];
        out.base = static_cast<int32_t>(bank.yOffset / LokiGeometry::kUnitsPerGroup +
                                        (rc.fenOffset + fen) * 2);
        out.groupsN = bank.groupsN;
      }
    }
  }
}

CaenCalibration nullCalibration(const CaenConfig &config) {
  using Intervals = std::pair<double, double>;
  static constexpr std::array<Intervals, 7> kStraws = {{{0.0, 0.143},
                                                        {0.144, 0.286},
                                                        {0.287, 0.429},
                                                        {0.43, 0.571},
                                                        {0.572, 0.714},
                                                        {0.715, 0.857},
                                                        {0.858, 1.0}}};
  static constexpr std::array<Intervals, 3> kTriplet = {
      {{0.0, 0.333}, {0.334, 0.667}, {0.668, 1.0}}};
  static constexpr std::array<Intervals, 2> kPair = {{{0.0, 0.5}, {0.501, 1.0}}};
  static constexpr std::array<Intervals, 1> kTube = {{{0.0, 1.0}}};
  switch (config.instrument) {
  case Instrument::Loki:
    return CaenCalibration::null(config.loki.totalGroups, kStraws);
  case Instrument::Bifrost:
    return CaenCalibration::null(45, kTriplet);
  case Instrument::Cspec:
    return CaenCalibration::null(100, kTube);
  case Instrument::Miracles:
    return CaenCalibration::null(48, kPair);
  case Instrument::Tbl3he:
    return CaenCalibration::null(8, kTube);
  }
  return CaenCalibration::null(0, kTube);
}

} // namespace efu::caen
