// SPDX-License-Identifier: BSD-2-Clause
// The vmm3 module: VMM3 strip readouts → hits → clusters per plane → x/y events with pixel ids.
#include "modules/vmm3/Vmm3Module.h"

#include <string>

namespace efu::vmm3 {

Vmm3Counters::Vmm3Counters(sdk::ModuleContext &ctx)
    : readouts(ctx.counter("readouts.count")),
      unknownHybrid(ctx.counter("readouts.errors.hybrid")),
      calibration(ctx.counter("readouts.errors.calibration")), hits(ctx.counter("hits.count")),
      belowThreshold(ctx.counter("hits.rejected.threshold")), late(ctx.counter("hits.late")),
      restarts(ctx.counter("hits.time_restarts")),
      clusters{&ctx.counter("clusters.x.count"), &ctx.counter("clusters.y.count")},
      unmatched{&ctx.counter("clusters.x.unmatched"), &ctx.counter("clusters.y.unmatched")},
      forcedCloses(ctx.counter("clusters.forced_close")),
      sortOverflows(ctx.counter("sort.overflows")), matchOverflows(ctx.counter("match.overflows")),
      timeoutFlushes(ctx.counter("flushes.timeout")), events(ctx.counter("events.count")) {
  for (size_t i = 1; i < readoutErrors.size(); ++i) {
    readoutErrors[i] = &ctx.counter(std::string("readouts.errors.") +
                                    readoutErrorName(static_cast<ReadoutError>(i)));
  }
}

Vmm3Module::Vmm3Module(sdk::ModuleContext &ctx)
    : ctx_(ctx), config_(parseVmm3Config(ctx.config(), ctx.configSource())),
      calibration_(ctx.calibration().is_null()
                       ? std::nullopt
                       : std::optional<Vmm3Calibration>(std::in_place, ctx.calibration(),
                                                        ctx.calibrationSource(), config_,
                                                        ctx.configSource())),
      headerCounters_(ctx),
      parser_(headerCounters_, readout::DetectorTypes{config_.detectorType}), tofCounters_(ctx),
      tof_(tofCounters_, config_.maxTofNs), former_(EventFormer::paramsFrom(config_), *this),
      counters_(ctx) {
  ctx.setLossCounters(headerCounters_.seqLost, headerCounters_.seqExpected);
  ctx.log().info("vmm3: instrument '{}' type 0x{:02X}, {} x {} strips, {} hybrids, threshold {}, "
                 "fine time {}, time gap {} ns, strip gap {}, match window {} ns",
                 config_.instrument, config_.detectorType, config_.nx, config_.ny,
                 config_.hybrids.size(), config_.adcThreshold, config_.fineTime ? "on" : "off",
                 config_.timeGapNs, config_.stripGap, config_.matchWindowNs);
  if (calibration_) {
    ctx.log().info("vmm3: calibration {}: {} hybrids{}", ctx.calibrationSource(),
                   config_.hybrids.size(),
                   config_.fineTime ? "" : " (fine_time is off: tdc_offset/tdc_slope unused)");
    for (const std::string &entry : calibration_->unused()) {
      ctx.log().warn("vmm3: calibration {}: {} is no configured hybrid_id; ignored",
                     ctx.calibrationSource(), entry);
    }
  }
}

void Vmm3Module::process(const sdk::Packet &packet) noexcept {
  readout::EssHeader h;
  if (!parser_.parse(packet.data, packet.size, h) || h.payloadBytes == 0) {
    return;
  }
  if (h.pulseTimeNs != pulses_[pulseSlot_].pulseTimeNs ||
      h.prevPulseTimeNs != pulses_[pulseSlot_].prevPulseTimeNs) {
    ++pulseSlot_; // wraps at 256: far more pulses than hits can wait for
    pulses_[pulseSlot_] = h;
  }
  lastDataRxNs_ = packet.rxTimeNs;
  const uint8_t *p = h.payload;
  size_t left = h.payloadBytes;
  std::array<int64_t, static_cast<size_t>(ReadoutError::Count_)> errors{};
  int64_t ok = 0;
  int64_t unknown = 0;
  int64_t calibration = 0;
  int64_t below = 0;
  int64_t hits = 0;
  while (left > 0) {
    Vmm3Readout r;
    const ReadoutError e = parseReadout(p, left, r);
    if (e != ReadoutError::Ok) {
      ++errors[static_cast<size_t>(e)];
      if (stopsDatagram(e)) {
        break;
      }
    }
    p += kReadoutBytes;
    left -= kReadoutBytes;
    if (e != ReadoutError::Ok) {
      continue;
    }
    const HybridSlot &slot = config_.slot(r.fiber, r.fen, r.vmm / 2);
    if (!slot.known) {
      ++unknown;
      continue;
    }
    ++ok;
    uint16_t adc = adcOf(r);
    int64_t timeNs = readout::ticksToNs(r.timeHigh, r.timeLow) + config_.fineTimeNs(r.bc, r.tdc);
    if (calibration_) {
      const Vmm3Calibration::Channel &c = calibration_->channel(slot.index, r.vmm, r.channel);
      if (!Vmm3Calibration::adc(c, adc, adc)) {
        ++calibration;
        continue;
      }
      if (config_.fineTime) {
        timeNs += calibration_->timeCorrectionNs(c, r.tdc);
      }
    }
    if (adc < config_.adcThreshold) {
      ++below;
      continue;
    }
    const auto strip =
        static_cast<uint16_t>(slot.stripOffset + (r.vmm % 2) * kChannelsPerVmm + r.channel);
    hits += former_.addHit(slot.plane, Hit{timeNs, strip, adc, pulseSlot_}) ? 1 : 0;
  }
  for (size_t i = 1; i < errors.size(); ++i) {
    if (errors[i] != 0) {
      counters_.readoutErrors[i]->add(errors[i]);
    }
  }
  counters_.readouts.add(ok);
  counters_.unknownHybrid.add(unknown);
  counters_.calibration.add(calibration);
  counters_.belowThreshold.add(below);
  counters_.hits.add(hits);
  former_.advance();
  publish();
}

void Vmm3Module::tick(int64_t nowNs) noexcept {
  if (nowNs - lastDataRxNs_ >= config_.clusterTimeoutNs && !former_.idle()) {
    former_.flush();
    counters_.timeoutFlushes.add();
    publish();
  }
}

void Vmm3Module::flush() noexcept {
  former_.flush();
  publish();
}

void Vmm3Module::event(const Event &e) noexcept {
  readout::Tof t;
  // Against the pulse (or previous pulse) of the datagram that carried the event's first
  // hit: clusters close one or more datagrams later, maybe after the pulse changed.
  if (tof_.compute(e.timeNs, pulses_[e.pulseSlot], t)) {
    ctx_.events().add(t.pulseTimeNs, t.tofNs, e.pixelId);
  }
}

void Vmm3Module::publish() noexcept {
  const FormerStats s = former_.stats();
  int64_t late = 0;
  int64_t forced = 0;
  int64_t overflows = 0;
  for (size_t i = 0; i < kPlanes; ++i) {
    counters_.clusters[i]->set(s.planes[i].clusters);
    counters_.unmatched[i]->set(s.unmatched[i]);
    late += s.planes[i].late;
    forced += s.planes[i].forcedCloses;
    overflows += s.planes[i].sortOverflows;
  }
  counters_.late.set(late);
  counters_.forcedCloses.set(forced);
  counters_.sortOverflows.set(overflows);
  counters_.matchOverflows.set(s.matchOverflows);
  counters_.events.set(s.events);
  counters_.restarts.set(s.restarts);
}

} // namespace efu::vmm3
