// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for the CAEN charge-division instruments: their geometries run backwards.
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
CaenGeometry geometryOf(const nlohmann::json &config, const std::string &configSource,
                        const nlohmann::json &calibration, const std::string &source) {
  CaenConfig c(config, configSource);
  CaenCalibration cal =
      calibration.is_null() ? nullCalibration(c) : CaenCalibration(calibration, source, c.detector);
  return {std::move(c), std::move(cal)};
}
} // namespace

CaenSource::CaenSource(const nlohmann::json &config, const std::string &configSource, uint64_t seed,
                       const nlohmann::json &calibration, const std::string &calibrationSource)
    : geometry_(geometryOf(config, configSource, calibration, calibrationSource)), rng_(seed),
      sum_(lowestSum(this->config()), std::min(lowestSum(this->config()) + 4000, 32767)) {
  if (lowestSum(this->config()) > 32767) {
    throw sdk::ConfigError(configSource + ": Resolution " +
                           std::to_string(this->config().resolution) +
                           " cannot be resolved with 16-bit amplitudes");
  }
  if (this->config().instrument != Instrument::Loki) {
    tableTargets();
  }
}

void CaenSource::aim(uint32_t ring, uint32_t fen, uint32_t group, int64_t x, int64_t y,
                     double position) {
  const uint32_t pixel =
      config().pixel(static_cast<uint32_t>(x), static_cast<uint32_t>(y)); // < 0: outside
  if (pixel != 0 && !targets_[pixel - 1].set) {
    targets_[pixel - 1] = Target{true, static_cast<uint8_t>(ring), static_cast<uint8_t>(fen),
                                 static_cast<uint8_t>(group), position};
  }
}

void CaenSource::tableTargets() {
  const CaenConfig &c = config();
  const CaenCalibration &cal = geometry_.calibration();
  targets_.assign(static_cast<size_t>(c.imageWidth()) * c.imageHeight(), Target{});
  const int64_t res = c.resolution;
  constexpr int64_t kPixels = CaenGeometry::kTubePixels;
  // The position that truncates to pixel k of n along [0, 1]: the middle of its stretch, the
  // very end for the last.
  auto middle = [](int64_t k, int64_t n) { return k + 1 == n ? 1.0 : (k + 0.5) / (n - 1); };
  switch (c.instrument) {
  case Instrument::Loki:
    break;
  case Instrument::Bifrost:
    for (uint32_t ring = 0; ring < 12; ++ring) {
      for (uint32_t g = 0; g <= std::min<uint32_t>(c.maxGroup, 14); ++g) {
        const uint32_t cg = ring * CaenGeometry::kBifrostTripletsPerRing + g;
        for (uint32_t u = 0; cg < cal.groups() && u < cal.unitsPerGroup(); ++u) {
          for (int64_t k = 0; k < kPixels; ++k) {
            aim(ring, 0, g, ring * res + (g % 3) * kPixels + k, (g / 3) * 3 + u,
                cal.fromInterval(cg, u, middle(k, kPixels)));
          }
        }
      }
    }
    break;
  case Instrument::Cspec: {
    const int64_t groups = CaenGeometry::kCspecGroupsPerRing;
    for (uint32_t ring = 0; ring < 12; ++ring) {
      for (uint32_t g = 0; g <= std::min<uint32_t>(c.maxGroup, groups - 1); ++g) {
        for (int64_t y = 0; y < res - 1; ++y) { // y = Resolution - 1 needs B = 0: A at the end
          aim(ring, 0, g, ring * res + g * (res / groups), y, (y + 0.5) / (res - 1));
        }
        aim(ring, 0, g, ring * res + g * (res / groups), res - 1, 1.0);
      }
    }
    break;
  }
  case Instrument::Miracles: {
    const int64_t half = res / 2;
    for (uint32_t ring = 0; ring < 4; ++ring) {
      for (uint32_t g = 0; g < 24; ++g) {
        const int64_t x = 2 * g + (ring % 2 == 1 ? 24 : 0);
        const int64_t y0 = ring >= 2 ? half : 0;
        for (int64_t y = 0; y < half; ++y) {
          aim(ring, 0, g, x, y0 + y, 0.5 + static_cast<double>(half - 1 - y) / (2 * (half - 1)));
          aim(ring, 0, g, x + 1, y0 + y, (y + 0.5) / (2 * (half - 1)));
        }
      }
    }
    break;
  }
  case Instrument::Tbl3he:
    for (const Tbl3heTopology::Entry &e : c.tbl3he.entries) {
      for (uint32_t g = 0; g <= std::min<uint32_t>(c.maxGroup, 3); ++g) {
        const uint32_t cg = e.bank * 4U + g;
        for (uint32_t u = 0; cg < cal.groups() && u < cal.unitsPerGroup(); ++u) {
          for (int64_t k = 0; k < kPixels; ++k) {
            // Bisection for the position in the tube whose correction lands on pixel k.
            const double target = middle(k, kPixels);
            double lo = 0.0, hi = 1.0;
            for (int i = 0; i < 60; ++i) {
              const double mid = 0.5 * (lo + hi);
              (cal.corrected(cg, u, mid) < target ? lo : hi) = mid;
            }
            aim(e.ring, e.fen, g, k, cg, cal.fromInterval(cg, u, 0.5 * (lo + hi)));
          }
        }
      }
    }
    break;
  }
}

bool CaenSource::tubeReadout(const Target &t, uint32_t pixel, int32_t sum,
                             CaenReadout &r) const noexcept {
  r.fiber = static_cast<uint8_t>(2 * t.ring);
  r.fen = t.fen;
  r.group = t.group;
  r.ampC = r.ampD = 0;
  const auto a0 = static_cast<int32_t>(std::lround(t.position * sum));
  for (const int32_t step : {0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6}) {
    const int32_t a = a0 + step;
    if (a < 0 || a > sum) {
      continue;
    }
    r.ampA = static_cast<int16_t>(a);
    r.ampB = static_cast<int16_t>(sum - a);
    CaenTally ignored;
    if (geometry_.valid(r, ignored) && geometry_.pixel(r, ignored) == pixel) {
      return true;
    }
  }
  return false;
}

size_t CaenSource::maxEventBytes() const {
  return sizeof(CaenReadout); // a noise readout is added only where it fits
}

uint32_t CaenSource::decode(uint32_t group, uint32_t unit, double p) const noexcept {
  const double c = std::clamp(geometry_.calibration().corrected(group, unit, p), 0.0, 1.0);
  return static_cast<uint32_t>(std::round(c * (config().resolution - 1)));
}

bool CaenSource::amplitudes(uint32_t group, uint32_t unit, uint32_t x, int32_t sum,
                            std::array<int16_t, 4> &out) const noexcept {
  const CaenCalibration &cal = geometry_.calibration();
  const CaenConfig &cfg = config();
  if (group >= cal.groups() || unit >= cal.unitsPerGroup()) {
    return false;
  }
  // The straw coordinate: the middle of the straw's interval.
  const double s = cal.middle(group, unit);
  int32_t q = -1;
  const auto q0 = static_cast<int32_t>(std::lround(s * sum));
  for (const int32_t step : {0, 1, -1, 2, -2, 3, -3}) {
    const int32_t c = q0 + step;
    if (c >= 0 && c <= sum && cal.unit(group, 1.0 * c / sum) == static_cast<int>(unit)) {
      q = c;
      break;
    }
  }
  if (q < 0) {
    return false;
  }
  // The position: bisection for corrected(p) = x / (Resolution - 1), then the integer A + B
  // next to it that the module rounds to x.
  const double target = static_cast<double>(x) / (cfg.resolution - 1);
  auto f = [&](double p) { return cal.corrected(group, unit, p) - target; };
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
  out = {static_cast<int16_t>(pAmp - b), static_cast<int16_t>(b),
         static_cast<int16_t>(sum - pAmp - q + b), static_cast<int16_t>(q - b)};
  return true;
}

size_t CaenSource::encodeEvent(const sdk::Neutron &n, std::span<uint8_t> out,
                               sdk::TruthSink &truth) {
  const CaenConfig &c = config();
  if (out.size() < sizeof(CaenReadout) || n.x >= c.imageWidth() || n.y >= c.imageHeight()) {
    return 0;
  }
  const uint32_t pixel = c.pixel(n.x, n.y);
  CaenReadout r{};
  if (c.instrument == Instrument::Loki) {
    if (!c.mapped[n.y]) {
      return 0;
    }
    const Channel &ch = c.channels[n.y];
    const uint32_t group = c.loki.globalGroup(ch.ring, ch.fen, ch.group);
    std::array<int16_t, 4> amp{};
    if (!amplitudes(group, ch.unit, n.x, sum_(rng_), amp)) {
      return 0;
    }
    r.fiber = static_cast<uint8_t>(2 * ch.ring);
    r.fen = ch.fen;
    r.group = ch.group;
    r.ampA = amp[0];
    r.ampB = amp[1];
    r.ampC = amp[2];
    r.ampD = amp[3];
  } else {
    const Target &t = targets_[pixel - 1];
    if (!t.set) {
      return 0;
    }
    bool found = tubeReadout(t, pixel, sum_(rng_), r);
    for (int32_t sum = 1000; !found && sum <= 10000; sum += 1000) {
      found = tubeReadout(t, pixel, sum, r);
    }
    if (!found) {
      return 0;
    }
  }
  r.fiber = static_cast<uint8_t>(r.fiber + (n.index & 1U)); // either fiber of the ring
  r.length = sizeof(CaenReadout);
  r.timeHigh = n.eventTime.high;
  r.timeLow = n.eventTime.low;
  std::memcpy(out.data(), &r, sizeof(r));
  ++readouts_;
  truth.add(n.pulseTimeNs, n.eventTimeNs - n.pulseTimeNs, static_cast<int32_t>(pixel));
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
