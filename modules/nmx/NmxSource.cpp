// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for ESS NMX.
#include "modules/nmx/NmxSource.h"

#include "modules/nmx/NmxGeometry.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace efu::nmx {

namespace {

constexpr int64_t kMaxTofNs = 1'000'000'000; // the ESS EFU's for NMX

/// The ESS time `ticks` ticks after `t`.
readout::EssTime later(readout::EssTime t, uint32_t ticks) {
  t.low += ticks;
  if (t.low > readout::kMaxTicksLow) {
    t.low -= static_cast<uint32_t>(readout::kTicksPerSecond);
    ++t.high;
  }
  return t;
}

} // namespace

NmxSource::NmxSource(const nlohmann::json &config, const std::string &configSource, uint64_t seed)
    : config_(parseNmxConfig(config, configSource)),
      lastNs_(config_.builders(), std::numeric_limits<int64_t>::min() / 2), rng_(seed) {
  for (const Hybrid &h : config_.hybrids) {
    span_ = std::max(span_, uint32_t{h.offset} + 2 * kStrips);
  }
  readers_.assign(config_.builders() * 2 * span_, -1);
  for (size_t i = 0; i < config_.hybrids.size(); ++i) {
    const Hybrid &h = config_.hybrids[i];
    for (uint32_t c = h.offset; c < uint32_t{h.offset} + 2 * kStrips; ++c) {
      readers_[(h.panel * 2 + h.plane) * size_t{span_} + c] = static_cast<int16_t>(i);
    }
  }
}

int16_t NmxSource::reader(size_t panel, int plane, uint32_t coord) const noexcept {
  return coord < span_ ? readers_[(panel * 2 + static_cast<size_t>(plane)) * span_ + coord] : -1;
}

int64_t NmxSource::gapNs() const noexcept {
  // Both gaps, plus room for the hits' spread of two ticks.
  return int64_t{config_.clusteringTimeGapNs} + config_.matchingTimeGapNs + 1000;
}

size_t NmxSource::encodeEvent(const sdk::Neutron &n, std::span<uint8_t> out,
                              sdk::TruthSink &truth) {
  if (out.size() < maxEventBytes()) {
    return 0;
  }
  size_t panel = 0;
  while (panel < config_.builders() && (reader(panel, 0, n.x) < 0 || reader(panel, 1, n.y) < 0)) {
    ++panel;
  }
  if (panel == config_.builders() || n.eventTimeNs - lastNs_[panel] <= gapNs() ||
      config_.minAdc > vmm3::kMaxAdc) {
    return 0;
  }
  struct Planned {
    int16_t hybrid;
    uint32_t coord;
    uint32_t delay; ///< ticks after the neutron's
  };
  std::array<Planned, 2 * kMaxHitsPerPlane> hits{};
  int count = 0;
  uint32_t latest = 0;
  for (int plane = 0; plane < 2; ++plane) {
    const uint32_t centre = plane == 0 ? n.x : n.y;
    hits[count++] = Planned{reader(panel, plane, centre), centre, 0};
    const int extra = std::uniform_int_distribution<int>(0, 2)(rng_);
    for (int k = 0; k < extra; ++k) {
      // Left or right neighbour, at most one each, later than the centre.
      const int64_t c = static_cast<int64_t>(centre) + (k == 0 ? -1 : 1);
      const int16_t r = c < 0 ? int16_t{-1} : reader(panel, plane, static_cast<uint32_t>(c));
      if (r < 0) {
        continue;
      }
      const auto delay = static_cast<uint32_t>(std::uniform_int_distribution<int>(1, 2)(rng_));
      latest = std::max(latest, delay);
      hits[count++] = Planned{r, static_cast<uint32_t>(c), delay};
    }
  }
  const readout::EssTime last = later(n.eventTime, latest);
  const int64_t tof =
      readout::eventTimeNs(static_cast<uint64_t>(readout::ticksToNs(last.high, last.low))) -
      n.pulseTimeNs;
  if (tof < 0 || tof > kMaxTofNs) {
    return 0;
  }
  lastNs_[panel] = n.eventTimeNs;
  const uint16_t lowest = std::max<uint16_t>(config_.minAdc, 1);
  for (int i = 0; i < count; ++i) {
    const Hybrid &h = config_.hybrids[static_cast<size_t>(hits[i].hybrid)];
    uint8_t asic = 0;
    uint8_t channel = 0;
    (void)channelOf(h, hits[i].coord, asic, channel);
    const readout::EssTime t = later(n.eventTime, hits[i].delay);
    vmm3::Vmm3Readout r{};
    r.fiber = static_cast<uint8_t>(2 * h.ring);
    r.fen = h.fen;
    r.length = vmm3::kReadoutBytes;
    r.timeHigh = t.high;
    r.timeLow = t.low;
    r.otadc =
        static_cast<uint16_t>(std::uniform_int_distribution<int>(lowest, vmm3::kMaxAdc)(rng_));
    r.vmm = static_cast<uint8_t>(2 * h.hybrid + asic);
    r.channel = channel;
    std::memcpy(out.data() + static_cast<size_t>(i) * vmm3::kReadoutBytes, &r, vmm3::kReadoutBytes);
  }
  readouts_ += static_cast<uint64_t>(count);
  truth.add(n.pulseTimeNs, tof, static_cast<int32_t>(config_.pixel(n.x, n.y)));
  return static_cast<size_t>(count) * vmm3::kReadoutBytes;
}

} // namespace efu::nmx
