// SPDX-License-Identifier: BSD-2-Clause
// The caen module's readout loop.
#include "modules/caen/CaenModule.h"
#include "modules/caen/CaenReadout.h"

#include <cstring>

namespace efu::caen {

CaenCounters::CaenCounters(sdk::ModuleContext &ctx)
    : readouts(ctx.counter("readouts.count")), truncated(ctx.counter("readouts.errors.truncated")),
      length(ctx.counter("readouts.errors.length")), fiber(ctx.counter("readouts.errors.fiber")),
      fen(ctx.counter("readouts.errors.fen")), unmapped(ctx.counter("readouts.errors.unmapped")),
      group(ctx.counter("readouts.errors.group")), time(ctx.counter("readouts.errors.time")),
      amplitude(ctx.counter("readouts.errors.amplitude")),
      position(ctx.counter("readouts.errors.position")),
      threshold(ctx.counter("readouts.rejected.threshold")),
      calibration(ctx.counter("readouts.errors.calibration")), events(ctx.counter("events.count")) {}

CaenModule::CaenModule(sdk::ModuleContext &ctx)
    : config_(ctx.config(), ctx.configSource()),
      calibration_(ctx.calibration().is_null()
                       ? std::nullopt
                       : std::optional<CaenCalibration>(std::in_place, ctx.calibration(),
                                                        ctx.calibrationSource(), config_)),
      events_(ctx.events()), headerCounters_(ctx),
      tofCounters_(ctx), counters_(ctx),
      parser_(headerCounters_, readout::DetectorTypes{config_.detectorType}),
      tof_(tofCounters_, config_.maxTofNs) {
  ctx.setLossCounters(headerCounters_.seqLost, headerCounters_.seqExpected);
  for (uint32_t b = 0; b < config_.banks; ++b) {
    bankEvents_.push_back(config_.sources.empty() ? &events_ : &ctx.events(config_.sources[b]));
  }
  ctx.log().info("caen: {} type 0x{:02x}, {} banks x {} tubes x {} pixels (image {} x {}), "
                 "{} mapping entries, threshold {}, max tof {} ns",
                 config_.instrument.empty() ? std::string("(unnamed)") : config_.instrument,
                 config_.detectorType, config_.banks, config_.tubesPerBank, config_.pixelsPerTube,
                 config_.imageWidth(), config_.imageHeight(), config_.rules.size(),
                 config_.amplitudeThreshold, config_.maxTofNs);
  if (calibration_) {
    ctx.log().info("caen: calibration {}: {} units per tube", ctx.calibrationSource(),
                   calibration_->unitsPerTube());
  }
}

namespace {
/// Per-datagram tallies, added to the shared counters once per datagram.
struct Tally {
  int64_t readouts = 0, truncated = 0, length = 0, fiber = 0, fen = 0, unmapped = 0, group = 0,
          time = 0, amplitude = 0, position = 0, threshold = 0, calibration = 0, events = 0;
};
inline void addIf(Counter &c, int64_t n) noexcept {
  if (n != 0) {
    c.add(n);
  }
}
} // namespace

void CaenModule::process(const sdk::Packet &packet) noexcept {
  readout::EssHeader h;
  if (!parser_.parse(packet.data, packet.size, h) || h.payloadBytes == 0) {
    return;
  }
  Tally t;
  const uint8_t *p = h.payload;
  size_t left = h.payloadBytes;
  const uint32_t pixelsPerTube = config_.pixelsPerTube;
  const int32_t threshold = config_.amplitudeThreshold;
  while (left > 0) {
    if (left < sizeof(CaenReadout)) {
      ++t.truncated;
      break;
    }
    CaenReadout r;
    std::memcpy(&r, p, sizeof(r));
    if (r.length != sizeof(CaenReadout)) {
      ++t.length;
      // The block says how long it is: skip it if that is plausible, else give up on the rest.
      if (r.length < sizeof(readout::DataBlockHeader) || r.length > left) {
        break;
      }
      p += r.length;
      left -= r.length;
      continue;
    }
    p += sizeof(r);
    left -= sizeof(r);
    ++t.readouts;
    if (r.fiber > readout::kMaxFiber) {
      ++t.fiber;
      continue;
    }
    if (r.fen > readout::kMaxFen) {
      ++t.fen;
      continue;
    }
    const CaenConfig::FenEntry &e = config_.fenEntry(r.fiber, r.fen);
    if (e.groups == 0) {
      ++t.unmapped;
      continue;
    }
    if (r.group >= e.groups) {
      ++t.group;
      continue;
    }
    if (r.timeLow > readout::kMaxTicksLow) {
      ++t.time;
      continue;
    }
    const int32_t a = r.ampA;
    const int32_t b = r.ampB;
    const int32_t sum = a + b;
    if (sum <= 0) {
      ++t.amplitude;
      continue;
    }
    if (a < 0 || b < 0) {
      ++t.position;
      continue;
    }
    if (sum < threshold) {
      ++t.threshold;
      continue;
    }
    const uint32_t tube = e.firstTube + r.group;
    uint32_t pos = 0;
    if (!calibration_) {
      pos = positionIndex(a, b, pixelsPerTube);
    } else if (!calibration_->position(tube, a, b, pos)) {
      ++t.calibration;
      continue;
    }
    readout::Tof tof;
    if (!tof_.compute(readout::ticksToNs(r.timeHigh, r.timeLow), h, tof)) {
      continue;
    }
    bankEvents_[tube / config_.tubesPerBank]->add(tof.pulseTimeNs, tof.tofNs,
                                                  config_.pixel(tube, pos));
    ++t.events;
  }
  addIf(counters_.readouts, t.readouts);
  addIf(counters_.truncated, t.truncated);
  addIf(counters_.length, t.length);
  addIf(counters_.fiber, t.fiber);
  addIf(counters_.fen, t.fen);
  addIf(counters_.unmapped, t.unmapped);
  addIf(counters_.group, t.group);
  addIf(counters_.time, t.time);
  addIf(counters_.amplitude, t.amplitude);
  addIf(counters_.position, t.position);
  addIf(counters_.threshold, t.threshold);
  addIf(counters_.calibration, t.calibration);
  addIf(counters_.events, t.events);
}

} // namespace efu::caen
