// SPDX-License-Identifier: BSD-2-Clause
// The vmm3 module: ESS Multi-Blade readouts → hits → events with the ESS EFU's pixel ids.
#include "modules/vmm3/Vmm3Module.h"

#include "modules/vmm3/Vmm3Geometry.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace efu::vmm3 {

namespace {

constexpr const char *kHitErrorNames[] = {"geometry.ring_errors",
                                          "geometry.fen_errors",
                                          "geometry.hybrid_mapping_errors",
                                          "geometry.wire_channel_range_errors",
                                          "geometry.strip_channel_range_errors",
                                          "readouts.adc_below_threshold"};
static_assert(std::size(kHitErrorNames) == static_cast<size_t>(HitError::Count_));
static_assert(RouteTable::faultsLead<HitError>());

constexpr const char *kEventErrorNames[] = {"cluster.no_coincidence", "events.wire_gaps",
                                            "events.strip_gaps", "geometry.pixel_errors"};
static_assert(std::size(kEventErrorNames) == static_cast<size_t>(EventError::Count_));

constexpr int64_t kMaxTofNs = 1'000'000'000; // the ESS EFU's for these detectors (not read)

reduction::BuilderParams paramsOf(const Vmm3Config &c) {
  reduction::BuilderParams p;
  p.clusterTimeGapNs = c.clusteringTimeGapNs;
  p.matchTimeGapNs = c.matchingTimeGapNs;
  p.splitMultiEvents = c.splitMultiEvents;
  p.coefficientLow = c.coefficientLow;
  p.coefficientHigh = c.coefficientHigh;
  return p;
}

} // namespace

Vmm3Counters::Vmm3Counters(sdk::ModuleContext &ctx)
    : adcMax(ctx.counter("readouts.adc_max")),
      validation(ctx.counter("geometry.validation_errors")),
      invalidCoord{&ctx.counter("geometry.invalid_xcoord_error"),
                   &ctx.counter("geometry.invalid_ycoord_error")},
      matched(ctx.counter("cluster.matched_clusters")), wireOnly(ctx.counter("cluster.wire_only")),
      stripOnly(ctx.counter("cluster.strip_only")),
      spanTooLarge(ctx.counter("cluster.span_too_large")), split(ctx.counter("cluster.split")),
      splitDiscarded(ctx.counter("cluster.split_discarded")), events(ctx.counter("events.count")) {
  for (size_t i = 0; i < hitErrors.size(); ++i) {
    hitErrors[i] = &ctx.counter(kHitErrorNames[i]);
  }
  for (size_t i = 0; i < eventErrors.size(); ++i) {
    eventErrors[i] = &ctx.counter(kEventErrorNames[i]);
  }
}

Vmm3Module::Vmm3Module(sdk::ModuleContext &ctx)
    : events_(ctx.events()), config_(parseVmm3Config(ctx.config(), ctx.configSource())),
      calibration_(ctx.calibration().is_null()
                       ? Vmm3Calibration(config_)
                       : Vmm3Calibration(ctx.calibration(), ctx.calibrationSource(), config_,
                                         ctx.configSource())),
      headerCounters_(ctx),
      parser_(headerCounters_, config_.detectorTypes(), config_.maxPulseTimeNs), tofCounters_(ctx),
      tof_(tofCounters_, kMaxTofNs), parserCounters_(ctx), counters_(ctx),
      partition_(ctx.partition()), partitions_(ctx.partitions()),
      builders_(config_.hybrids.size(), reduction::EventBuilder2D(paramsOf(config_))),
      routeOf_([this](uint8_t ring, uint8_t fen, uint8_t vmm) {
        const int16_t slot = config_.slot(ring, fen, vmm >> 1);
        return slot < 0 ? -1 : slot * 2 + (vmm & 1);
      }) {
  ctx.setLossCounters(headerCounters_.seqLost, headerCounters_.seqExpected);
  for (size_t slot = 0; slot < config_.hybrids.size(); ++slot) {
    const Hybrid &hybrid = config_.hybrids[slot];
    for (uint8_t half = 0; half < 2; ++half) {
      // The VMMs of this entry are 2 x Hybrid + half: only vmm & 1 matters below.
      const bool x = config_.isX(half);
      const bool wire = config_.isWire(half);
      const uint16_t offset = x ? hybrid.xOffset : hybrid.yOffset;
      VmmRoute r;
      const bool own = slot % partitions_ == partition_;
      r.plane = x ? 0 : 1;
      if (own) {
        r.hits = builders_[slot].plane(r.plane);
      }
      r.calibration = calibration_.vmm(slot, half);
      r.threshold = hybrid.threshold[half];
      for (uint8_t ch = 0; ch < kChannelsPerVmm; ++ch) {
        int16_t &c = r.coord[ch];
        if (!own) {
          c = VmmRoute::kOtherPartition;
        } else if (!validChannel(wire, ch)) {
          c = wire ? VmmRoute::kWireChannel : VmmRoute::kStripChannel;
        } else {
          const uint32_t coord = coordinateOf(config_.layout, wire, offset, ch);
          if (coord > INT16_MAX) {
            throw std::logic_error("vmm3: a coordinate above 2^15 - 1"); // no cassette reaches it
          }
          c = static_cast<int16_t>(coord);
        }
      }
      routes_.push_back(r);
    }
  }
  ctx.log().info("vmm3: {} geometry ({} x {} pixels), {} cassettes, gaps: clustering {} ns, "
                 "matching {} ns, wire {}, strip {}; split multi-events {}",
                 config_.geometryName, config_.width(), config_.height(), config_.hybrids.size(),
                 config_.clusteringTimeGapNs, config_.matchingTimeGapNs, config_.maxGapWire,
                 config_.maxGapStrip, config_.splitMultiEvents ? "on" : "off");
  if (ctx.calibration().is_null()) {
    ctx.log().info("vmm3: no calibration: identity ADC, the ESS TDC model for times");
  } else {
    for (const std::string &h : calibration_.uncovered()) {
      ctx.log().warn("vmm3: calibration {} has no entry for {}: identity", ctx.calibrationSource(),
                     h);
    }
  }
}

void Vmm3Module::process(const sdk::Packet &packet) noexcept {
  readout::EssHeader h;
  if (!parser_.parse(packet.data, packet.size, h) || h.payloadBytes == 0) {
    return;
  }
  std::array<int64_t, static_cast<size_t>(HitError::Count_)> hitErrors{};
  std::array<int64_t, 2> invalidCoord{};
  int64_t adcMax = 0;
  const bool whole =
      forEachReadout(h.payload, h.payloadBytes, parserCounters_, [&](const Vmm3Readout &r) {
        const int16_t to = routeOf_(r);
        if (to < 0) [[unlikely]] {
          // Ring, Fen, Hybrid: a readout of no cassette, counted by partition 0.
          hitErrors[static_cast<size_t>(-1 - to)] += partition_ == 0 ? 1 : 0;
          return;
        }
        const VmmRoute &route = routes_[static_cast<size_t>(to)];
        const int16_t coord = route.coord[r.channel];
        if (coord < 0) [[unlikely]] {
          if (coord != VmmRoute::kOtherPartition) {
            ++hitErrors[static_cast<size_t>(
                coord == VmmRoute::kWireChannel ? HitError::WireChannel : HitError::StripChannel)];
            ++invalidCoord[route.plane];
          }
          return;
        }
        if (r.otadc < route.threshold) {
          ++hitErrors[static_cast<size_t>(HitError::Threshold)];
          return;
        }
        uint64_t timeNs = 0;
        uint16_t adc = r.otadc & kMaxAdc;
        if (route.calibration == nullptr) {
          timeNs = Vmm3Calibration::identityTimeNs(r.timeHigh, r.timeLow, r.tdc);
        } else {
          const Vmm3Calibration::Channel &c = route.calibration[r.channel];
          const auto ns = static_cast<uint64_t>(readout::ticksToNs(r.timeHigh, r.timeLow));
          timeNs = Vmm3Calibration::timeNs(c, ns, r.tdc);
          adc = Vmm3Calibration::adc(c, adc);
        }
        static_assert(kMaxAdc == 1023);
        adcMax += (adc + 1U) >> 10; // adc >= kMaxAdc: no weight exceeds it
        route.hits.insert(timeNs, static_cast<uint16_t>(coord), adc);
      });
  if (!whole) {
    return;
  }
  int64_t geometryErrors = 0;
  for (size_t i = 0; i < hitErrors.size(); ++i) {
    if (hitErrors[i] != 0) {
      counters_.hitErrors[i]->add(hitErrors[i]);
      geometryErrors += i == static_cast<size_t>(HitError::Threshold) ? 0 : hitErrors[i];
    }
  }
  counters_.validation.add(geometryErrors);
  counters_.invalidCoord[0]->add(invalidCoord[0]);
  counters_.invalidCoord[1]->add(invalidCoord[1]);
  counters_.adcMax.add(adcMax);
  formEvents(h);
}

void Vmm3Module::formEvents(const readout::EssHeader &h) noexcept {
  std::array<int64_t, static_cast<size_t>(EventError::Count_)> errors{};
  int64_t matched = 0;
  int64_t wireOnly = 0;
  int64_t stripOnly = 0;
  int64_t published = 0;
  reduction::BuilderStats stats{};
  readout::TofTally tofTally; // in registers, added once
  const auto onEvent = [&](const reduction::Event2D &e) {
    const bool hasA = !e.a.empty();
    const bool hasB = !e.b.empty();
    if (!hasA && !hasB) {
      return;
    }
    EventError fault = EventError::Count_;
    if (!hasA || !hasB) {
      fault = EventError::NoCoincidence;
      wireOnly += hasB ? 1 : 0;
      stripOnly += hasA ? 1 : 0;
    } else if (e.b.hasGap(config_.maxGapWire)) {
      fault = EventError::WireGap;
    } else if (e.a.hasGap(config_.maxGapStrip)) {
      fault = EventError::StripGap;
    }
    if (fault != EventError::Count_) {
      ++errors[static_cast<size_t>(fault)];
      return;
    }
    ++matched;
    readout::Tof t;
    if (!tof_.compute(readout::eventTimeNs(e.timeStart()), h, t, tofTally)) {
      return;
    }
    const uint32_t pixel =
        config_.pixel(centreCoordinate(e.a.coordCenter()), centreCoordinate(e.b.coordCenter()));
    if (pixel == 0) {
      ++errors[static_cast<size_t>(EventError::Pixel)];
      return;
    }
    events_.add(t.pulseTimeNs, t.tofNs, static_cast<int32_t>(pixel));
    ++published;
  };
  for (size_t b = partition_; b < builders_.size(); b += partitions_) { // this partition's
    const reduction::BuilderStats s = builders_[b].flushEach(onEvent);
    stats.spanTooLarge += s.spanTooLarge;
    stats.splitSpanTooLarge += s.splitSpanTooLarge;
    stats.discardedSpanTooLarge += s.discardedSpanTooLarge;
  }
  for (size_t i = 0; i < errors.size(); ++i) {
    if (errors[i] != 0) {
      counters_.eventErrors[i]->add(errors[i]);
    }
  }
  tof_.add(tofTally);
  counters_.matched.add(matched);
  counters_.wireOnly.add(wireOnly);
  counters_.stripOnly.add(stripOnly);
  counters_.events.add(published);
  counters_.spanTooLarge.add(stats.spanTooLarge);
  counters_.split.add(stats.splitSpanTooLarge);
  counters_.splitDiscarded.add(stats.discardedSpanTooLarge);
}

} // namespace efu::vmm3
