// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for VMM3 strip detectors.
#include "modules/vmm3/Vmm3Source.h"
#include "modules/vmm3/Vmm3Readout.h"

#include <algorithm>
#include <cstring>

namespace efu::vmm3 {
namespace {

constexpr int kMaxWidth = 5;
constexpr uint16_t kMaxUnit = vmm3::kMaxAdc / 3; // the largest weight is 3
constexpr int64_t kMaxSpreadNs = 5;

/// Strip offsets (relative to the neutron's strip) and weights per cluster width 2..5.
struct Shape {
  int count;
  int offset[kMaxWidth];
  uint16_t weight[kMaxWidth];
};
constexpr Shape kShapes[] = {
    {2, {0, 1}, {2, 1}},
    {3, {-1, 0, 1}, {1, 2, 1}},
    {4, {-1, 0, 1, 2}, {1, 3, 2, 1}},
    {5, {-2, -1, 0, 1, 2}, {1, 2, 3, 2, 1}},
};

} // namespace

Vmm3Source::Vmm3Source(const nlohmann::json &config, const std::string &configSource, uint64_t seed,
                       const nlohmann::json &calibration, const std::string &calibrationSource)
    : config_(vmm3::parseVmm3Config(config, configSource)), rng_(seed) {
  if (config_.adcThreshold >= kMaxUnit) {
    throw sdk::ConfigError(configSource + ": adc_threshold " +
                           std::to_string(config_.adcThreshold) +
                           " leaves readoutgen no room to "
                           "share a charge over 5 strips (it must be below " +
                           std::to_string(kMaxUnit) + ")");
  }
  if (!calibration.is_null()) {
    calibration_.emplace(calibration, calibrationSource, config_, configSource);
  }
  strips_[0].resize(config_.nx);
  strips_[1].resize(config_.ny);
  for (size_t index = 0; index < config_.hybrids.size(); ++index) {
    const vmm3::Hybrid &h = config_.hybrids[index];
    for (uint32_t i = 0; i < 2U * vmm3::kChannelsPerVmm; ++i) {
      StripAddress &a = strips_[static_cast<size_t>(h.plane)][h.stripOffset + i];
      a = StripAddress{true, h.fiber, h.fen,
                       static_cast<uint8_t>(2 * h.vmmPair + i / vmm3::kChannelsPerVmm),
                       static_cast<uint8_t>(i % vmm3::kChannelsPerVmm),
                       static_cast<uint16_t>(index)};
      covered_.emplace_back(h.plane, h.stripOffset + i);
    }
  }
}

size_t Vmm3Source::maxEventBytes() const {
  return (2 * kMaxWidth + 1) * sizeof(vmm3::Vmm3Readout);
}

void Vmm3Source::writeHit(const PlannedHit &h, uint8_t *out) {
  vmm3::Vmm3Readout r{};
  r.fiber = h.address->fiber;
  r.fen = h.address->fen;
  r.length = vmm3::kReadoutBytes;
  r.timeHigh = h.time.high;
  r.timeLow = h.time.low;
  r.bc = h.bc;
  r.otadc = h.adc;
  r.tdc = h.tdc;
  r.vmm = h.address->vmm;
  r.channel = h.address->channel;
  std::memcpy(out, &r, sizeof(r));
  ++readouts_;
}

int32_t Vmm3Source::rawAdc(const StripAddress &a, uint16_t adc) const noexcept {
  return calibration_ ? vmm3::Vmm3Calibration::rawAdc(
                            calibration_->channel(a.hybrid, a.vmm, a.channel), adc)
                      : adc;
}

bool Vmm3Source::placeHit(const StripAddress &a, const sdk::Neutron &n, int64_t delayNs,
                          PlannedHit &hit) const noexcept {
  hit.time = n.eventTime;
  hit.bc = 0;
  hit.tdc = 0;
  if (!config_.fineTime) {
    return true; // every hit on the neutron's tick
  }
  if (!calibration_) {
    // The smallest TDC whose fine time (floor, as the module computes it) is delayNs.
    const int64_t lsbDen = 1'000'000'000;
    const int64_t num = delayNs * config_.bcClockHz * 256;
    hit.tdc = static_cast<uint8_t>((num + lsbDen - 1) / lsbDen);
    return true;
  }
  // Search tick (the neutron's, or up to the largest correction earlier), TDC and BC so that
  // time(tick) + fine time(BC, TDC) + correction(TDC) is the wanted time.
  const vmm3::Vmm3Calibration::Channel &c = calibration_->channel(a.hybrid, a.vmm, a.channel);
  const double bcNs = 1e9 / static_cast<double>(config_.bcClockHz);
  constexpr int64_t kMaxTicksBack = static_cast<int64_t>(
      vmm3::Vmm3Calibration::kMaxTimeCorrectionNs * readout::kTicksPerSecond / 1e9 + 2);
  for (int64_t back = 0; back <= kMaxTicksBack; ++back) {
    readout::EssTime t = n.eventTime;
    if (t.low >= back) {
      t.low -= static_cast<uint32_t>(back);
    } else {
      t.high -= 1;
      t.low += static_cast<uint32_t>(readout::kTicksPerSecond - back);
    }
    const int64_t need = n.eventTimeNs + delayNs - readout::ticksToNs(t.high, t.low);
    for (int tdc = 0; tdc <= 255; ++tdc) {
      const int64_t fine = need - calibration_->timeCorrectionNs(c, static_cast<uint8_t>(tdc));
      if (fine < 0) {
        continue;
      }
      const auto bc0 = static_cast<int64_t>(static_cast<double>(fine) / bcNs);
      for (int64_t bc = std::max<int64_t>(0, bc0 - 1); bc <= std::min<int64_t>(vmm3::kMaxBc, bc0 + 1);
           ++bc) {
        if (config_.fineTimeNs(static_cast<uint16_t>(bc), static_cast<uint8_t>(tdc)) == fine) {
          hit.time = t;
          hit.bc = static_cast<uint16_t>(bc);
          hit.tdc = static_cast<uint8_t>(tdc);
          return true;
        }
      }
    }
  }
  return false;
}

int Vmm3Source::planPlane(vmm3::Plane plane, uint32_t centre, const sdk::Neutron &n,
                          PlannedHit *hits) {
  const auto &strips = strips_[static_cast<size_t>(plane)];
  const Shape &shape = kShapes[std::uniform_int_distribution<int>(0, 3)(rng_)];
  std::uniform_int_distribution<int> units(config_.adcThreshold + 1, kMaxUnit);
  std::uniform_int_distribution<int64_t> spread(1, kMaxSpreadNs);
  for (int draw = 0; draw < kUnitDraws; ++draw) {
    const auto unit = static_cast<uint16_t>(units(rng_));
    int count = 0;
    bool ok = true;
    for (int i = 0; i < shape.count && ok; ++i) {
      const int64_t strip = static_cast<int64_t>(centre) + shape.offset[i];
      if (strip < 0 || strip >= static_cast<int64_t>(strips.size()) || !strips[strip].covered) {
        continue;
      }
      // The neutron's own strip carries its time; the others follow within a few ns.
      const int64_t delayNs = shape.offset[i] == 0 ? 0 : spread(rng_);
      PlannedHit &h = hits[count];
      h.address = &strips[strip];
      const int32_t raw = rawAdc(*h.address, static_cast<uint16_t>(unit * shape.weight[i]));
      ok = raw >= 0 && placeHit(*h.address, n, delayNs, h);
      h.adc = static_cast<uint16_t>(raw);
      ++count;
    }
    if (ok) {
      return count;
    }
  }
  return -1;
}

size_t Vmm3Source::encodeEvent(const sdk::Neutron &n, std::span<uint8_t> out, sdk::TruthSink &truth) {
  if (out.size() < maxEventBytes() || n.x >= config_.nx || n.y >= config_.ny ||
      !strips_[0][n.x].covered || !strips_[1][n.y].covered) {
    return 0;
  }
  std::array<PlannedHit, 2 * kMaxWidth + 1> hits;
  const int nx = planPlane(vmm3::Plane::X, n.x, n, hits.data());
  const int ny = nx < 0 ? -1 : planPlane(vmm3::Plane::Y, n.y, n, hits.data() + nx);
  if (ny < 0) {
    return 0;
  }
  int count = nx + ny;
  if (config_.adcThreshold > 0) {
    const auto &[plane, strip] =
        covered_[std::uniform_int_distribution<size_t>(0, covered_.size() - 1)(rng_)];
    PlannedHit &noise = hits[count];
    noise = PlannedHit{&strips_[static_cast<size_t>(plane)][strip], n.eventTime, 0, 0, 0};
    const int32_t raw = rawAdc(*noise.address, static_cast<uint16_t>(std::uniform_int_distribution<int>(
                                                    0, config_.adcThreshold - 1)(rng_)));
    if (raw >= 0) {
      noise.adc = static_cast<uint16_t>(raw);
      ++count;
    }
  }
  for (int i = 0; i < count; ++i) {
    writeHit(hits[i], out.data() + i * sizeof(vmm3::Vmm3Readout));
  }
  truth.add(n.pulseTimeNs, n.eventTimeNs - n.pulseTimeNs,
            static_cast<int32_t>(n.y * config_.nx + n.x + 1));
  return count * sizeof(vmm3::Vmm3Readout);
}

} // namespace efu::vmm3
