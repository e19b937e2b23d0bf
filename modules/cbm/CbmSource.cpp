// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for beam monitors.
#include "modules/cbm/CbmSource.h"

#include "modules/cbm/CbmReadout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace efu::cbm {

CbmSource::CbmSource(const nlohmann::json &config, const std::string &configSource, uint64_t seed)
    : config_(parseCbmConfig(config, configSource)) {
  (void)seed; // the readouts are a function of the neutron alone
  if (config_.monitorRing > kMaxFiber / 2 || config_.monitorRing > config_.maxRing) {
    throw sdk::ConfigError(fmt::format(
        "{}: MonitorRing = {}: no valid readout reaches it (fibers go to 23, so rings to 11, and "
        "MaxRing is {})",
        configSource, config_.monitorRing, config_.maxRing));
  }
  for (size_t i = 0; i < config_.monitors.size(); ++i) {
    const Monitor &m = config_.monitors[i];
    if (m.fen > kMaxFen) {
      throw sdk::ConfigError(
          fmt::format("{}: Topology[{}].FEN = {}: readouts carry FENs up to {} only", configSource,
                      i, m.fen, kMaxFen));
    }
    if (m.type == MonitorType::Event2D) {
      bandWidth_ = std::max<uint32_t>(bandWidth_, m.width);
      bandHeight_ = std::max<uint32_t>(bandHeight_, m.height);
    }
  }
  if (static_cast<uint64_t>(bandWidth_) * bandHeight_ * config_.monitors.size() > (1U << 28)) {
    throw sdk::ConfigError(fmt::format("{}: the monitors' image ({} x {} per monitor, {} "
                                       "monitors) is too large for readoutgen",
                                       configSource, bandWidth_, bandHeight_,
                                       config_.monitors.size()));
  }
}

uint8_t CbmSource::detectorType() const {
  return config_.detectorType();
}

size_t CbmSource::maxEventBytes() const {
  return kReadoutBytes;
}

size_t CbmSource::encodeEvent(const sdk::Neutron &n, std::span<uint8_t> out,
                              sdk::TruthSink &truth) {
  const size_t index = n.y / bandHeight_;
  if (index >= config_.monitors.size() || out.size() < kReadoutBytes) {
    return 0;
  }
  const Monitor &m = config_.monitors[index];
  const auto x = static_cast<uint16_t>(n.x);
  const auto y = static_cast<uint16_t>(n.y % bandHeight_);
  if (m.type == MonitorType::Event2D && (x >= m.width || y >= m.height)) {
    return 0;
  }
  CbmReadout r{};
  r.fiber = static_cast<uint8_t>(config_.monitorRing * 2 + (n.index & 1));
  r.fen = m.fen;
  r.length = static_cast<uint16_t>(kReadoutBytes);
  r.timeHigh = n.eventTime.high;
  r.timeLow = n.eventTime.low;
  r.type = static_cast<uint8_t>(m.type);
  r.channel = m.channel;
  r.adc = 0;
  int32_t reported = 0;
  switch (m.type) {
  case MonitorType::Event0D:
    reported = m.pixelOffset;
    break;
  case MonitorType::Event2D:
    r.setPosition(x, y);
    reported = static_cast<int32_t>(pixel2D(m, x, y));
    break;
  case MonitorType::Ibm: {
    const uint32_t adc = 1 + static_cast<uint32_t>((n.index * 2654435761ULL) % 100000);
    r.setNadc(adc, static_cast<uint8_t>(n.index % 4));
    reported = static_cast<int32_t>(ibmValue(r, config_.normalizeIbm));
    break;
  }
  }
  std::memcpy(out.data(), &r, kReadoutBytes);
  ++readouts_;
  const int64_t tof = n.eventTimeNs - n.pulseTimeNs;
  if (tof >= 0 && tof <= config_.maxTofNs) {
    truth.addFrom(m.source, n.pulseTimeNs, tof, reported);
  }
  return kReadoutBytes;
}

} // namespace efu::cbm
