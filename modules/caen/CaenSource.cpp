// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for CAEN charge-division tubes.
#include "modules/caen/CaenSource.h"
#include "modules/caen/CaenReadout.h"

#include <algorithm>
#include <cstring>

namespace efu::caen {
namespace {
int32_t lowestSum(const caen::CaenConfig &c) {
  return std::max({c.amplitudeThreshold, static_cast<int32_t>(2 * c.pixelsPerTube), 1000});
}
} // namespace

CaenSource::CaenSource(const nlohmann::json &config, const std::string &configSource,
                       uint64_t seed, const nlohmann::json &calibration,
                       const std::string &calibrationSource)
    : config_(config, configSource),
      rng_(seed), sum_(lowestSum(config_), std::min(lowestSum(config_) + 4000, 32767)) {
  if (lowestSum(config_) > 32767) {
    throw sdk::ConfigError(configSource + ": amplitude_threshold " +
                           std::to_string(config_.amplitudeThreshold) +
                           " cannot be reached with 16-bit amplitudes");
  }
  if (!calibration.is_null()) {
    calibration_.emplace(calibration, calibrationSource, config_);
  }
}

size_t CaenSource::maxEventBytes() const {
  return sizeof(caen::CaenReadout); // a noise readout is added only where it fits
}

size_t CaenSource::encodeEvent(const sdk::Neutron &n, std::span<uint8_t> out, sdk::TruthSink &truth) {
  if (out.size() < sizeof(caen::CaenReadout) || n.y >= config_.tubes() || !config_.mapped[n.y] ||
      n.x >= config_.pixelsPerTube) {
    return 0;
  }
  const caen::Channel &ch = config_.channels[n.y];
  const int32_t sum = sum_(rng_);
  const int32_t b = calibration_ ? calibration_->amplitudeB(n.y, n.x, sum)
                                 : caen::amplitudeBForPosition(n.x, sum, config_.pixelsPerTube);
  if (b < 0) {
    return 0;
  }
  caen::CaenReadout r{};
  r.fiber = ch.fiber;
  r.fen = ch.fen;
  r.length = sizeof(caen::CaenReadout);
  r.timeHigh = n.eventTime.high;
  r.timeLow = n.eventTime.low;
  r.group = ch.group;
  r.ampA = static_cast<int16_t>(sum - b);
  r.ampB = static_cast<int16_t>(b);
  std::memcpy(out.data(), &r, sizeof(r));
  ++readouts_;
  truth.add(n.pulseTimeNs, n.eventTimeNs - n.pulseTimeNs, config_.pixel(n.y, n.x));
  size_t bytes = sizeof(r);
  // Electronics noise: every kNoiseEvery-th neutron is followed by a readout on the same tube
  // whose amplitude sum is below the threshold; the module must reject it (counted).
  if (config_.amplitudeThreshold > 1 && n.index % kNoiseEvery == kNoiseEvery - 1 &&
      out.size() >= 2 * sizeof(r)) {
    const int32_t noiseSum = config_.amplitudeThreshold / 2;
    r.ampA = static_cast<int16_t>(noiseSum - noiseSum / 3);
    r.ampB = static_cast<int16_t>(noiseSum / 3);
    std::memcpy(out.data() + bytes, &r, sizeof(r));
    ++readouts_;
    bytes += sizeof(r);
  }
  return bytes;
}

} // namespace efu::caen
