// SPDX-License-Identifier: BSD-2-Clause
// The `vmm3` module: VMM3 strip readouts → hits → clusters per plane → x/y events with pixel ids.
#include "common/readout/EssReadout.h"
#include "common/sdk/Module.h"
#include "modules/vmm3/Clustering.h"
#include "modules/vmm3/Vmm3Config.h"
#include "modules/vmm3/Vmm3Readout.h"

#include <array>
#include <string>

namespace efu::vmm3 {
namespace {

class Vmm3Module final : public sdk::Module, private EventOutput {
public:
  explicit Vmm3Module(sdk::ModuleContext &ctx)
      : ctx_(ctx), config_(parseVmm3Config(ctx.config(), ctx.configSource())), headerCounters_(ctx),
        parser_(headerCounters_, readout::DetectorTypes{config_.detectorType}), tofCounters_(ctx),
        tof_(tofCounters_, config_.maxTofNs), former_(EventFormer::paramsFrom(config_), *this),
        readoutsOk_(ctx.counter("readouts.count")),
        unknownHybrid_(ctx.counter("readouts.errors.hybrid")), hits_(ctx.counter("hits.count")),
        belowThreshold_(ctx.counter("hits.rejected.threshold")),
        late_(ctx.counter("hits.late")), clusters_{&ctx.counter("clusters.x.count"),
                                                        &ctx.counter("clusters.y.count")},
        unmatched_{&ctx.counter("clusters.x.unmatched"),
                   &ctx.counter("clusters.y.unmatched")},
        forcedCloses_(ctx.counter("clusters.forced_close")),
        sortOverflows_(ctx.counter("sort.overflows")),
        matchOverflows_(ctx.counter("match.overflows")), events_(ctx.counter("events.count")),
        timeoutFlushes_(ctx.counter("flushes.timeout")),
        restarts_(ctx.counter("hits.time_restarts")) {
    for (size_t i = 1; i < readoutErrors_.size(); ++i) {
      readoutErrors_[i] = &ctx.counter(std::string("readouts.errors.") +
                                       readoutErrorName(static_cast<ReadoutError>(i)));
    }
    ctx.setLossCounters(headerCounters_.seqLost, headerCounters_.seqExpected);
    ctx.log().info("vmm3: instrument '{}' type 0x{:02X}, {} x {} strips, {} hybrids, threshold {}, "
                   "fine time {}, time gap {} ns, strip gap {}, match window {} ns",
                   config_.instrument, config_.detectorType, config_.nx, config_.ny,
                   config_.hybrids.size(), config_.adcThreshold, config_.fineTime ? "on" : "off",
                   config_.timeGapNs, config_.stripGap, config_.matchWindowNs);
  }

  void process(const sdk::Packet &packet) noexcept override {
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
      const uint16_t adc = adcOf(r);
      if (adc < config_.adcThreshold) {
        ++below;
        continue;
      }
      const auto strip =
          static_cast<uint16_t>(slot.stripOffset + (r.vmm % 2) * kChannelsPerVmm + r.channel);
      const int64_t timeNs =
          readout::ticksToNs(r.timeHigh, r.timeLow) + config_.fineTimeNs(r.bc, r.tdc);
      hits += former_.addHit(slot.plane, Hit{timeNs, strip, adc, pulseSlot_}) ? 1 : 0;
    }
    for (size_t i = 1; i < errors.size(); ++i) {
      if (errors[i] != 0) {
        readoutErrors_[i]->add(errors[i]);
      }
    }
    readoutsOk_.add(ok);
    unknownHybrid_.add(unknown);
    belowThreshold_.add(below);
    hits_.add(hits);
    former_.advance();
    publish();
  }

  void tick(int64_t nowNs) noexcept override {
    if (nowNs - lastDataRxNs_ >= config_.clusterTimeoutNs && !former_.idle()) {
      former_.flush();
      timeoutFlushes_.add();
      publish();
    }
  }

  void flush() noexcept override {
    former_.flush();
    publish();
  }

private:
  void event(const Event &e) noexcept override {
    readout::Tof t;
    // Against the pulse (or previous pulse) of the datagram that carried the event's first
    // hit: clusters close one or more datagrams later, maybe after the pulse changed.
    if (tof_.compute(e.timeNs, pulses_[e.pulseSlot], t)) {
      ctx_.events().add(t.pulseTimeNs, t.tofNs, e.pixelId);
    }
  }

  /// Copies the former's counts into the counters (a few relaxed stores per datagram).
  void publish() noexcept {
    const FormerStats s = former_.stats();
    int64_t late = 0;
    int64_t forced = 0;
    int64_t overflows = 0;
    for (size_t i = 0; i < kPlanes; ++i) {
      clusters_[i]->set(s.planes[i].clusters);
      unmatched_[i]->set(s.unmatched[i]);
      late += s.planes[i].late;
      forced += s.planes[i].forcedCloses;
      overflows += s.planes[i].sortOverflows;
    }
    late_.set(late);
    forcedCloses_.set(forced);
    sortOverflows_.set(overflows);
    matchOverflows_.set(s.matchOverflows);
    events_.set(s.events);
    restarts_.set(s.restarts);
  }

  sdk::ModuleContext &ctx_;
  const Vmm3Config config_;
  readout::HeaderCounters headerCounters_;
  readout::EssReadoutParser parser_;
  readout::TofCounters tofCounters_;
  readout::TofCalculator tof_;
  EventFormer former_;
  /// Pulse and previous pulse of recent datagrams, tagged by a wrapping slot number that hits
  /// carry; a new slot when the pulse changes.
  std::array<readout::EssHeader, 256> pulses_{};
  uint8_t pulseSlot_ = 0;
  int64_t lastDataRxNs_ = 0;
  Counter &readoutsOk_;
  Counter &unknownHybrid_;
  Counter &hits_;
  Counter &belowThreshold_;
  Counter &late_;
  std::array<Counter *, kPlanes> clusters_;
  std::array<Counter *, kPlanes> unmatched_;
  Counter &forcedCloses_;
  Counter &sortOverflows_;
  Counter &matchOverflows_;
  Counter &events_;
  Counter &timeoutFlushes_;
  Counter &restarts_;
  std::array<Counter *, static_cast<size_t>(ReadoutError::Count_)> readoutErrors_{};
};

} // namespace
} // namespace efu::vmm3

EFU_MODULE(efu::vmm3::Vmm3Module, "vmm3", "1.0.0",
           "VMM3 strip detectors (NMX, FREIA, ESTIA): time/strip clustering per plane, x/y "
           "matching, pixel = y * nx + x + 1",
           efu::vmm3::kVmm3ConfigKeys, static_cast<uint32_t>(efu::vmm3::kVmm3ConfigKeyCount))
