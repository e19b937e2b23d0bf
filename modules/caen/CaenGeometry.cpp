// SPDX-License-Identifier: BSD-2-Clause
// The ESS CAEN geometries. Built with -ffp-contract=off: the positions must round as the ESS
// EFU's arithmetic rounds them, without fused multiply-adds.
#include "modules/caen/CaenGeometry.h"

#include <array>
#include <cmath>

namespace efu::caen {

CaenCalibration nullCalibration(const CaenConfig &config) {
  using Intervals = std::pair<double, double>;
  static constexpr std::array<Intervals, 7> kStraws = {{{0.0, 0.143},
                                                        {0.144, 0.286},
                                                        {0.287, 0.429},
                                                        {0.43, 0.571},
                                                        {0.572, 0.714},
                                                        {0.715, 0.857},
                                                        {0.858, 1.0}}};
  static constexpr std::array<Intervals, 3> kTriplet = {{{0.0, 0.333}, {0.334, 0.667}, {0.668, 1.0}}};
  static constexpr std::array<Intervals, 2> kPair = {{{0.0, 0.5}, {0.501, 1.0}}};
  static constexpr std::array<Intervals, 1> kTube = {{{0.0, 1.0}}};
  switch (config.instrument) {
  case Instrument::Loki: return CaenCalibration::null(config.loki.totalGroups, kStraws);
  case Instrument::Bifrost: return CaenCalibration::null(45, kTriplet);
  case Instrument::Cspec: return CaenCalibration::null(100, kTube);
  case Instrument::Miracles: return CaenCalibration::null(48, kPair);
  case Instrument::Tbl3he: return CaenCalibration::null(8, kTube);
  }
  return CaenCalibration::null(0, kTube);
}

namespace {
inline bool reject(int64_t &reason, CaenTally &t) noexcept {
  ++reason;
  ++t.validation;
  return false;
}
/// x (an int of the ESS arithmetic) as the ESS logical geometry takes it: a uint32, so a
/// negative coordinate lies outside every image.
inline uint32_t coordinate(int64_t v) noexcept { return static_cast<uint32_t>(v); }
/// Truncation of a double to int as the ESS EFU's conversions do, with NaN and values beyond
/// int (a zero-width interval) mapped outside every image.
inline int64_t truncated(double v) noexcept {
  return v > -2147483648.0 && v < 2147483648.0 ? static_cast<int64_t>(static_cast<int>(v))
                                               : int64_t{-1};
}
} // namespace

bool CaenGeometry::valid(const CaenReadout &r, CaenTally &t) const noexcept {
  const uint32_t ring = r.fiber / 2U; // <= 11: the readout parser stops fibers above 23
  const int sum = r.ampA + r.ampB;
  switch (config_.instrument) {
  case Instrument::Loki: {
    const LokiGeometry::Ring &rc = config_.loki.rings[ring];
    if (rc.bank < 0) {
      return reject(t.ringMapping, t);
    }
    return r.fen < rc.fens || reject(t.topology, t);
  }
  case Instrument::Bifrost:
    if (r.fen > config_.maxFen) {
      return reject(t.fen, t);
    }
    if (r.group > config_.maxGroup) {
      return reject(t.group, t);
    }
    if (sum == 0) {
      return reject(t.amplitudeZero, t);
    }
    return sum <= config_.maxAmplitude || reject(t.amplitudeHigh, t);
  case Instrument::Cspec:
    if (r.fen > config_.maxFen) {
      return reject(t.fen, t);
    }
    return r.group <= config_.maxGroup || reject(t.group, t);
  case Instrument::Miracles:
    return sum != 0 || reject(t.amplitudeZero, t);
  case Instrument::Tbl3he:
    if (r.group > config_.maxGroup) {
      return reject(t.group, t);
    }
    if (config_.tbl3he.bank[ring][r.fen] < 0) {
      return reject(t.topology, t);
    }
    if (r.ampA < config_.minAmplitude || r.ampB < config_.minAmplitude) {
      return reject(t.amplitudeLow, t);
    }
    return sum != 0 || reject(t.amplitudeZero, t);
  }
  return false;
}

uint32_t CaenGeometry::pixel(const CaenReadout &r, CaenTally &t) const noexcept {
  uint32_t p = 0;
  switch (config_.instrument) {
  case Instrument::Loki: return lokiPixel(r, t); // counts its own
  case Instrument::Bifrost: p = bifrostPixel(r, t); break;
  case Instrument::Cspec: p = cspecPixel(r); break;
  case Instrument::Miracles: p = miraclesPixel(r); break;
  case Instrument::Tbl3he: p = tbl3hePixel(r, t); break;
  }
  t.pixel += p == 0 ? 1 : 0;
  return p;
}

uint32_t CaenGeometry::lokiPixel(const CaenReadout &r, CaenTally &t) const noexcept {
  const uint32_t ring = r.fiber / 2U;
  const LokiGeometry &g = config_.loki;
  const uint32_t group = g.globalGroup(ring, r.fen, r.group);
  // The firmware swaps A with B and C with D: the straw coordinate is (B + D) / sum, the
  // position along it (A + B) / sum (ESS LoKI ICD, as the ESS EFU reads it).
  const int32_t sum = r.ampA + r.ampB + r.ampC + r.ampD;
  if (sum == 0) {
    ++t.amplitudeZero;
    ++t.pixel;
    return 0;
  }
  const double position = static_cast<double>(r.ampA + r.ampB) / sum;
  if (position < 0.0 || position > 1.0) {
    ++t.pixel; // the ESS EFU's LoKI geometry counts no reason of its own here
    return 0;
  }
  const double straw = static_cast<double>(r.ampB + r.ampD) / sum;
  const int unit = calibration_.unit(group, straw);
  if (unit < 0) {
    ++(unit == CaenCalibration::kGroupBeyond ? t.calibrationGroup : t.outsideTube);
    ++t.pixel;
    return 0;
  }
  double corrected = calibration_.corrected(group, static_cast<uint32_t>(unit), position);
  if (corrected < 0.0) {
    ++t.positionLow;
    corrected = 0.0;
  } else if (corrected > 1.0) {
    ++t.positionHigh;
    corrected = 1.0;
  }
  // std::round (halves away from zero) for a value in [0, Resolution - 1], without the libm
  // call: the fraction of a non-negative double below 2^52 is exact.
  const double scaled = corrected * (config_.resolution - 1);
  const auto whole = static_cast<uint32_t>(scaled);
  const uint32_t x = whole + (scaled - whole >= 0.5 ? 1U : 0U);
  const uint32_t row = g.row(ring, r.fen, r.group, static_cast<uint32_t>(unit));
  const uint32_t pixel = config_.pixel(x, row);
  if (pixel == 0) {
    ++t.rowInvalid;
    ++t.pixel;
  }
  return pixel;
}

int CaenGeometry::tubeUnit(uint32_t group, double position, CaenTally &t) const noexcept {
  const int unit = calibration_.unit(group, position);
  if (unit < 0) {
    ++(unit == CaenCalibration::kGroupBeyond ? t.calibrationGroup : t.outsideTube);
    ++t.unitInvalid;
  }
  return unit;
}

uint32_t CaenGeometry::bifrostPixel(const CaenReadout &r, CaenTally &t) const noexcept {
  const int64_t ring = r.fiber / 2U;
  const int64_t group = r.group;
  const auto calibrationGroup = static_cast<uint32_t>(ring * kBifrostTripletsPerRing + group);
  const double position = 1.0 * r.ampA / (r.ampA + r.ampB); // A + B != 0: valid()
  if (position < 0.0 || position > 1.0) {
    ++t.positionInvalid;
    return 0;
  }
  const int unit = tubeUnit(calibrationGroup, position, t);
  if (unit < 0) {
    return 0;
  }
  // The position inside the tube's interval, truncated to one of 100 pixels; no polynomial
  // correction (the ESS EFU's BIFROST geometry applies none).
  const double along =
      calibration_.withinInterval(calibrationGroup, static_cast<uint32_t>(unit), position);
  const int64_t x = ring * config_.resolution + (group % 3) * kTubePixels +
                    truncated(along * (kTubePixels - 1));
  const int64_t y = (group / 3) * 3 + unit;
  return config_.pixel(coordinate(x), coordinate(y));
}

uint32_t CaenGeometry::cspecPixel(const CaenReadout &r) const noexcept {
  const int ring = r.fiber / 2U;
  const int resolution = static_cast<int>(config_.resolution);
  const int sum = r.ampA + r.ampB;
  // Integer arithmetic, truncating toward zero, as the ESS EFU computes it.
  const int y = sum == 0 ? -1 : ((resolution - 1) * r.ampA) / sum;
  const int x = ring * resolution + (r.group % static_cast<int>(kCspecGroupsPerRing)) *
                                        (resolution / static_cast<int>(kCspecGroupsPerRing));
  return config_.pixel(coordinate(x), coordinate(y));
}

int CaenGeometry::miraclesPosition(int a, int b) const noexcept {
  if (a + b == 0) {
    return -1;
  }
  const int half = static_cast<int>(config_.resolution) / 2;
  const auto pos = static_cast<float>(1.0 * a / (a + b));
  if (a >= b) { // tube A: counted from the far end, rounded
    return static_cast<int>(std::round(half - 1 - (pos - 0.5) * 2 * (half - 1)));
  }
  const float along = pos * 2 * (half - 1); // tube B: single precision, truncated
  return static_cast<int>(along);
}

uint32_t CaenGeometry::miraclesPixel(const CaenReadout &r) const noexcept {
  const int ring = r.fiber / 2U;
  const int half = static_cast<int>(config_.resolution) / 2;
  const int x = 2 * r.group + (ring == 1 || ring == 3 ? 24 : 0) + (r.ampA >= r.ampB ? 0 : 1);
  const int y = (ring == 2 || ring == 3 ? half : 0) + miraclesPosition(r.ampA, r.ampB);
  return config_.pixel(coordinate(x), coordinate(y));
}

uint32_t CaenGeometry::tbl3hePixel(const CaenReadout &r, CaenTally &t) const noexcept {
  const uint32_t ring = r.fiber / 2U;
  const auto bank = static_cast<uint32_t>(config_.tbl3he.bank[ring][r.fen]); // >= 0: valid()
  const uint32_t group = bank * 4 + r.group;
  const double position = 1.0 * r.ampA / (r.ampA + r.ampB);
  if (position < 0.0 || position > 1.0) {
    ++t.positionInvalid;
    return 0;
  }
  const int unit = tubeUnit(group, position, t);
  if (unit < 0) {
    return 0;
  }
  const auto u = static_cast<uint32_t>(unit);
  double corrected =
      calibration_.corrected(group, u, calibration_.withinInterval(group, u, position));
  if (corrected < 0.0) {
    ++t.positionLow;
    corrected = 0.0;
  } else if (corrected > 1.0) {
    ++t.positionHigh;
    corrected = 1.0;
  }
  const int64_t x = truncated(corrected * (kTubePixels - 1)); // NaN: a zero-width interval
  return config_.pixel(coordinate(x), group);
}

} // namespace efu::caen
