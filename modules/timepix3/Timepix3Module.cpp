// SPDX-License-Identifier: BSD-2-Clause
// The timepix3 module: words → timing and hits → clusters → events, per datagram, with the ESS
// EFU's rules and counters (modules/timepix3/README.md, "Processing, in order").
#include "modules/timepix3/Timepix3Module.h"

#include <algorithm>
#include <cmath>

namespace efu::timepix3 {

namespace {
/// The most words a UDP datagram can hold.
constexpr size_t kMaxWords = 65536 / kWordBytes;

int64_t distance(int64_t a, int64_t b) noexcept {
  return a > b ? a - b : b - a;
}
} // namespace

// Stream counters: what every partition reads alike (process(), followTdcs()).
Timepix3Counters::Timepix3Counters(sdk::ModuleContext &ctx)
    : readouts(ctx.streamCounter("readouts.count")),
      pixels(ctx.counter("readouts.pixel_readout_count")),
      tdc1Rising(ctx.streamCounter("readouts.tdc.tdc1rising_readout_count")),
      tdc1Falling(ctx.streamCounter("readouts.tdc.tdc1falling_readout_count")),
      tdc2Rising(ctx.streamCounter("readouts.tdc.tdc2rising_readout_count")),
      tdc2Falling(ctx.streamCounter("readouts.tdc.tdc2falling_readout_count")),
      tdcUnknown(ctx.streamCounter("readouts.tdc.unknown_tdc_type_count")),
      tdcs(ctx.streamCounter("readouts.tdc.tdc_readout_count")),
      tdcDropped(ctx.streamCounter("readouts.tdc.tdc_readout_dropped")),
      evrs(ctx.streamCounter("readouts.evr.evr_readout_count")),
      evrDropped(ctx.streamCounter("readouts.evr.evr_readout_dropped")),
      undefined(ctx.counter("readouts.undefined_readout_count")),
      sizeErrors(ctx.streamCounter("readouts.errors.size")),
      missTdc(ctx.streamCounter("handlers.timeingevent.miss_tdc_count")),
      missEvr(ctx.streamCounter("handlers.timeingevent.miss_evr_count")),
      evrPairs(ctx.streamCounter("handlers.timeingevent.evr_pair_count")),
      tdcPairs(ctx.streamCounter("handlers.timeingevent.tdc_pair_count")),
      globalTimes(ctx.streamCounter("handlers.timeingevent.ess_global_time_count")),
      noGlobalTime(ctx.counter("handlers.pixelevent.no_global_time_error")),
      invalidPixel(ctx.counter("handlers.pixelevent.invalid_pixel_readout")),
      nextPulse(ctx.counter("handlers.pixelevent.event_time_next_pulse_count")),
      tofs(ctx.counter("handlers.pixelevent.tof_count")),
      tofNegative(ctx.counter("handlers.pixelevent.tof_neg")),
      tooSmall(ctx.counter("handlers.pixelevent.cluster_size_to_small")),
      prevTof(ctx.counter("handlers.pixelevent.prevtof_count")),
      spanTooShort(ctx.counter("handlers.pixelevent.time_span_too_short")),
      pixelErrors(ctx.counter("events.pixel_errors")), events(ctx.counter("events.count")) {}

Timepix3Module::Timepix3Module(sdk::ModuleContext &ctx)
    : config_(parseTimepix3Config(ctx.config(), ctx.configSource())), counters_(ctx),
      events_(ctx.events()), clusterer_(config_.maxTimeGapNs, config_.maxCoordinateGap),
      partition_(ctx.partition()), partitions_(ctx.partitions()) {
  hits_.reserve(kMaxWords);
  sorted_.reserve(kMaxWords);
  keys_.reserve(kMaxWords);
  clusterer_.reserve(kMaxWords);
  if (partition_ == 0) { // one line, not one per processing thread
    ctx.log().info("timepix3: {} x {} camera, image {} x {} (x{}), pulse period {} ns, time gap "
                   "{} ns, coordinate gap {}, EVR/TDC pairing within {} ns of arrival, camera "
                   "datagrams over {} partition(s)",
                   config_.xResolution, config_.yResolution, config_.width(), config_.height(),
                   config_.scaleUpFactor, config_.periodNs, config_.maxTimeGapNs,
                   config_.maxCoordinateGap, config_.pairWindowNs, partitions_);
  }
}

void Timepix3Module::process(const sdk::Packet &packet) noexcept {
  if (packet.size == kEvrBytes && packet.data[0] == kEvrType) {
    counters_.readouts.add();
    onEvr(packet.data, packet.rxTimeNs);
    return;
  }
  const size_t words = packet.size / kWordBytes;
  if (packet.size % kWordBytes != 0) {
    counters_.sizeErrors.add();
  }
  counters_.readouts.add(static_cast<int64_t>(words));
  // Every partition sees the same datagrams in the same order, so all agree on the owner.
  const bool mine = turn_ == partition_;
  turn_ = turn_ + 1 == partitions_ ? 0 : turn_ + 1;
  if (!mine) {
    followTdcs(packet, words);
    return;
  }
  hits_.clear();
  int64_t pixels = 0;
  for (size_t i = 0; i < words; ++i) {
    const uint64_t w = loadWord(packet.data + i * kWordBytes);
    switch (wordType(w)) {
    case kPixelType:
      ++pixels;
      onPixel(w);
      break;
    case kTdcType:
      counters_.tdcs.add();
      onTdc(decodeTdc(w), packet.rxTimeNs);
      break;
    default:
      counters_.undefined.add();
      break;
    }
  }
  counters_.pixels.add(pixels);
  if (!hits_.empty()) {
    formEvents();
  }
}

void Timepix3Module::followTdcs(const sdk::Packet &packet, size_t words) noexcept {
  // Another partition's datagram: only its TDC words matter here, as they move the time line the
  // next datagrams (ours among them) are timed by. Pixels and other words are its owner's.
  for (size_t i = 0; i < words; ++i) {
    const uint64_t w = loadWord(packet.data + i * kWordBytes);
    if (wordType(w) == kTdcType) {
      counters_.tdcs.add();
      onTdc(decodeTdc(w), packet.rxTimeNs);
    }
  }
}

void Timepix3Module::onEvr(const uint8_t *data, int64_t arrivalNs) noexcept {
  const EvrDatagram e = decodeEvr(data);
  counters_.evrs.add();
  if (evr_.seen) {
    const uint32_t next = evr_.counter + 1;
    if (e.counter > next) {
      counters_.missEvr.add(static_cast<int64_t>(e.counter - next));
    } else if ((e.counter < evr_.counter && e.counter != 0 && e.counter != 1) ||
               e.counter == evr_.counter) {
      counters_.evrDropped.add(); // repeated, or gone back other than by a restart at 0 or 1
      return;
    }
  }
  evr_ = {true, e.counter, evrPulseNs(e.pulseSeconds, e.pulseNanoseconds), arrivalNs};
  if (tdc_.seen && distance(tdc_.arrivalNs, arrivalNs) <= config_.pairWindowNs) {
    counters_.tdcPairs.add();
    counters_.globalTimes.add();
    global_ = {true, evr_.pulseNs, tdc_.pixelClockNs};
  }
}

void Timepix3Module::onTdc(const TdcWord &t, int64_t arrivalNs) noexcept {
  switch (t.kind) {
  case kTdc1Rising:
    counters_.tdc1Rising.add();
    break;
  case kTdc1Falling:
    counters_.tdc1Falling.add();
    break;
  case kTdc2Rising:
    counters_.tdc2Rising.add();
    break;
  case kTdc2Falling:
    counters_.tdc2Falling.add();
    break;
  default:
    counters_.tdcUnknown.add();
    return;
  }
  if (tdc_.seen) {
    const uint32_t next = uint32_t{tdc_.counter} + 1;
    if (t.counter > next) {
      counters_.missTdc.add(static_cast<int64_t>(t.counter - next));
    } else if ((t.counter < tdc_.counter && t.counter != 0 && t.counter != 1) ||
               t.counter == tdc_.counter) {
      counters_.tdcDropped.add();
      return;
    }
  }
  tdc_ = {true, t.counter, tdcOnPixelClock(tdcNs(t.stamp35, t.fine)), arrivalNs};
  if (evr_.seen && distance(evr_.arrivalNs, arrivalNs) <= config_.pairWindowNs) {
    counters_.evrPairs.add();
    counters_.globalTimes.add();
    global_ = {true, evr_.pulseNs, tdc_.pixelClockNs};
  }
}

void Timepix3Module::onPixel(uint64_t word) noexcept {
  const PixelWord p = decodePixel(word);
  const uint16_t x = pixelX(p);
  const uint16_t y = pixelY(p);
  // As the ESS EFU: checked against the scaled-up image, not the camera's resolution.
  if (x >= config_.width() || y >= config_.height()) {
    counters_.invalidPixel.add();
    return;
  }
  if (!global_.valid) {
    counters_.noGlobalTime.add();
    return;
  }
  const uint64_t t =
      pixelTimeNs(global_.pulseNs, global_.tdcPixelClockNs, pixelClockNs(p.spidr, p.toa, p.fToA));
  hits_.push_back({t, x, y, p.tot, static_cast<uint16_t>(hits_.size())});
}

void Timepix3Module::sortHits() noexcept {
  // A datagram's hits are 8191 at most and their tags are their arrival indices (13 bits). When
  // their times lie within 2^50 ns of the earliest, (time - earliest) << 13 | tag is one integer
  // whose order is time, then arrival: integers sort much faster than the pairs.
  static_assert(kMaxWords <= (1U << 13));
  uint64_t earliest = UINT64_MAX, latest = 0;
  for (const reduction::PixelHit &h : hits_) {
    earliest = std::min(earliest, h.timeNs);
    latest = std::max(latest, h.timeNs);
  }
  if (latest - earliest >= (uint64_t{1} << 50)) {
    std::sort(hits_.begin(), hits_.end(),
              [](const reduction::PixelHit &a, const reduction::PixelHit &b) {
                return a.timeNs != b.timeNs ? a.timeNs < b.timeNs : a.tag < b.tag;
              });
    return;
  }
  const size_t n = hits_.size();
  keys_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    keys_[i] = (hits_[i].timeNs - earliest) << 13 | hits_[i].tag;
  }
  std::sort(keys_.begin(), keys_.end());
  sorted_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    sorted_[i] = hits_[keys_[i] & 0x1FFF];
  }
  hits_.swap(sorted_);
}

void Timepix3Module::formEvents() noexcept {
  // Time order; equal times keep their order in the datagram (tag), so seeds are deterministic.
  const auto before = [](const reduction::PixelHit &a, const reduction::PixelHit &b) {
    return a.timeNs != b.timeNs ? a.timeNs < b.timeNs : a.tag < b.tag;
  };
  if (!std::is_sorted(hits_.begin(), hits_.end(), before)) {
    sortHits();
  }
  const double scale = config_.scaleUpFactor;
  const uint32_t width = config_.width();
  const uint32_t height = config_.height();
  const uint64_t pulseNs = global_.pulseNs;
  clusterer_.cluster(
      std::span<const reduction::PixelHit>(hits_), [&](const reduction::PixelCluster &c) {
        if (c.hits < config_.minEventSizeHits || c.weightSum < config_.minimumTotSum) {
          counters_.tooSmall.add();
          return;
        }
        if (c.timeSpanNs() < config_.minEventTimeSpanNs) {
          counters_.spanTooShort.add();
          return;
        }
        const auto tof = static_cast<int64_t>(c.timeStartNs - pulseNs);
        counters_.tofs.add();
        if (tof < 0) {
          counters_.tofNegative.add();
          return;
        }
        if (tof > config_.periodNs) {
          counters_.nextPulse.add();
          return;
        }
        // The centre, scaled up and truncated (ESS: through uint16_t).
        const double sx = c.xCenter() * scale;
        const double sy = c.yCenter() * scale;
        if (!(sx >= 0.0 && sy >= 0.0 && sx < 65536.0 && sy < 65536.0)) {
          counters_.pixelErrors.add(); // no weight: no centre
          return;
        }
        const auto px = static_cast<uint32_t>(sx);
        const auto py = static_cast<uint32_t>(sy);
        if (px >= width || py >= height) {
          counters_.pixelErrors.add();
          return;
        }
        events_.add(static_cast<int64_t>(pulseNs), static_cast<int32_t>(tof),
                    static_cast<int32_t>(py * width + px + 1));
        counters_.events.add();
      });
}

} // namespace efu::timepix3
