// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for CAEN charge-division straws: the LoKI geometry run backwards.
#include "modules/caen/CaenSource.h"
#include "modules/caen/CaenReadout.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace efu::caen {
namespace {
int32_t lowestSum(const CaenConfig &c) {
  return std::max<int32_t>(1000, static_cast<int32_t>(2 * c.resolution));
}
CaenCalibration calibrationOf(const nlohmann::json &calibration, const std::string &source,
                              const CaenConfig &config) {
  return calibration.is_null() ? CaenCalibration::null(config.loki.totalGroups)
                               : CaenCalibration(calibration, source, config.detector);
}
} // namespace

CaenSource::CaenSource(const nlohmann::json &config, const std::string &configSource,
                       uint64_t seed, const nlohmann::json &calibration,
                       const std::string &calibrationSource)
    : config_(config, configSource),
      calibration_(calibrationOf(calibration, calibrationSource, config_)), rng_(seed),
      sum_(lowestSum(config_), std::min(lowestSum(config_) + 4000, 32767)) {
  if (lowestSum(config_) > 32767) {
    throw sdk::ConfigError(configSource + ": Resolution " + std::to_string(config_.resolution) +
                           " cannot be resolved with 16-bit amplitudes");
  }
}

size_t CaenSource::maxEventBytes() const {
  return sizeof(CaenReadout); // a noise readout is added only where it fits
}

uint32_t CaenSource::decode(uint32_t group, uint32_t unit, double p) const noexcept {
  const double c = std::clamp(calibration_.corrected(group, unit, p), 0.0, 1.0);
  return static_cast<uint32_t>(std::round(c * (config_.resolution - 1)));
}

bool CaenSource::amplitudes(uint32_t group, uint32_t unit, uint32_t x, int32_t sum,
                            std::array<int16_t, 4> &out) const noexcept {
  if (group >= calibration_.groups() || unit >= calibration_.unitsPerGroup()) {
    return false;
  }
  // The straw coordinate: the middle of the straw's interval.
  const double s = calibration_.middle(group, unit);
  int32_t q = -1;
  const auto q0 = static_cast<int32_t>(std::lround(s * sum));
  for (const int32_t step : {0, 1, -1, 2, -2, 3, -3}) {
    const int32_t c = q0 + step;
    if (c >= 0 && c <= sum && calibration_.unit(group, 1.0 * c / sum) == static_cast<int>(unit)) {
      q = c;
      break;
    }
  }
  if (q < 0) {
    return false;
  }
  // The position: bisection for corrected(p) = x / (Resolution - 1), then the integer A + B
  // next to it that the module rounds to x.
  const double target = static_cast<double>(x) / (config_.resolution - 1);
  auto f = [&](double p) { return calibration_.corrected(group, unit, p) - target; };
  double lo = 0.0, hi = 1.0;
  if (f(lo) > 0) {
    hi = lo;
  } else if (f(hi) < 0) {
    lo = hi;
  }
  for (int i = 0; i < 60 && lo < hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) < 0 ? lo : hi) = mid;
  }
  int32_t pAmp = -1;
  const auto p0 = static_cast<int32_t>(std::lround(0.5 * (lo + hi) * sum));
  for (const int32_t step : {0, 1, -1, 2, -2, 3, -3}) {
    const int32_t c = p0 + step;
    if (c >= 0 && c <= sum && decode(group, unit, 1.0 * c / sum) == x) {
      pAmp = c;
      break;
    }
  }
  if (pAmp < 0) {
    return false;
  }
  // A + B = pAmp, B + D = q, A + B + C + D = sum, all >= 0.
  const int32_t b = std::max(0, pAmp + q - sum);
  out = {static_cast<int16_t>(pAmp - b), static_cast<int16_t>(b), static_cast<int16_t>(sum - pAmp - q + b),
         static_cast<int16_t>(q - b)};
  return true;
}

size_t CaenSource::encodeEvent(const sdk::Neutron &n, std::span<uint8_t> out,
                               sdk::TruthSink &truth) {
  if (out.size() < sizeof(CaenReadout) || n.y >= config_.imageHeight() || !config_.mapped[n.y] ||
      n.x >= config_.resolution) {
    return 0;
  }
  const Channel &ch = config_.channels[n.y];
  const uint32_t group = config_.loki.globalGroup(ch.ring, ch.fen, ch.group);
  std::array<int16_t, 4> amp{};
  if (!amplitudes(group, ch.unit, n.x, sum_(rng_), amp)) {
    return 0;
  }
  CaenReadout r{};
  r.fiber = static_cast<uint8_t>(2 * ch.ring + (n.index & 1U)); // either fiber of the ring
  r.fen = ch.fen;
  r.length = sizeof(CaenReadout);
  r.timeHigh = n.eventTime.high;
  r.timeLow = n.eventTime.low;
  r.group = ch.group;
  r.ampA = amp[0];
  r.ampB = amp[1];
  r.ampC = amp[2];
  r.ampD = amp[3];
  std::memcpy(out.data(), &r, sizeof(r));
  ++readouts_;
  truth.add(n.pulseTimeNs, n.eventTimeNs - n.pulseTimeNs,
            static_cast<int32_t>(config_.pixel(n.x, n.y)));
  size_t bytes = sizeof(r);
  // Electronics noise: every kNoiseEvery-th neutron is followed by a readout on the same straw
  // with no charge; the module must reject it (counted).
  if (n.index % kNoiseEvery == kNoiseEvery - 1 && out.size() >= 2 * sizeof(r)) {
    r.ampA = r.ampB = r.ampC = r.ampD = 0;
    std::memcpy(out.data() + bytes, &r, sizeof(r));
    ++readouts_;
    bytes += sizeof(r);
  }
  return bytes;
}

} // namespace efu::caen
