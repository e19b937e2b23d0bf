// SPDX-License-Identifier: BSD-2-Clause
// The trex module: ESS Multi-Grid readouts → hits → events with the ESS EFU's pixel ids.
#include "modules/trex/TrexModule.h"

#include "modules/trex/TrexGeometry.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace efu::trex {

namespace {
constexpr int64_t kMaxTofNs = 1'000'000'000; // the ESS EFU's MaxTOFNS default (not read)
} // namespace

TrexCounters::TrexCounters(sdk::ModuleContext &ctx)
    : adcMax(ctx.counter("readouts.adc_max")), mapping(ctx.counter("readouts.error_mapping")),
      belowMin(ctx.counter("readouts.adc_below_min")),
      coordinate(ctx.counter("readouts.error_coordinate")),
      matched(ctx.counter("cluster.matched_clusters")),
      noCoincidence(ctx.counter("cluster.no_coincidence")),
      wireOnly(ctx.counter("cluster.matched_wire_only")),
      gridOnly(ctx.counter("cluster.matched_grid_only")),
      gridSpan(ctx.counter("cluster.too_large_grid_span")),
      pixelErrors(ctx.counter("events.pixel_errors")),
      flushed(ctx.counter("events.formed_at_shutdown")), events(ctx.counter("events.count")),
      waiting(ctx.gauge("cluster.waiting")) {}

TrexModule::TrexModule(sdk::ModuleContext &ctx)
    : sink_(ctx.events()), config_(parseTrexConfig(ctx.config(), ctx.configSource())),
      headerCounters_(ctx), parser_(headerCounters_, {readout::kTypeTrex}, config_.maxPulseTimeNs),
      tofCounters_(ctx), tof_(tofCounters_, kMaxTofNs), parserCounters_(ctx), counters_(ctx) {
  ctx.setLossCounters(headerCounters_.seqLost, headerCounters_.seqExpected);
  builderOf_.fill(-1);
  for (const TrexHybrid &h : config_.hybrids) {
    builderOf_[builderKey(h.ring, h.fen)] = 0;
  }
  for (int16_t &b : builderOf_) {
    if (b == 0) {
      b = static_cast<int16_t>(builders_.size());
      builders_.emplace_back(reduction::StreamingParams{});
    }
  }
  touched_.assign(builders_.size(), 0);
  events_.reserve(256);
  warnWrappingGrids(ctx);
  ctx.log().info("trex: {} geometry ({} x {} x {} pixels), {} hybrids, {} event builders; "
                 "events wait for later data as in the ESS EFU, formed at shutdown at the latest",
                 config_.geometryName, config_.sizeX, config_.sizeY, config_.sizeZ,
                 config_.hybrids.size(), builders_.size());
}

// A rotated vessel's grid coordinate is YOffset - y in 16 bits (the ESS arithmetic): grids with
// y above YOffset wrap to ~65535 and are pixel errors. The shipped let.json (rotated, short, no
// YOffset) can so form pixels on grid 0 only; the ESS EFU does the same, efu says so once.
void TrexModule::warnWrappingGrids(sdk::ModuleContext &ctx) const {
  std::vector<std::string> warned;
  for (const TrexHybrid &h : config_.hybrids) {
    if (!h.rotated || isWire(config_.instrument, h.hybrid) ||
        std::find(warned.begin(), warned.end(), h.vesselId) != warned.end()) {
      continue;
    }
    int grids = 0;
    int wrapping = 0;
    for (uint8_t asic = 0; asic < 2; ++asic) {
      for (uint8_t channel = 0; channel < 64; ++channel) {
        const uint16_t y =
            gridCoord(config_.instrument, h.hybrid, asic, channel, 0, false, h.isShort);
        if (y != kInvalidCoord) {
          ++grids;
          wrapping += y > h.yOffset ? 1 : 0;
        }
      }
    }
    if (wrapping > 0) {
      warned.push_back(h.vesselId);
      ctx.log().warn("trex: {}: Vessel_Config.{} is rotated with YOffset {}: {} of the {} grid "
                     "channels of Ring {} FEN {} Hybrid {} give a y below 0, which wraps (as in "
                     "the ESS EFU): their events are events.pixel_errors; a YOffset of at least "
                     "the highest grid keeps them",
                     ctx.configSource(), h.vesselId, h.yOffset, wrapping, grids, h.ring, h.fen,
                     h.hybrid);
    }
  }
}

size_t TrexModule::waiting() const noexcept {
  size_t n = 0;
  for (const reduction::StreamingBuilder2D &b : builders_) {
    n += b.pendingHits() + b.waitingClusters();
  }
  return n;
}

void TrexModule::process(const sdk::Packet &packet) noexcept {
  readout::EssHeader h;
  if (!parser_.parse(packet.data, packet.size, h) || h.payloadBytes == 0) {
    return;
  }
  int64_t mapping = 0, belowMin = 0, coordinate = 0;
  bool any = false;
  const bool whole = vmm3::forEachReadout(
      h.payload, h.payloadBytes, parserCounters_, [&](const vmm3::Vmm3Readout &r) {
        const auto ring = static_cast<uint8_t>(r.fiber / 2);
        const auto hybridId = static_cast<uint8_t>(r.vmm >> 1);
        // Rings above 10 and FENs above 13 index past the ESS EFU's tables: refused here as
        // unmapped (README, deviations).
        const int16_t slot =
            ring > kMaxRing || r.fen > kMaxFen ? -1 : config_.slot(ring, r.fen, hybridId);
        if (slot < 0) {
          ++mapping;
          return;
        }
        const TrexHybrid &hy = config_.hybrids[static_cast<size_t>(slot)];
        const auto adc = static_cast<uint16_t>(r.otadc & vmm3::kMaxAdc);
        if (adc < hy.minAdc) {
          ++belowMin;
          return;
        }
        const auto asic = static_cast<uint8_t>(r.vmm & 1);
        const bool wire = isWire(config_.instrument, hybridId);
        const uint16_t coord = wire ? wireCoord(config_.instrument, ring, r.fen, hybridId, asic,
                                                r.channel, hy.xOffset, hy.rotated)
                                    : gridCoord(config_.instrument, hybridId, asic, r.channel,
                                                hy.yOffset, hy.rotated, hy.isShort);
        if (coord == kInvalidCoord) {
          ++coordinate;
          return;
        }
        const auto b = static_cast<size_t>(builderOf_[builderKey(ring, r.fen)]);
        builders_[b].insert(
            reduction::Hit{static_cast<uint64_t>(readout::ticksToNs(r.timeHigh, r.timeLow)), coord,
                           adc, static_cast<uint8_t>(wire ? 0 : 1)});
        touched_[b] = 1;
        any = true;
      });
  if (!whole) {
    return;
  }
  last_ = h;
  seen_ = true;
  counters_.mapping.add(mapping);
  counters_.belowMin.add(belowMin);
  counters_.coordinate.add(coordinate);
  if (any) {
    formEvents(false);
  }
}

void TrexModule::tick(int64_t /*nowNs*/) noexcept {
  counters_.waiting.set(static_cast<int64_t>(waiting()));
}

void TrexModule::flush() noexcept {
  if (seen_) {
    formEvents(true);
  }
  counters_.waiting.set(static_cast<int64_t>(waiting()));
}

// Every builder given hits is flushed (one that was not has nothing new to form), then each
// builder's events in key order, checked as the ESS EFU checks them, against the pulses of the
// datagram that formed them.
void TrexModule::formEvents(bool full) noexcept {
  int64_t noCoincidence = 0, wireOnly = 0, gridOnly = 0, gridSpan = 0, matched = 0, pixel = 0,
          published = 0, formed = 0;
  for (size_t b = 0; b < builders_.size(); ++b) {
    if (!full && touched_[b] == 0) {
      continue;
    }
    touched_[b] = 0;
    events_.clear();
    builders_[b].flush(events_, full);
    formed += static_cast<int64_t>(events_.size());
    for (const reduction::Event2D &e : events_) {
      if (e.empty()) {
        continue;
      }
      if (!e.bothPlanes()) {
        ++noCoincidence;
        gridOnly += e.b.empty() ? 0 : 1;
        wireOnly += e.a.empty() ? 0 : 1;
        continue;
      }
      if (e.b.coordSpan() > kMaxGridsSpan) {
        ++gridSpan;
        continue;
      }
      ++matched;
      readout::Tof t;
      if (!tof_.compute(readout::eventTimeNs(e.timeStart()), last_, t)) {
        continue;
      }
      uint16_t xandz = 0, y = 0;
      uint32_t id = 0;
      if (roundCentre(e.a.coordCenter(), xandz) && roundCentre(e.b.coordCenter(), y)) {
        id = config_.pixel(xandz / kDepth, y, xandz % kDepth);
      }
      if (id == 0) {
        ++pixel;
        continue;
      }
      sink_.add(t.pulseTimeNs, t.tofNs, static_cast<int32_t>(id));
      ++published;
    }
  }
  counters_.noCoincidence.add(noCoincidence);
  counters_.wireOnly.add(wireOnly);
  counters_.gridOnly.add(gridOnly);
  counters_.gridSpan.add(gridSpan);
  counters_.matched.add(matched);
  counters_.pixelErrors.add(pixel);
  counters_.events.add(published);
  if (full) {
    counters_.flushed.add(formed);
  }
}

} // namespace efu::trex
