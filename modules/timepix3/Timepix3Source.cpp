// SPDX-License-Identifier: BSD-2-Clause
// The Timepix3 readout encoder for readoutgen (Timepix3Source.h).
#include "modules/timepix3/Timepix3Source.h"

#include "common/sdk/CalibrationCheck.h"
#include "modules/timepix3/Timepix3Readout.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace efu::timepix3 {

Timepix3Source::Timepix3Source(const nlohmann::json &config, const std::string &configSource,
                               uint64_t seed)
    : config_(parseTimepix3Config(config, configSource)) {
  (void)seed; // every choice follows from the neutron
  const sdk::CalibrationCheck check(configSource, "");
  const auto refuse = [&](const char *key, const char *why) {
    check.fail(key, config.at(key), std::string("readoutgen's Timepix3 neutrons need ") + why);
  };
  if (config_.scaleUpFactor > 8) {
    refuse("ScaleUpFactor", "at most 8 (centres in eighths of a camera pixel)");
  }
  if (config_.maxCoordinateGap < 2) {
    refuse("MaxCoordinateGap", "at least 2 (a 3 x 3 block around its seed)");
  }
  if (config_.minEventSizeHits > kHits) {
    refuse("MinEventSizeHits", "at most 9 (a 3 x 3 block)");
  }
  if (config_.minEventTimeSpanNs > 1) {
    refuse("MinEventTimeSpanNS", "at most 1 (all hits of a neutron at one time)");
  }
  if (config_.minimumTotSum > 64 * 40) {
    refuse("MinimumToTSum", "at most 2560 (10-bit weights)");
  }
  totFactor_ = static_cast<uint16_t>(std::max<uint32_t>(1, (config_.minimumTotSum + 63) / 64));
}

bool Timepix3Source::axis(uint32_t image, uint32_t cameraCells, Axis &out) const noexcept {
  const uint32_t s = config_.scaleUpFactor;
  // The centre k / 8 (camera pixels) must scale into [image, image + 1).
  const uint32_t k = (8 * image + s - 1) / s;
  if (k * s >= 8 * (image + 1)) {
    return false;
  }
  const auto cell = static_cast<int32_t>((k + 4) / 8);
  const int32_t d = static_cast<int32_t>(k) - 8 * cell; // -4 .. 3 eighths from the cell
  const int32_t limit = static_cast<int32_t>(std::min<uint32_t>(cameraCells, 256));
  if (cell < 1 || cell + 1 >= limit) {
    return false;
  }
  const int32_t middle = (d % 2 == 0) ? 2 : 3;
  const int32_t low = (8 - middle - d) / 2;
  const int32_t high = 8 - middle - low; // high - low == d
  out.cell = cell;
  out.weight = {static_cast<uint16_t>(low), static_cast<uint16_t>(middle),
                static_cast<uint16_t>(high)};
  return true;
}

void Timepix3Source::beginPulse(int64_t pulseNs, uint64_t index) noexcept {
  if (!started_) {
    firstPulseNs_ = pulseNs;
    started_ = true;
  }
  pulseNs_ = pulseNs;
  tdcCounter_ = static_cast<uint16_t>((index + 1) & 0xFFF);
  // The camera's TDC: kCameraStartNs at the first pulse, 3.125-ns bins, fine bits 0.
  const auto cameraNs = static_cast<uint64_t>(kCameraStartNs + (pulseNs - firstPulseNs_));
  tdcStamp_ = (cameraNs * 8 / 25) & 0x7FFFFFFFFULL;
  tdcPixelClockNs_ = tdcOnPixelClock(tdcNs(tdcStamp_, 0));
  tdcPending_ = true;
}

size_t Timepix3Source::pulseDatagram(const sdk::Pulse &pulse, std::span<uint8_t> out) {
  if (out.size() < kEvrBytes) {
    return 0;
  }
  beginPulse(pulse.pulseTimeNs, pulse.index);
  EvrDatagram e;
  e.counter = static_cast<uint32_t>(pulse.index + 1);
  e.pulseSeconds = static_cast<uint32_t>(pulse.pulseTimeNs / 1'000'000'000);
  e.pulseNanoseconds = static_cast<uint32_t>(pulse.pulseTimeNs % 1'000'000'000);
  e.prevPulseSeconds = static_cast<uint32_t>(pulse.prevPulseTimeNs / 1'000'000'000);
  e.prevPulseNanoseconds = static_cast<uint32_t>(pulse.prevPulseTimeNs % 1'000'000'000);
  encodeEvr(e, out.data());
  return kEvrBytes;
}

size_t Timepix3Source::encodeEvent(const sdk::Neutron &n, std::span<uint8_t> out,
                                   sdk::TruthSink &truth) {
  if (out.size() < maxEventBytes() || n.pulseTimeNs != pulseNs_) {
    return 0; // no EVR for this pulse: the module could not time it
  }
  Axis ax, ay;
  if (!axis(n.x, config_.xResolution, ax) || !axis(n.y, config_.yResolution, ay)) {
    return 0;
  }
  // The pixel clock reading: the TDC's plus the time of flight, rounded up to a 25-ns ToA step
  // and brought back by the fine ToA.
  const int64_t flightNs = n.eventTimeNs - n.pulseTimeNs;
  if (flightNs < 0) {
    return 0;
  }
  const uint64_t target = (tdcPixelClockNs_ + static_cast<uint64_t>(flightNs)) % kPixelClockNs;
  const uint64_t steps = (target + 24) / 25;
  PixelWord p;
  p.spidr = static_cast<uint16_t>(steps / 16384); // 65536 wraps to 0, as the camera's clock
  p.toa = static_cast<uint16_t>(steps % 16384);
  p.fToA = static_cast<uint8_t>((steps * 25 - target) * 16 / 25);
  const uint64_t global = pixelTimeNs(static_cast<uint64_t>(n.pulseTimeNs), tdcPixelClockNs_,
                                      pixelClockNs(p.spidr, p.toa, p.fToA));
  const auto tof = static_cast<int64_t>(global - static_cast<uint64_t>(n.pulseTimeNs));
  if (tof < 0 || tof > config_.periodNs) {
    return 0;
  }
  // Not within reach of a recent neutron in space and time (the clusters would merge).
  const int32_t reach = int32_t{config_.maxCoordinateGap} + 2;
  for (const Recent &r : recent_) {
    const uint64_t dt = global > r.timeNs ? global - r.timeNs : r.timeNs - global;
    if (dt <= uint64_t{config_.maxTimeGapNs} + 50 && std::abs(r.x - ax.cell) <= reach &&
        std::abs(r.y - ay.cell) <= reach) {
      return 0;
    }
  }
  recent_[nextRecent_] = {global, ax.cell, ay.cell};
  nextRecent_ = (nextRecent_ + 1) % recent_.size();

  size_t bytes = 0;
  const auto put = [&](uint64_t word) {
    std::memcpy(out.data() + bytes, &word, sizeof word);
    bytes += sizeof word;
    ++readouts_;
  };
  if (tdcPending_) {
    TdcWord t;
    t.kind = kTdc1Rising;
    t.counter = tdcCounter_;
    t.stamp35 = tdcStamp_;
    put(encodeTdc(t));
    tdcPending_ = false;
  }
  // The centre first (the seed), then the other eight.
  static constexpr std::array<std::array<int, 2>, kHits> kOrder = {
      {{1, 1}, {0, 0}, {1, 0}, {2, 0}, {0, 1}, {2, 1}, {0, 2}, {1, 2}, {2, 2}}};
  for (const auto &[i, j] : kOrder) {
    placePixel(p, static_cast<uint16_t>(ax.cell - 1 + i), static_cast<uint16_t>(ay.cell - 1 + j));
    p.tot = static_cast<uint16_t>(ax.weight[static_cast<size_t>(i)] *
                                  ay.weight[static_cast<size_t>(j)] * totFactor_);
    put(encodePixel(p));
  }
  truth.add(n.pulseTimeNs, tof, static_cast<int32_t>(n.y * config_.width() + n.x + 1));
  return bytes;
}

} // namespace efu::timepix3
