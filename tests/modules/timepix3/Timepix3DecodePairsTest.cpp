// SPDX-License-Identifier: BSD-2-Clause
// The decode's runs take two pixel words a step (and leave any other pair to the word-by-word
// loop): every hit against the word-by-word reference of Timepix3Readout.h (decodePixel(),
// pixelX/Y(), pixelClockNs(), pixelTimeNs()), stably sorted by time. With a coordinate gap of 0
// every hit is its own cluster and event, so the events in emission order are the decoded hits
// in time order: pixel, time of flight, and the order among equal times.
#include "modules/timepix3/Timepix3Module.h"
#include "tests/modules/timepix3/Timepix3TestSupport.h"
#include "tests/support/FakeModuleContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace efu::timepix3 {
namespace {

constexpr int64_t kPulseNs = 1'706'778'348'000'000'000;
constexpr uint64_t kTdcStamp = 1000; // 3125 ns on the pixel clock

nlohmann::json everyHitAnEvent(uint32_t columns) {
  nlohmann::json c = test::essDefaults();
  c["XResolution"] = columns; // under 256: the checked decode (no pairs)
  c["MaxCoordinateGap"] = 0;
  c["MaxTimeGapNS"] = 0;
  c["MinEventSizeHits"] = 1;
  c["MinimumToTSum"] = 0;
  c["FrequencyHz"] = 1;
  return test::validated(c);
}

struct Hit {
  uint64_t timeNs;
  uint16_t x, y, tot;
};

/// The events the reference decode gives: pixel words in arrival order, timed word by word,
/// stably sorted by time, as events of one hit (those inside the image, the pulse period and
/// of a weight; a weight of 0 has no centre).
std::vector<readout::RecordedEvent> expected(const std::vector<uint64_t> &words, uint32_t width,
                                             int64_t periodNs) {
  const uint64_t tdcClock = tdcOnPixelClock(tdcNs(kTdcStamp, 0));
  std::vector<Hit> hits;
  for (const uint64_t w : words) {
    if (wordType(w) != kPixelType) {
      continue;
    }
    const PixelWord p = decodePixel(w);
    if (pixelX(p) >= width) {
      continue;
    }
    hits.push_back({pixelTimeNs(kPulseNs, tdcClock, pixelClockNs(p.spidr, p.toa, p.fToA)),
                    pixelX(p), pixelY(p), p.tot});
  }
  std::stable_sort(hits.begin(), hits.end(),
                   [](const Hit &a, const Hit &b) { return a.timeNs < b.timeNs; });
  std::vector<readout::RecordedEvent> out;
  for (const Hit &h : hits) {
    const auto tof = static_cast<int64_t>(h.timeNs - kPulseNs);
    if (tof < 0 || tof > periodNs || h.tot == 0) {
      continue;
    }
    out.push_back({kPulseNs, static_cast<int32_t>(tof), static_cast<int32_t>(h.y * width + h.x + 1)});
  }
  return out;
}

/// A datagram of `words` after the pulse and a datagram of a TDC word; events in emission order,
/// and the pixel and undefined word counters.
struct Result {
  std::vector<readout::RecordedEvent> events;
  int64_t pixels, undefined;
};
Result run(const nlohmann::json &config, const std::vector<uint64_t> &words) {
  readout::FakeModuleContext ctx(config);
  Timepix3Module m(ctx);
  m.process(test::packet(test::evr(1, 1'706'778'348, 0)));
  m.process(test::packet(test::Words().tdc(1, kTdcStamp).bytes)); // timed from the next datagram
  test::Words datagram; // whose runs may then take the unchecked decode (and its pairs)
  for (const uint64_t w : words) {
    datagram.add(w);
  }
  m.process(test::packet(datagram.bytes));
  return {ctx.sink.events, ctx.value("readouts.pixel_readout_count"),
          ctx.value("readouts.undefined_readout_count")};
}

/// A random pixel word: bunches of equal clocks, now and then a reading of 0 (spidr = toa = 0,
/// negative with fToA > 0) or past the period, a ToT of 0.
uint64_t randomPixel(std::mt19937_64 &rng, uint64_t &previous) {
  if (rng() % 3 == 0) {
    return previous; // the same time (and pixel: a repeat)
  }
  PixelWord p;
  const uint64_t kind = rng() % 40;
  p.spidr = kind == 0 ? 0 : kind == 1 ? static_cast<uint16_t>(rng()) : static_cast<uint16_t>(1 + rng() % 4);
  p.toa = kind == 0 ? 0 : static_cast<uint16_t>(rng() % 16384);
  p.fToA = static_cast<uint8_t>(rng() % 16);
  p.tot = static_cast<uint16_t>(rng() % 50 == 0 ? 0 : 1 + rng() % 1023);
  placePixel(p, static_cast<uint16_t>(rng() % 256), static_cast<uint16_t>(rng() % 256));
  previous = encodePixel(p);
  return previous;
}

TEST(Timepix3DecodePairs, EveryHitAsTheWordByWordReference) {
  std::mt19937_64 rng(21);
  for (const uint32_t columns : {256u, 200u}) {
    const nlohmann::json config = everyHitAnEvent(columns);
    const int64_t periodNs = parseTimepix3Config(config, "t.json").periodNs;
    for (int k = 0; k < 400; ++k) {
      const size_t n = rng() % 4 == 0 ? rng() % 8 : rng() % 300;
      uint64_t previous = 0;
      std::vector<uint64_t> words;
      for (size_t i = 0; i < n; ++i) {
        words.push_back(randomPixel(rng, previous));
      }
      // In time order (pairs to the end of a run), in order up to a random word, or shuffled;
      // then now and then a word of another type (a run's end) at a random place.
      const uint64_t order = rng() % 3;
      if (order < 2) {
        const auto cut = order == 0 ? words.end()
                                    : words.begin() + static_cast<std::ptrdiff_t>(rng() % (n + 1));
        std::stable_sort(words.begin(), cut, [](uint64_t a, uint64_t b) {
          return pixelClockOfWord(a) < pixelClockOfWord(b);
        });
      } else {
        std::shuffle(words.begin(), words.end(), rng);
      }
      for (size_t others = rng() % 4 == 0 ? rng() % 5 : 0; others-- > 0;) {
        words.insert(words.begin() + static_cast<std::ptrdiff_t>(rng() % (words.size() + 1)),
                     uint64_t{0x3} << 60 | rng() % 1000);
      }
      if (words.size() * kWordBytes == kEvrBytes) {
        words.push_back(uint64_t{0x3} << 60); // not to be read as an EVR datagram
      }
      const Result got = run(config, words);
      const int64_t pixels = std::count_if(words.begin(), words.end(), [](uint64_t w) {
        return wordType(w) == kPixelType;
      });
      ASSERT_EQ(got.events, expected(words, columns, periodNs)) << k << ": " << n << " words";
      ASSERT_EQ(got.pixels, pixels);
      ASSERT_EQ(got.undefined, static_cast<int64_t>(words.size()) - pixels);
    }
  }
}

TEST(Timepix3DecodePairs, OneSwapAtEveryPlace) {
  // Distinct times in order but for one adjacent swap, at every place (the first or the second
  // word of a pair, after an even or odd number of words): the run turns to the sort there.
  std::mt19937_64 rng(22);
  const nlohmann::json config = everyHitAnEvent(256);
  const int64_t periodNs = parseTimepix3Config(config, "t.json").periodNs;
  for (const size_t n : {size_t{2}, size_t{3}, size_t{8}, size_t{41}}) {
    std::vector<uint64_t> ordered;
    for (size_t i = 0; i < n; ++i) {
      PixelWord p;
      p.spidr = 2;
      p.toa = static_cast<uint16_t>(100 + 7 * i);
      p.tot = static_cast<uint16_t>(1 + i);
      placePixel(p, static_cast<uint16_t>(rng() % 256), static_cast<uint16_t>(rng() % 256));
      ordered.push_back(encodePixel(p));
    }
    for (size_t at = 0; at + 1 < n; ++at) {
      for (const bool other : {false, true}) { // a word of another type first: the pairs shift
        std::vector<uint64_t> words = ordered;
        std::swap(words[at], words[at + 1]);
        if (other) {
          words.insert(words.begin(), uint64_t{0x3} << 60);
        }
        const auto want = expected(words, 256, periodNs);
        ASSERT_EQ(want.size(), n);
        ASSERT_EQ(run(config, words).events, want) << n << " " << at;
      }
    }
  }
}

} // namespace
} // namespace efu::timepix3
