// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for the ESS Multi-Grid detectors.
#include "modules/trex/TrexSource.h"

#include "modules/trex/TrexGeometry.h"

#include <algorithm>
#include <cstring>

namespace efu::trex {

namespace {
constexpr int64_t kMaxTofNs = 1'000'000'000; // the module's

readout::EssTime later(readout::EssTime t, uint32_t ticks) {
  uint64_t low = uint64_t{t.low} + ticks;
  uint32_t high = t.high;
  if (low >= readout::kTicksPerSecond) {
    low -= readout::kTicksPerSecond;
    ++high;
  }
  return {high, static_cast<uint32_t>(low)};
}
} // namespace

TrexSource::TrexSource(const nlohmann::json &config, const std::string &configSource, uint64_t seed)
    : config_(parseTrexConfig(config, configSource)), wires_(65536), builders_(kBuilderKeys),
      rng_(seed) {
  for (size_t i = 0; i < config_.hybrids.size(); ++i) {
    const TrexHybrid &h = config_.hybrids[i];
    if (h.minAdc > vmm3::kMaxAdc) {
      continue; // nothing it reads passes
    }
    const size_t key = builderKey(h.ring, h.fen);
    const bool wire = isWire(config_.instrument, h.hybrid);
    for (uint8_t asic = 0; asic < 2; ++asic) {
      for (uint8_t ch = 0; ch <= vmm3::kMaxChannel; ++ch) {
        const Loc loc{static_cast<int16_t>(i), asic, ch};
        if (wire) {
          const uint16_t c = wireCoord(config_.instrument, h.ring, h.fen, h.hybrid, asic, ch,
                                       h.xOffset, h.rotated);
          if (c != kInvalidCoord) {
            wires_[c].push_back(loc);
          }
          continue;
        }
        const uint16_t y =
            gridCoord(config_.instrument, h.hybrid, asic, ch, h.yOffset, h.rotated, h.isShort);
        if (y == kInvalidCoord) {
          continue;
        }
        grids_.try_emplace((uint64_t{key} << 16) | y, loc);
        Builder &b = builders_[key];
        if (b.lowGrid.entry < 0 || y < b.low) {
          b.lowGrid = loc;
          b.low = y;
        }
        if (b.highGrid.entry < 0 || y > b.high) {
          b.highGrid = loc;
          b.high = y;
        }
      }
    }
  }
}

const TrexSource::Loc *TrexSource::grid(size_t key, uint32_t y) const {
  const auto it = grids_.find((uint64_t{key} << 16) | y);
  return it == grids_.end() ? nullptr : &it->second;
}

uint16_t TrexSource::adc(const Loc &l, uint16_t below) {
  const uint16_t lowest =
      std::max<uint16_t>(1, config_.hybrids[static_cast<size_t>(l.entry)].minAdc);
  return static_cast<uint16_t>(std::uniform_int_distribution<int>(lowest, below - 1)(rng_));
}

void TrexSource::write(uint8_t *out, const Loc &l, readout::EssTime t, uint16_t otadc) const {
  const TrexHybrid &h = config_.hybrids[static_cast<size_t>(l.entry)];
  vmm3::Vmm3Readout r{};
  r.fiber = static_cast<uint8_t>(2 * h.ring);
  r.fen = h.fen;
  r.length = vmm3::kReadoutBytes;
  r.timeHigh = t.high;
  r.timeLow = t.low;
  r.otadc = otadc;
  r.vmm = static_cast<uint8_t>(2 * h.hybrid + l.asic);
  r.channel = l.channel;
  std::memcpy(out, &r, vmm3::kReadoutBytes);
}

size_t TrexSource::encodeEvent(const sdk::Neutron &n, std::span<uint8_t> out,
                               sdk::TruthSink &truth) {
  if (out.size() < maxEventBytes() || config_.sizeY == 0) {
    return 0;
  }
  const uint32_t x = n.x, y = n.y % config_.sizeY, z = n.y / config_.sizeY;
  const uint32_t xandz = x * kDepth + z;
  const uint32_t pixel = config_.pixel(x, y, z);
  if (pixel == 0 || xandz >= kInvalidCoord) {
    return 0;
  }
  const Loc *wire = nullptr;
  const Loc *gridY = nullptr;
  size_t key = 0;
  for (const Loc &w : wires_[xandz]) {
    const TrexHybrid &h = config_.hybrids[static_cast<size_t>(w.entry)];
    key = builderKey(h.ring, h.fen);
    const Builder &b = builders_[key];
    gridY = grid(key, y);
    if (gridY != nullptr && b.high - b.low > kMaxGridsSpan - 1) {
      wire = &w;
      break;
    }
  }
  if (wire == nullptr) {
    return 0;
  }
  Builder &b = builders_[key];
  if (b.seen && n.eventTimeNs - b.lastNs <= kQuietNs) {
    return 0;
  }
  const int64_t tof = readout::eventTimeNs(static_cast<uint64_t>(n.eventTimeNs)) - n.pulseTimeNs;
  if (tof < 0 || tof > kMaxTofNs) {
    return 0;
  }
  uint8_t *p = out.data();
  int count = 0;
  const auto put = [&](const Loc &l, readout::EssTime t, uint16_t a) {
    write(p + count * vmm3::kReadoutBytes, l, t, a);
    ++count;
  };
  put(*wire, n.eventTime, adc(*wire));
  const uint16_t gridAdc = adc(*gridY);
  put(*gridY, n.eventTime, gridAdc);
  const Loc *next = grid(key, y + 1);
  if (next != nullptr && rng_() % 2 == 0 &&
      gridAdc > std::max<uint16_t>(1, config_.hybrids[static_cast<size_t>(next->entry)].minAdc)) {
    put(*next, n.eventTime, adc(*next, gridAdc)); // weaker: the centre rounds to y
  }
  readout::EssTime t = n.eventTime;
  for (int k = 0; k < 3; ++k) {
    t = later(t, kTrailTicks);
    put(*wire, t, adc(*wire));
    put(b.lowGrid, t, adc(b.lowGrid));
    put(b.highGrid, t, adc(b.highGrid));
  }
  b.seen = true;
  b.lastNs = readout::ticksToNs(t.high, t.low);
  readouts_ += static_cast<uint64_t>(count);
  truth.add(n.pulseTimeNs, tof, static_cast<int32_t>(pixel));
  return static_cast<size_t>(count) * vmm3::kReadoutBytes;
}

} // namespace efu::trex
