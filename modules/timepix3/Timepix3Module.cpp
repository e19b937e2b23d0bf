// SPDX-License-Identifier: BSD-2-Clause
// The timepix3 module: words → timing and hits → clusters → events, per datagram, with the ESS
// EFU's rules and counters (modules/timepix3/README.md, "Processing, in order").
#include "modules/timepix3/Timepix3Module.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>

namespace efu::timepix3 {

namespace {
/// The most words a UDP datagram can hold.
constexpr size_t kMaxWords = 65536 / kWordBytes;

// pixelFieldsOfWord() is stored as PixelHit's x, y, weight and tag (little-endian hosts).
static_assert(sizeof(reduction::PixelHit) == 16 && offsetof(reduction::PixelHit, x) == 8 &&
              offsetof(reduction::PixelHit, y) == 10 &&
              offsetof(reduction::PixelHit, weight) == 12 &&
              offsetof(reduction::PixelHit, tag) == 14);

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
      partition_(ctx.partition()), partitions_(ctx.partitions()),
      width_(config_.width()), height_(config_.height()) {
  hits_.resize(kMaxWords);
  sorted_.resize(kMaxWords);
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

// Hits are decoded in arrival order. While they come in time order (equal times stay in arrival
// order), a run only compares each time with the one before; from the first that comes earlier
// on, the datagram needs the sort, and the runs instead keep the earliest and latest time, which
// the sort would otherwise find in a pass of its own.
struct Timepix3Module::Decoding {
  reduction::PixelHit *const hits; ///< the datagram's first hit
  reduction::PixelHit *next;       ///< one past the last hit decoded
  int64_t dropped;                 ///< pixel words not decoded (dropPixel())
  uint64_t previous;               ///< in order: the latest time so far
  uint64_t earliest, latest;       ///< unordered: the least and greatest times so far
  bool unordered;                  ///< a time came below the one before
};

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
  // The pixel words, decoded in one pass into hits_ (sized for the largest datagram once): no
  // call and no capacity check per word, the rare outcomes counted off the loop; in runs
  // between the other words (decodeRun()).
  const uint8_t *const data = packet.data;
  const uint8_t *const end = data + words * kWordBytes;
  reduction::PixelHit *const hits = hits_.data();
  int64_t tdcs = 0;
  Decoding d{hits, hits, 0, 0, 0, 0, false};
  constexpr uint32_t kCameraPixels = 256; // columns and rows a word can name
  const bool unchecked = global_.valid && width_ >= kCameraPixels && height_ >= kCameraPixels;
  for (const uint8_t *p = data; p != end;) {
    p = d.unordered
            ? (unchecked ? decodeRun<false, false>(p, end, d) : decodeRun<true, false>(p, end, d))
            : (unchecked ? decodeRun<false, true>(p, end, d) : decodeRun<true, true>(p, end, d));
    if (p == end) {
      break;
    }
    const uint64_t w = loadWord(p);
    if (wordType(w) == kPixelType) {
      continue; // the first hit out of order: the rest decoded unordered
    }
    if (wordType(w) == kTdcType) {
      ++tdcs;
      counters_.tdcs.add();
      onTdc(decodeTdc(w), packet.rxTimeNs);
    }
    p += kWordBytes;
  }
  const auto n = static_cast<size_t>(d.next - hits);
  const auto pixels = static_cast<int64_t>(n) + d.dropped;
  counters_.pixels.add(pixels);
  const int64_t undefined = static_cast<int64_t>(words) - pixels - tdcs;
  if (undefined != 0) {
    counters_.undefined.add(undefined);
  }
  if (n != 0) {
    if (d.unordered &&
        sortByTime(hits_.data(), sorted_.data(), n, d.earliest, d.latest) != hits_.data()) {
      hits_.swap(sorted_);
    }
    formEvents(n);
  }
}

// Decodes the run of pixel words from `from` (the words between two TDC words share one timing,
// kept in locals); returns the first word of another type (or end) or, in order, the word after
// the first hit out of order. With a time line and an image of at least the camera's 256 x 256
// pixels, no word can name a pixel outside it, and the run skips the check (Checked false). Out
// of line: each of the four loops gets the registers to itself (inlined together they spilled).
template <bool Checked, bool InOrder>
const uint8_t *Timepix3Module::decodeRun(const uint8_t *from, const uint8_t *end,
                                         Decoding &d) noexcept {
  const uint64_t since = global_.pulseNs - global_.tdcPixelClockNs;
  const uint64_t tdcClock = global_.tdcPixelClockNs;
  // Untimed, every pixel fails the bounds and is sorted out by dropPixel().
  const uint32_t width = global_.valid ? width_ : 0;
  const uint32_t height = global_.valid ? height_ : 0;
  reduction::PixelHit *out = d.next;
  uint64_t last = d.previous, low = d.earliest, high = d.latest;
  const uint8_t *p = from;
  if constexpr (!Checked) {
    // Two words a step while both are pixels (and, in order, both times keep the order): one
    // type test, one loop test and one order update for the pair. Any other pair is left to the
    // word-by-word loop below, which ends the run within its two words.
    constexpr uint64_t kPixelBits = uint64_t{kPixelType} << 60;
    const uint8_t *const pairsEnd = p + (end - p) / (2 * kWordBytes) * (2 * kWordBytes);
    for (; p != pairsEnd; p += 2 * kWordBytes) {
      const uint64_t w0 = loadWord(p);
      const uint64_t w1 = loadWord(p + kWordBytes);
      if (((w0 ^ kPixelBits) | (w1 ^ kPixelBits)) >> 60 != 0) {
        break;
      }
      const uint64_t t0 = pixelTimeSince(since, tdcClock, pixelClockOfWord(w0));
      const uint64_t t1 = pixelTimeSince(since, tdcClock, pixelClockOfWord(w1));
      if constexpr (InOrder) {
        if (t0 < last || t1 < t0) [[unlikely]] {
          break;
        }
        last = t1;
      } else {
        const bool less = t0 < t1;
        low = std::min(low, less ? t0 : t1);
        high = std::max(high, less ? t1 : t0);
      }
      const uint64_t f0 = pixelFieldsOfWord(w0), f1 = pixelFieldsOfWord(w1);
      out[0].timeNs = t0;
      std::memcpy(reinterpret_cast<unsigned char *>(out) + offsetof(reduction::PixelHit, x), &f0,
                  sizeof f0);
      out[1].timeNs = t1;
      std::memcpy(reinterpret_cast<unsigned char *>(out + 1) + offsetof(reduction::PixelHit, x),
                  &f1, sizeof f1);
      out += 2;
    }
  }
  for (; p != end; p += kWordBytes) {
    const uint64_t w = loadWord(p);
    if (wordType(w) != kPixelType) {
      break;
    }
    if constexpr (Checked) {
      const uint16_t x = pixelXOfWord(w);
      const uint16_t y = pixelYOfWord(w);
      if (x >= width || y >= height) {
        dropPixel(x, y);
        ++d.dropped;
        continue;
      }
    }
    const uint64_t t = pixelTimeSince(since, tdcClock, pixelClockOfWord(w));
    const uint64_t fields = pixelFieldsOfWord(w); // the tag left 0: not read
    out->timeNs = t;
    std::memcpy(reinterpret_cast<unsigned char *>(out) + offsetof(reduction::PixelHit, x), &fields,
                sizeof fields);
    ++out;
    if constexpr (InOrder) {
      if (t < last) [[unlikely]] { // the hits before are in order: hits[0] is their earliest
        d.unordered = true;
        low = std::min(d.hits[0].timeNs, t);
        high = last;
        p += kWordBytes;
        break;
      }
      last = t;
    } else {
      low = std::min(low, t);
      high = std::max(high, t);
    }
  }
  d.next = out;
  d.previous = last;
  d.earliest = low;
  d.latest = high;
  return p;
}

void Timepix3Module::dropPixel(uint16_t x, uint16_t y) noexcept {
  // As the ESS EFU: checked against the scaled-up image, not the camera's resolution; then
  // whether there is a time line to place it on.
  if (x >= width_ || y >= height_) {
    counters_.invalidPixel.add();
  } else {
    counters_.noGlobalTime.add();
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

namespace {
/// The sort's bucket of more hits than this is sorted on its own first (sortByTime()); a power
/// of two (a bucket of so many is found by the bits of the counts).
constexpr size_t kFewHits = 32;
static_assert(std::has_single_bit(kFewHits));

/// Sorts a[0, n) by time, stably, by insertion: for hits that are each near their place.
void insertionSort(reduction::PixelHit *a, size_t n) noexcept {
  if (n < 2) {
    return;
  }
  reduction::PixelHit *const end = a + n;
  for (reduction::PixelHit *p = a + 1; p != end; ++p) {
    if (p->timeNs >= p[-1].timeNs) {
      continue;
    }
    const reduction::PixelHit x = *p;
    reduction::PixelHit *q = p;
    do {
      *q = q[-1];
      --q;
    } while (q != a && x.timeNs < q[-1].timeNs);
    *q = x;
  }
}
} // namespace

reduction::PixelHit *sortByTime(reduction::PixelHit *hits, reduction::PixelHit *scratch,
                                size_t n) noexcept {
  if (n <= kFewHits) {
    insertionSort(hits, n);
    return hits;
  }
  // Two hits a step, a pair's lower to the minimum and its higher to the maximum (fewer
  // instructions a hit); with n odd, hits[0] is left out of the pairs and taken after.
  uint64_t earliest = UINT64_MAX, latest = 0;
  for (size_t i = n & 1; i < n; i += 2) {
    const uint64_t a = hits[i].timeNs, b = hits[i + 1].timeNs;
    const bool less = a < b;
    earliest = std::min(earliest, less ? a : b);
    latest = std::max(latest, less ? b : a);
  }
  earliest = std::min(earliest, hits[0].timeNs);
  latest = std::max(latest, hits[0].timeNs);
  return sortByTime(hits, scratch, n, earliest, latest);
}

reduction::PixelHit *sortByTime(reduction::PixelHit *hits, reduction::PixelHit *scratch, size_t n,
                                uint64_t earliest, uint64_t latest) noexcept {
  // One stable pass by the most significant bits of the time since the earliest spreads the hits
  // over about n / 2 buckets (a datagram holds ~1100 hits over a few ms), in order of their
  // buckets; an insertion sort of the whole then only moves hits within their bucket, a few
  // each. A bucket of kFewHits or more (where the times bunch) is first sorted the same way
  // over its own span, under a 32nd of this one's (n > 32: at least 32 buckets), so no hit
  // moves far and the recursion ends within 13 levels (64 bits). Three radix passes of 8 bits
  // (the code before) moved every hit three times; a comparison sort of shuffled words stalls
  // on one mispredicted branch after another.
  if (n <= kFewHits) {
    insertionSort(hits, n);
    return hits;
  }
  if (earliest == latest) {
    return hits; // all equal: in order
  }
  const int digit = std::min(static_cast<int>(std::bit_width(n)) - 1, 10); // 32 to 1024 buckets
  const int bits = std::bit_width(latest - earliest);
  const int shift = bits > digit ? bits - digit : 0;
  std::array<uint32_t, 1024> at;
  std::fill_n(at.begin(), size_t{1} << digit, 0);
  // The count and the scatter take two hits a step (half the loops' own instructions), the
  // scatter in order (hits[0] first when n is odd): stable.
  const auto bucket = [earliest, shift](const reduction::PixelHit &h) {
    return (h.timeNs - earliest) >> shift;
  };
  if (n & 1) {
    ++at[bucket(hits[0])];
  }
  for (size_t i = n & 1; i < n; i += 2) {
    ++at[bucket(hits[i])];
    ++at[bucket(hits[i + 1])];
  }
  uint32_t sum = 0;
  uint32_t any = 0; // the counts' bits: a count of kFewHits or more sets one from kFewHits on
  for (size_t b = 0; b < size_t{1} << digit; b += 4) { // 32 buckets or more: four a step
    const uint32_t c0 = at[b], c1 = at[b + 1], c2 = at[b + 2], c3 = at[b + 3];
    any |= c0 | c1 | c2 | c3;
    at[b] = sum;
    at[b + 1] = sum + c0;
    at[b + 2] = sum + c0 + c1;
    at[b + 3] = sum + c0 + c1 + c2;
    sum += c0 + c1 + c2 + c3;
  }
  const bool bunched = any >= kFewHits;
  size_t i = 0;
  if (n & 1) {
    scratch[at[bucket(hits[0])]++] = hits[0];
    i = 1;
  }
  for (; i < n; i += 2) {
    scratch[at[bucket(hits[i])]++] = hits[i];
    scratch[at[bucket(hits[i + 1])]++] = hits[i + 1];
  }
  if (bunched) { // at[b] is now where bucket b ends and b + 1 begins
    for (size_t b = 0, begin = 0; b < size_t{1} << digit; begin = at[b++]) {
      const size_t count = at[b] - begin;
      if (count > kFewHits && sortByTime(scratch + begin, hits + begin, count) != scratch + begin) {
        std::memcpy(scratch + begin, hits + begin, count * sizeof(reduction::PixelHit));
      }
    }
  }
  insertionSort(scratch, n);
  return scratch;
}

void Timepix3Module::formEvents(size_t n) noexcept {
  // hits_ is in time order; equal times in their order in the datagram, so seeds are
  // deterministic. The limits are copied and the outcomes counted in locals, added once a
  // datagram: the sink's call could otherwise make the compiler reload and store them per event.
  const double scale = config_.scaleUpFactor;
  const uint32_t width = config_.width();
  const uint32_t height = config_.height();
  const uint32_t minHits = config_.minEventSizeHits;
  const uint64_t minTot = config_.minimumTotSum;
  const uint64_t minSpan = config_.minEventTimeSpanNs;
  const int64_t periodNs = config_.periodNs;
  const uint64_t pulseNs = global_.pulseNs;
  sdk::EventSink &sink = events_;
  int64_t tooSmall = 0, spanTooShort = 0, tofs = 0, tofNegative = 0, nextPulse = 0;
  int64_t pixelErrors = 0, events = 0;
  clusterer_.cluster(
      std::span<const reduction::PixelHit>(hits_.data(), n), [&](const reduction::PixelCluster &c) {
        if (c.hits < minHits || c.weightSum < minTot) {
          ++tooSmall;
          return;
        }
        if (c.timeSpanNs() < minSpan) {
          ++spanTooShort;
          return;
        }
        const auto tof = static_cast<int64_t>(c.timeStartNs - pulseNs);
        ++tofs;
        if (tof < 0) {
          ++tofNegative;
          return;
        }
        if (tof > periodNs) {
          ++nextPulse;
          return;
        }
        // The centre, scaled up and truncated (ESS: through uint16_t).
        const double sx = c.xCenter() * scale;
        const double sy = c.yCenter() * scale;
        if (!(sx >= 0.0 && sy >= 0.0 && sx < 65536.0 && sy < 65536.0)) {
          ++pixelErrors; // no weight: no centre
          return;
        }
        const auto px = static_cast<uint32_t>(sx);
        const auto py = static_cast<uint32_t>(sy);
        if (px >= width || py >= height) {
          ++pixelErrors;
          return;
        }
        sink.add(static_cast<int64_t>(pulseNs), static_cast<int32_t>(tof),
                 static_cast<int32_t>(py * width + px + 1));
        ++events;
      });
  counters_.tooSmall.add(tooSmall);
  counters_.spanTooShort.add(spanTooShort);
  counters_.tofs.add(tofs);
  counters_.tofNegative.add(tofNegative);
  counters_.nextPulse.add(nextPulse);
  counters_.pixelErrors.add(pixelErrors);
  counters_.events.add(events);
}

} // namespace efu::timepix3
