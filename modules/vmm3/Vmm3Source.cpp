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

Vmm3Source::Vmm3Source(const nlohmann::json &config, const std::string &configSource, uint64_t seed)
    : config_(vmm3::parseVmm3Config(config, configSource)), rng_(seed) {
  if (config_.adcThreshold >= kMaxUnit) {
    throw sdk::ConfigError(configSource + ": adc_threshold " +
                           std::to_string(config_.adcThreshold) +
                           " leaves readoutgen no room to "
                           "share a charge over 5 strips (it must be below " +
                           std::to_string(kMaxUnit) + ")");
  }
  strips_[0].resize(config_.nx);
  strips_[1].resize(config_.ny);
  for (const vmm3::Hybrid &h : config_.hybrids) {
    for (uint32_t i = 0; i < 2U * vmm3::kChannelsPerVmm; ++i) {
      StripAddress &a = strips_[static_cast<size_t>(h.plane)][h.stripOffset + i];
      a = StripAddress{true, h.fiber, h.fen,
                       static_cast<uint8_t>(2 * h.vmmPair + i / vmm3::kChannelsPerVmm),
                       static_cast<uint8_t>(i % vmm3::kChannelsPerVmm)};
      covered_.emplace_back(h.plane, h.stripOffset + i);
    }
  }
}

size_t Vmm3Source::maxEventBytes() const {
  return (2 * kMaxWidth + 1) * sizeof(vmm3::Vmm3Readout);
}

void Vmm3Source::writeHit(const StripAddress &a, const readout::EssTime &t, uint16_t adc,
                          uint8_t tdc, uint8_t *out) {
  vmm3::Vmm3Readout r{};
  r.fiber = a.fiber;
  r.fen = a.fen;
  r.length = vmm3::kReadoutBytes;
  r.timeHigh = t.high;
  r.timeLow = t.low;
  r.bc = 0;
  r.otadc = adc;
  r.tdc = tdc;
  r.vmm = a.vmm;
  r.channel = a.channel;
  std::memcpy(out, &r, sizeof(r));
  ++readouts_;
}

size_t Vmm3Source::writePlane(vmm3::Plane plane, uint32_t centre, const sdk::Neutron &n, uint8_t *out) {
  const auto &strips = strips_[static_cast<size_t>(plane)];
  const Shape &shape = kShapes[std::uniform_int_distribution<int>(0, 3)(rng_)];
  const auto unit = static_cast<uint16_t>(
      std::uniform_int_distribution<int>(config_.adcThreshold + 1, kMaxUnit)(rng_));
  std::uniform_int_distribution<int64_t> spread(1, kMaxSpreadNs);
  size_t bytes = 0;
  for (int i = 0; i < shape.count; ++i) {
    const int64_t strip = static_cast<int64_t>(centre) + shape.offset[i];
    if (strip < 0 || strip >= static_cast<int64_t>(strips.size()) || !strips[strip].covered) {
      continue;
    }
    // The neutron's own strip carries its time; the others follow within a few ns.
    const int64_t delayNs = shape.offset[i] == 0 ? 0 : spread(rng_);
    uint8_t tdc = 0;
    if (config_.fineTime) {
      // The smallest TDC whose fine time (floor, as the module computes it) is delayNs.
      const int64_t lsbDen = 1'000'000'000;
      const int64_t num = delayNs * config_.bcClockHz * 256;
      tdc = static_cast<uint8_t>((num + lsbDen - 1) / lsbDen);
    }
    writeHit(strips[strip], n.eventTime, static_cast<uint16_t>(unit * shape.weight[i]), tdc,
             out + bytes);
    bytes += sizeof(vmm3::Vmm3Readout);
  }
  return bytes;
}

size_t Vmm3Source::encodeEvent(const sdk::Neutron &n, std::span<uint8_t> out, sdk::TruthSink &truth) {
  if (out.size() < maxEventBytes() || n.x >= config_.nx || n.y >= config_.ny ||
      !strips_[0][n.x].covered || !strips_[1][n.y].covered) {
    return 0;
  }
  size_t bytes = writePlane(vmm3::Plane::X, n.x, n, out.data());
  bytes += writePlane(vmm3::Plane::Y, n.y, n, out.data() + bytes);
  if (config_.adcThreshold > 0) {
    const auto &[plane, strip] =
        covered_[std::uniform_int_distribution<size_t>(0, covered_.size() - 1)(rng_)];
    const auto adc = static_cast<uint16_t>(
        std::uniform_int_distribution<int>(0, config_.adcThreshold - 1)(rng_));
    writeHit(strips_[static_cast<size_t>(plane)][strip], n.eventTime, adc, 0, out.data() + bytes);
    bytes += sizeof(vmm3::Vmm3Readout);
  }
  truth.add(n.pulseTimeNs, n.eventTimeNs - n.pulseTimeNs,
            static_cast<int32_t>(n.y * config_.nx + n.x + 1));
  return bytes;
}

} // namespace efu::vmm3
