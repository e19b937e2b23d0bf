// SPDX-License-Identifier: BSD-2-Clause
// The nmx module: ESS NMX readouts → hits → events with the ESS EFU's uTPC pixel ids.
#include "modules/nmx/NmxModule.h"

#include "modules/nmx/NmxCalibration.h"
#include "modules/nmx/NmxGeometry.h"

#include <cstring>
#include <string>

namespace efu::nmx {

namespace {

using vmm3::ReadoutError;

constexpr const char *kHitErrorNames[] = {"geometry.ring_errors", "geometry.fen_errors",
                                          "geometry.hybrid_mapping_errors", "geometry.adc_errors"};
static_assert(std::size(kHitErrorNames) == static_cast<size_t>(HitError::Count_));
static_assert(vmm3::RouteTable::faultsLead<HitError>());

constexpr const char *kEventErrorNames[] = {
    "cluster.span.x_too_large", "cluster.span.x_too_small", "cluster.span.time_too_large",
    "cluster.span.y_too_large", "cluster.span.y_too_small", "geometry.pixel_errors"};
static_assert(std::size(kEventErrorNames) == static_cast<size_t>(EventError::Count_));

constexpr int64_t kMaxTofNs = 1'000'000'000; // the ESS EFU's MaxTOFNS (not read from the file)

reduction::BuilderParams paramsOf(const NmxConfig &c) {
  reduction::BuilderParams p;
  p.clusterTimeGapNs = c.clusteringTimeGapNs;
  p.matchTimeGapNs = c.matchingTimeGapNs;
  p.splitMultiEvents = c.splitMultiEvents;
  p.coefficientLow = c.coefficientLow;
  p.coefficientHigh = c.coefficientHigh;
  return p;
}

const NmxConfig &checked(const NmxConfig &c, sdk::ModuleContext &ctx) {
  if (!ctx.calibration().is_null()) {
    checkNmxCalibration(ctx.calibration(), ctx.calibrationSource(), c, ctx.configSource());
  }
  return c;
}

} // namespace

NmxCounters::NmxCounters(sdk::ModuleContext &ctx)
    : validation(ctx.counter("geometry.validation_errors")),
      noCoincidence(ctx.counter("cluster.no_coincidence")),
      xOnly(ctx.counter("cluster.matched_x_only")), yOnly(ctx.counter("cluster.matched_y_only")),
      matched(ctx.counter("cluster.matched_clusters")),
      spanTooLarge(ctx.counter("cluster.matcherstats.span_too_large")),
      discarded(ctx.counter("cluster.matcherstats.discared_span_too_large")),
      split(ctx.counter("cluster.matcherstats.split_span_too_large")),
      matchAttempts(ctx.streamCounter("cluster.matcherstats.match_attempt_count")),
      events(ctx.counter("events.count")) {
  for (size_t i = 0; i < hitErrors.size(); ++i) {
    hitErrors[i] = &ctx.counter(kHitErrorNames[i]);
  }
  for (size_t i = 0; i < eventErrors.size(); ++i) {
    eventErrors[i] = &ctx.counter(kEventErrorNames[i]);
  }
}

NmxModule::NmxModule(sdk::ModuleContext &ctx)
    : events_(ctx.events()),
      config_(checked(parseNmxConfig(ctx.config(), ctx.configSource()), ctx)), headerCounters_(ctx),
      parser_(headerCounters_, {readout::kTypeNmx}, config_.maxPulseTimeNs), tofCounters_(ctx),
      tof_(tofCounters_, kMaxTofNs), parserCounters_(ctx), counters_(ctx),
      partition_(ctx.partition()), partitions_(ctx.partitions()),
      builders_(config_.builders(), reduction::EventBuilder2D(paramsOf(config_))),
      routeOf_([this](uint8_t ring, uint8_t fen, uint8_t vmm) {
        const int16_t slot = config_.slot(ring, fen, vmm >> 1);
        return slot < 0 ? -1 : slot * 2 + (vmm & 1);
      }) {
  ctx.setLossCounters(headerCounters_.seqLost, headerCounters_.seqExpected);
  for (const Hybrid &hybrid : config_.hybrids) {
    for (uint8_t asic = 0; asic < 2; ++asic) {
      VmmRoute r;
      r.builder = hybrid.panel % partitions_ == partition_ ? &builders_[hybrid.panel] : nullptr;
      // coordinateOf() is linear in the channel, rising or (ReversedChannels) falling.
      r.coordBase = coordinateOf(hybrid, asic, 0);
      r.coordStep = static_cast<int32_t>(coordinateOf(hybrid, asic, 1)) - r.coordBase;
      r.plane = hybrid.plane;
      routes_.push_back(r);
    }
  }
  ctx.log().info("nmx: {} x {} pixels, {} hybrids, {} panels, gaps: clustering {} ns, matching "
                 "{} ns; DefaultMinADC {}; split multi-events {}",
                 config_.sizeX, config_.sizeY, config_.hybrids.size(), config_.numPanels,
                 config_.clusteringTimeGapNs, config_.matchingTimeGapNs, config_.minAdc,
                 config_.splitMultiEvents ? "on" : "off");
  if (!ctx.calibration().is_null()) {
    ctx.log().info("nmx: calibration {} checked as the ESS EFU checks it; not applied (the ESS "
                   "NMX corrects neither ADC nor time)",
                   ctx.calibrationSource());
  }
}

void NmxModule::process(const sdk::Packet &packet) noexcept {
  readout::EssHeader h;
  if (!parser_.parse(packet.data, packet.size, h)) {
    return;
  }
  // The ESS EFU runs every panel's matcher once per datagram with a valid header (a stream
  // counter: the same in every partition).
  counters_.matchAttempts.add(config_.numPanels);
  std::array<int64_t, static_cast<size_t>(HitError::Count_)> hitErrors{};
  const bool whole = vmm3::forEachReadout(
      h.payload, h.payloadBytes, parserCounters_, [&](const vmm3::Vmm3Readout &r) {
        const uint16_t adc = vmm3::adcOf(r);
        const int16_t to = routeOf_(r);
        if (to < 0) [[unlikely]] {
          // Ring, Fen, Hybrid: a readout of no panel, counted by partition 0.
          hitErrors[static_cast<size_t>(-1 - to)] += partition_ == 0 ? 1 : 0;
          return;
        }
        const VmmRoute &route = routes_[static_cast<size_t>(to)];
        if (route.builder == nullptr) {
          return; // another partition's panel
        }
        if (adc < config_.minAdc) {
          ++hitErrors[static_cast<size_t>(HitError::Adc)];
          return;
        }
        const auto timeNs = static_cast<uint64_t>(readout::ticksToNs(r.timeHigh, r.timeLow));
        const auto coord = static_cast<uint16_t>(route.coordBase + route.coordStep * r.channel);
        route.builder->insert(reduction::Hit{timeNs, coord, adc, route.plane});
      });
  if (!whole) {
    return;
  }
  int64_t geometryErrors = 0;
  for (size_t i = 0; i < hitErrors.size(); ++i) {
    if (hitErrors[i] != 0) {
      counters_.hitErrors[i]->add(hitErrors[i]);
      geometryErrors += hitErrors[i];
    }
  }
  counters_.validation.add(geometryErrors);
  formEvents(h);
}

void NmxModule::formEvents(const readout::EssHeader &h) noexcept {
  std::array<int64_t, static_cast<size_t>(EventError::Count_)> errors{};
  int64_t noCoincidence = 0;
  int64_t xOnly = 0;
  int64_t yOnly = 0;
  int64_t matched = 0;
  int64_t published = 0;
  reduction::BuilderStats stats{};
  readout::TofTally tofTally; // in registers, added once
  const auto onEvent = [&](const reduction::Event2D &e) {
    if (e.empty()) {
      return;
    }
    if (!e.bothPlanes()) {
      ++noCoincidence;
      yOnly += e.a.empty() ? 1 : 0;
      xOnly += e.b.empty() ? 1 : 0;
      return;
    }
    const uint16_t spanX = e.a.coordSpan();
    const uint16_t spanY = e.b.coordSpan();
    EventError fault = EventError::Count_;
    if (config_.maxSpanX < spanX) {
      fault = EventError::SpanXLarge;
    } else if (config_.minSpanX > spanX) {
      fault = EventError::SpanXSmall;
    } else if (NmxConfig::kMaxTimeSpanNs < e.a.timeEnd - e.a.timeStart + 1) {
      fault = EventError::TimeSpan;
    } else if (config_.maxSpanY < spanY) {
      fault = EventError::SpanYLarge;
    } else if (config_.minSpanY > spanY) {
      fault = EventError::SpanYSmall;
    } else if (NmxConfig::kMaxTimeSpanNs < e.b.timeEnd - e.b.timeStart + 1) {
      fault = EventError::TimeSpan;
    }
    if (fault != EventError::Count_) {
      ++errors[static_cast<size_t>(fault)];
      return;
    }
    ++matched;
    // The ESS NMX measures the time of flight from the event's LATEST hit.
    const uint64_t end = e.a.timeEnd > e.b.timeEnd ? e.a.timeEnd : e.b.timeEnd;
    readout::Tof t;
    if (!tof_.compute(readout::eventTimeNs(end), h, t, tofTally)) {
      return;
    }
    const uint32_t pixel = config_.pixel(e.a.utpcCoord, e.b.utpcCoord);
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
  tof_.add(tofTally);
  for (size_t i = 0; i < errors.size(); ++i) {
    if (errors[i] != 0) {
      counters_.eventErrors[i]->add(errors[i]);
    }
  }
  counters_.noCoincidence.add(noCoincidence);
  counters_.xOnly.add(xOnly);
  counters_.yOnly.add(yOnly);
  counters_.matched.add(matched);
  counters_.events.add(published);
  counters_.spanTooLarge.add(stats.spanTooLarge);
  counters_.split.add(stats.splitSpanTooLarge);
  counters_.discarded.add(stats.discardedSpanTooLarge);
}

} // namespace efu::nmx
