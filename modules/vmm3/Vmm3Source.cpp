// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for the ESS Multi-Blade detectors.
#include "modules/vmm3/Vmm3Source.h"

#include "common/readout/Vmm3Readout.h"
#include "modules/vmm3/Vmm3Geometry.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace efu::vmm3 {

namespace {

/// Coordinate offsets around the neutron's and their charge weights, per hit count 1..3.
struct Shape {
  int count;
  int offset[Vmm3Source::kMaxHitsPerPlane];
  uint16_t weight[Vmm3Source::kMaxHitsPerPlane];
};
constexpr Shape kShapes[] = {
    {1, {0}, {1}},
    {2, {0, 1}, {2, 1}},
    {3, {-1, 0, 1}, {1, 2, 1}},
};
constexpr uint16_t kMaxUnit = kMaxAdc / 2; // the largest weight is 2
constexpr int kUnitDraws = 16;
constexpr int64_t kMaxTofNs = 1'000'000'000; // the ESS EFU's for these detectors

} // namespace

Vmm3Source::Vmm3Source(const nlohmann::json &config, const std::string &configSource, uint64_t seed,
                       const nlohmann::json &calibration, const std::string &calibrationSource)
    : config_(parseVmm3Config(config, configSource)),
      calibration_(calibration.is_null()
                       ? Vmm3Calibration(config_)
                       : Vmm3Calibration(calibration, calibrationSource, config_, configSource)),
      cassetteHybrid_(256, -1),
      lastNs_(config_.hybrids.size(), std::numeric_limits<int64_t>::min() / 2), rng_(seed) {
  for (size_t i = config_.hybrids.size(); i-- > 0;) {
    cassetteHybrid_[config_.hybrids[i].cassette] = static_cast<int16_t>(i);
  }
}

int64_t Vmm3Source::gapNs() const noexcept {
  // Both gaps, plus room for the TDC model's spread and the 256-ns rounding of hit times.
  return int64_t{config_.clusteringTimeGapNs} + config_.matchingTimeGapNs + 1000;
}

int Vmm3Source::planPlane(size_t hybrid, bool x, uint32_t coord, PlannedHit *hits, uint64_t tickNs,
                          uint64_t &earliestNs) {
  const Hybrid &h = config_.hybrids[hybrid];
  // The VMM of the hybrid that reads this plane.
  const auto vmm = static_cast<uint8_t>(2 * h.hybrid + (config_.isX(2 * h.hybrid) == x ? 0 : 1));
  const bool wire = config_.isWire(vmm);
  const uint16_t offset = x ? h.xOffset : h.yOffset;
  const Shape &shape = kShapes[std::uniform_int_distribution<int>(0, 2)(rng_)];
  const int32_t lowest = std::max<int32_t>(1, h.threshold[vmm & 1]);
  for (int draw = 0; draw < kUnitDraws; ++draw) {
    const auto unit = static_cast<uint16_t>(std::uniform_int_distribution<int>(1, kMaxUnit)(rng_));
    int count = 0;
    bool ok = true;
    for (int i = 0; i < shape.count && ok; ++i) {
      const int64_t c = static_cast<int64_t>(coord) + shape.offset[i];
      const int channel =
          c < offset ? -1 : channelOf(config_.layout, wire, offset, static_cast<uint32_t>(c));
      if (channel < 0) {
        continue; // outside the cassette
      }
      PlannedHit &p = hits[count++];
      p.vmm = vmm;
      p.channel = static_cast<uint8_t>(channel);
      const Vmm3Calibration::Channel &cal = calibration_.channel(hybrid, vmm, p.channel);
      const int32_t raw =
          Vmm3Calibration::rawAdc(cal, static_cast<uint16_t>(unit * shape.weight[i]));
      ok = raw >= lowest;
      p.adc = static_cast<uint16_t>(raw);
      if (ok) {
        earliestNs = std::min(earliestNs, Vmm3Calibration::timeNs(cal, tickNs, 0));
      }
    }
    if (ok) {
      return count;
    }
  }
  return -1;
}

size_t Vmm3Source::encodeEvent(const sdk::Neutron &n, std::span<uint8_t> out,
                               sdk::TruthSink &truth) {
  if (out.size() < maxEventBytes()) {
    return 0;
  }
  const int16_t found = cassetteHybrid_[cassetteOf(config_, n.x, n.y)];
  if (found < 0 || n.eventTimeNs - lastNs_[found] <= gapNs()) {
    return 0;
  }
  const auto hybrid = static_cast<size_t>(found);
  const auto tickNs = static_cast<uint64_t>(n.eventTimeNs);
  std::array<PlannedHit, 2 * kMaxHitsPerPlane> hits;
  uint64_t earliest = std::numeric_limits<uint64_t>::max();
  const int nx = planPlane(hybrid, true, n.x, hits.data(), tickNs, earliest);
  const int ny = nx < 0 ? -1 : planPlane(hybrid, false, n.y, hits.data() + nx, tickNs, earliest);
  // The module measures the TOF from the earliest hit time rounded to the nearest tick, as the
  // ESS EFU does.
  const int64_t tof = readout::eventTimeNs(earliest) - n.pulseTimeNs;
  if (ny < 0 || tof < 0 || tof > kMaxTofNs) {
    return 0;
  }
  lastNs_[hybrid] = n.eventTimeNs;
  const Hybrid &h = config_.hybrids[hybrid];
  const int count = nx + ny;
  for (int i = 0; i < count; ++i) {
    Vmm3Readout r{};
    r.fiber = static_cast<uint8_t>(2 * h.ring);
    r.fen = h.fen;
    r.length = kReadoutBytes;
    r.timeHigh = n.eventTime.high;
    r.timeLow = n.eventTime.low;
    r.otadc = hits[i].adc;
    r.vmm = hits[i].vmm;
    r.channel = hits[i].channel;
    std::memcpy(out.data() + i * kReadoutBytes, &r, kReadoutBytes);
  }
  readouts_ += static_cast<uint64_t>(count);
  truth.add(n.pulseTimeNs, tof, static_cast<int32_t>(config_.pixel(n.x, n.y)));
  return static_cast<size_t>(count) * kReadoutBytes;
}

} // namespace efu::vmm3
