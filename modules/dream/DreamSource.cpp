// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for CDT readouts.
#include "modules/dream/DreamSource.h"

#include "modules/dream/DreamGeometry.h"

#include <algorithm>
#include <cstring>

namespace efu::dream {

namespace {

/// The units a part reads out: first unit and how many.
std::pair<uint8_t, uint8_t> unitsOf(PartType t) noexcept {
  switch (t) {
  case PartType::BwEndCap:
  case PartType::FwEndCap:
    return {3, 4};
  case PartType::HR:
  case PartType::SANS:
    return {0, 2};
  default:
    return {0, 1};
  }
}

} // namespace

DreamSource::DreamSource(const nlohmann::json &config, const std::string &configSource,
                         uint64_t seed)
    : config_(parseDreamConfig(config, configSource)) {
  (void)seed; // the readouts are a function of the neutron alone
  for (const uint8_t slot : config_.slotsInOrder) {
    const auto [first, count] = unitsOf(config_.parts[slot].type);
    blocks_.push_back({rows_, slot, first});
    rows_ += uint32_t{count} * 256;
  }
}

uint8_t DreamSource::detectorType() const {
  return dream::detectorType(config_.instrument);
}

size_t DreamSource::maxEventBytes() const {
  return kReadoutBytes;
}

size_t DreamSource::encodeEvent(const sdk::Neutron &n, std::span<uint8_t> out,
                                sdk::TruthSink &truth) {
  if (n.y >= rows_ || n.x > 255 || out.size() < kReadoutBytes) {
    return 0;
  }
  const auto block =
      std::prev(std::upper_bound(blocks_.begin(), blocks_.end(), n.y,
                                 [](uint32_t y, const Block &b) { return y < b.firstRow; }));
  const uint32_t within = n.y - block->firstRow;
  CdtReadout r;
  r.fiber = static_cast<uint8_t>(block->slot / (kMaxFen + 1) * 2 + (n.index & 1));
  r.fen = static_cast<uint8_t>(block->slot % (kMaxFen + 1));
  r.length = static_cast<uint16_t>(kReadoutBytes);
  r.timeHigh = n.eventTime.high;
  r.timeLow = n.eventTime.low;
  r.unit = static_cast<uint8_t>(block->firstUnit + within / 256);
  r.anode = static_cast<uint8_t>(within % 256);
  r.cathode = static_cast<uint8_t>(n.x);
  if (validate(config_, r) != Reject::None) {
    return 0;
  }
  Reject why = Reject::None;
  const uint32_t pixel = pixelOf(config_.parts[block->slot], r, why);
  const int64_t tof = n.eventTimeNs - n.pulseTimeNs;
  if (pixel == 0 || tof < 0 || tof > INT32_MAX) {
    return 0;
  }
  std::memcpy(out.data(), &r, kReadoutBytes);
  ++readouts_;
  truth.add(n.pulseTimeNs, tof, static_cast<int32_t>(pixel));
  return kReadoutBytes;
}

} // namespace efu::dream
