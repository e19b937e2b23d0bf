// SPDX-License-Identifier: BSD-2-Clause
// The trex module: ESS Multi-Grid readouts → hits → events with the ESS EFU's pixel ids.
#include "modules/trex/TrexModule.h"

#include "modules/trex/TrexGeometry.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
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
      waiting(ctx.gauge("cluster.waiting")), timeFar(ctx.counter("readouts.time_far")),
      stale(ctx.counter("cluster.bound.stale")), full(ctx.counter("cluster.bound.full")),
      openHits(ctx.counter("cluster.bound.open_hits")),
      eventHits(ctx.counter("cluster.bound.event_hits")),
      timeBack(ctx.counter("cluster.bound.time_back")),
      pulseBack(ctx.streamCounter("cluster.bound.pulse_back")),
      silentPlanes(ctx.gauge("cluster.silent_planes")) {}

TrexModule::TrexModule(sdk::ModuleContext &ctx)
    : sink_(ctx.events()), config_(parseTrexConfig(ctx.config(), ctx.configSource())),
      headerCounters_(ctx), parser_(headerCounters_, {readout::kTypeTrex}, config_.maxPulseTimeNs),
      tofCounters_(ctx), tof_(tofCounters_, kMaxTofNs), parserCounters_(ctx), counters_(ctx),
      routes_(config_), log_(ctx.log()) {
  ctx.setLossCounters(headerCounters_.seqLost, headerCounters_.seqExpected);
  builders_.reserve(routes_.builderKeys().size());
  for (size_t b = 0; b < routes_.builderKeys().size(); ++b) {
    builders_.emplace_back(kBuilderParams); // each its own reserved storage
  }
  routes_.bind(builders_); // builders_ is not resized again
  silent_.assign(builders_.size(), 0);
  // Partitions: builder b is partition b % N's, which spreads the configured builders evenly.
  // A readout whose (ring, FEN) has no builder is only counted (error_mapping): the partition
  // of its raw (ring, FEN) does it, so it is counted once.
  const unsigned n = ctx.partitions();
  const unsigned self = ctx.partition();
  partitioned_ = n > 1;
  for (size_t ring = 0; ring <= readout::kMaxFiber / 2; ++ring) {
    for (size_t fen = 0; fen < kOwnerFens; ++fen) {
      const size_t raw = ring * kOwnerFens + fen;
      const int b =
          ring <= kMaxRing && fen <= kMaxFen
              ? routes_.builderOf(builderKey(static_cast<uint8_t>(ring), static_cast<uint8_t>(fen)))
              : -1;
      mine_[raw] = (b >= 0 ? static_cast<size_t>(b) : raw) % n == self ? 1 : 0;
    }
  }
  size_t owned = 0;
  for (size_t b = 0; b < builders_.size(); ++b) {
    owned += b % n == self ? 1 : 0;
  }
  who_ = n > 1 ? fmt::format("trex (partition {} of {})", self, n) : "trex";
  if (self == 0) {
    warnWrappingGrids(ctx); // about the file: said once, not by every partition
  }
  ctx.log().info("trex: {} geometry ({} x {} x {} pixels), {} hybrids, {} event builders; "
                 "events wait for later data as in the ESS EFU, formed at shutdown at the latest; "
                 "a builder holds at most {} clusters, none 1 s older than its latest hit",
                 config_.geometryName, config_.sizeX, config_.sizeY, config_.sizeZ,
                 config_.hybrids.size(), builders_.size(), kBuilderParams.maxWaiting);
  if (n > 1) {
    ctx.log().info("{}: {} of the {} event builders (builder % {} == {})", who_, owned,
                   builders_.size(), n, self);
  }
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
  if (seen_ && h.pulseTimeNs < last_.pulseTimeNs) {
    // A timing reset: what waits is formed against the pulses it came with, and every builder
    // starts anew (the ESS EFU's builders would take every later cluster as ready at once).
    counters_.pulseBack.add(1);
    formEvents(Form::Restart);
  }
  // Readouts further than MaxTOF from the pulse can form no event; one such time would hold
  // the builder's latest time far from the stream's (README, "Bounds").
  const int64_t earliestNs = h.pulseTimeNs - kMaxTofNs;
  const int64_t latestNs = h.pulseTimeNs + kMaxTofNs;
  int64_t mapping = 0, belowMin = 0, coordinate = 0, far = 0;
  // The loop made twice, with and without the partition test: a hit's one-byte store may alias
  // anything, so GCC would reload partitioned_ and test it per readout.
  const auto readouts = [&](auto partitioned) {
    return vmm3::forEachReadout(
        h.payload, h.payloadBytes, parserCounters_, [&](const vmm3::Vmm3Readout &r) {
          // Another partition's readout: skipped before anything is counted (checkReadout left
          // fiber and FEN <= 23).
          if constexpr (decltype(partitioned)::value) {
            if (mine_[size_t{r.fiber} / 2 * kOwnerFens + r.fen] == 0) {
              return;
            }
          }
          // Rings above 10 and FENs above 13 index past the ESS EFU's tables: refused here as
          // unmapped (README, deviations).
          const int16_t route = routes_.routeOf(r);
          if (route < 0) {
            ++mapping;
            return;
          }
          const TrexRoute &to = routes_.route(route);
          const auto adc = static_cast<uint16_t>(r.otadc & vmm3::kMaxAdc);
          if (adc < to.minAdc) {
            ++belowMin;
            return;
          }
          const uint16_t coord = to.coord[r.channel];
          if (coord == kInvalidCoord) {
            ++coordinate;
            return;
          }
          const int64_t timeNs = readout::ticksToNs(r.timeHigh, r.timeLow);
          if (timeNs < earliestNs || timeNs > latestNs) {
            ++far;
            return;
          }
          to.hits.insert(reduction::Hit{static_cast<uint64_t>(timeNs), coord, adc, to.plane});
        });
  };
  const bool whole = partitioned_ ? readouts(std::true_type{}) : readouts(std::false_type{});
  if (!whole) {
    return;
  }
  last_ = h;
  seen_ = true;
  counters_.mapping.add(mapping);
  counters_.belowMin.add(belowMin);
  counters_.coordinate.add(coordinate);
  counters_.timeFar.add(far);
  formEvents(Form::Ready);
}

void TrexModule::tick(int64_t nowNs) noexcept {
  countBounds();
  watchPlanes(nowNs);
  counters_.waiting.set(static_cast<int64_t>(waiting()));
}

void TrexModule::flush() noexcept {
  if (seen_) {
    formEvents(Form::All);
  }
  countBounds();
  counters_.waiting.set(static_cast<int64_t>(waiting()));
}

// The builders' bound statistics since the last call, into the counters.
void TrexModule::countBounds() noexcept {
  reduction::StreamingBoundStats sum;
  for (const reduction::StreamingBuilder2D &b : builders_) {
    sum.stale += b.bounds().stale;
    sum.full += b.bounds().full;
    sum.openHits += b.bounds().openHits;
    sum.eventHits += b.bounds().eventHits;
    sum.stepBack += b.bounds().stepBack;
  }
  counters_.stale.add(sum.stale - counted_.stale);
  counters_.full.add(sum.full - counted_.full);
  counters_.openHits.add(sum.openHits - counted_.openHits);
  counters_.eventHits.add(sum.eventHits - counted_.eventHits);
  counters_.timeBack.add(sum.stepBack - counted_.stepBack);
  counted_ = sum;
}

// A plane of a builder that has received nothing for 1 s of the other plane's time (a dead
// hybrid, hybrids missing from Config) is counted in the gauge and said once when it goes silent
// and once when it receives again, at most one line per 10 s (the rest counted and said later).
// A partition watches its own builders only: the others' never get a hit, so never go silent.
void TrexModule::watchPlanes(int64_t nowNs) noexcept {
  static constexpr const char *kPlaneName[2] = {"wires", "grids"};
  int64_t silentNow = 0;
  std::string went, back;
  for (size_t b = 0; b < builders_.size(); ++b) {
    for (int plane = 0; plane < 2; ++plane) {
      const auto bit = static_cast<uint8_t>(1U << plane);
      const bool silent = builders_[b].silent(plane);
      silentNow += silent ? 1 : 0;
      if (silent == ((silent_[b] & bit) != 0)) {
        continue;
      }
      silent_[b] = static_cast<uint8_t>(silent_[b] ^ bit);
      const unsigned key = routes_.builderKeys()[b];
      std::string &list = silent ? went : back;
      list += fmt::format("{}ring {} FEN {} {}", list.empty() ? "" : ", ", key / kMaxFen,
                          key % kMaxFen, kPlaneName[plane]);
    }
  }
  counters_.silentPlanes.set(silentNow);
  if (went.empty() && back.empty()) {
    if (silentLog_.dueReport(nowNs)) {
      log_.warn("{}: {} further changes of silent planes (the last: {})", who_,
                silentLog_.suppressed, silentLog_.last);
      silentLog_.reported();
    }
    return;
  }
  std::string line =
      went.empty() ? fmt::format("{}: event builders receive again: {}", who_, back)
                   : fmt::format("{}: event builders with a plane that has received nothing for "
                                 "1 s of the other's data (its clusters are formed alone, "
                                 "cluster.bound.stale): {}{}{}",
                                 who_, went, back.empty() ? "" : "; receiving again: ", back);
  if (silentLog_.allow(nowNs)) {
    log_.warn("{}", line);
  } else {
    silentLog_.last = std::move(line);
  }
}

// Every builder given hits is flushed (one that was not has nothing new to form), then each
// builder's events in key order, checked as the ESS EFU checks them, against the pulses of the
// datagram that formed them. Form::All (the shutdown) and Form::Restart (a pulse back) form
// everything that waits in every builder.
void TrexModule::formEvents(Form how) noexcept {
  const bool full = how != Form::Ready;
  int64_t noCoincidence = 0, wireOnly = 0, gridOnly = 0, gridSpan = 0, matched = 0, pixel = 0,
          published = 0, formed = 0;
  for (size_t b = 0; b < builders_.size(); ++b) {
    if (!full && !builders_[b].received()) {
      continue;
    }
    // The events as the builder formed them, in the storage every builder writes to (no copy).
    if (how == Form::Restart) {
      builders_[b].restart(events_);
    } else {
      builders_[b].flush(events_, full);
    }
    const std::span<const reduction::Event2D> events = events_.events();
    formed += static_cast<int64_t>(events.size());
    for (const reduction::Event2D &e : events) {
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
  if (how == Form::All) {
    counters_.flushed.add(formed);
  }
}

} // namespace efu::trex
