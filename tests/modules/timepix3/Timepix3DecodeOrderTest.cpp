// SPDX-License-Identifier: BSD-2-Clause
// The decode's two ways of running (hits in time order, and from the first hit out of order on,
// the earliest and latest times kept for the sort): a datagram whose words turn out of order
// after k in order against the same words sent in time order (events in emission order, every
// counter). sortByTime given the bounds is tested in Timepix3SortTest.cpp.
#include "modules/timepix3/Timepix3Module.h"
#include "tests/modules/timepix3/Timepix3TestSupport.h"
#include "tests/support/FakeModuleContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace efu::timepix3 {
namespace {

using reduction::PixelHit;

/// Pixel words of random pixels, spidr and toa above the TDC's reading (no wrap of the pixel
/// clock, so the time order is that of pixelClockOfWord()), in bunches of up to 12 equal times.
std::vector<uint64_t> pixelWords(std::mt19937_64 &rng, size_t n) {
  std::vector<uint64_t> words;
  while (words.size() < n) {
    PixelWord p;
    p.spidr = static_cast<uint16_t>(10 + rng() % 3); // ~4 ms after the pulse
    p.toa = static_cast<uint16_t>(rng() % 16384);
    p.fToA = static_cast<uint8_t>(rng() % 16);
    const auto x = static_cast<uint16_t>(rng() % 256), y = static_cast<uint16_t>(rng() % 256);
    for (size_t k = rng() % 13; k-- > 0 && words.size() < n;) {
      placePixel(p, static_cast<uint16_t>((x + k % 4) % 256),
                 static_cast<uint16_t>((y + k / 4) % 256));
      p.tot = static_cast<uint16_t>(rng() % 1024);
      words.push_back(encodePixel(p));
    }
  }
  return words;
}

/// Events (in emission order) and counters of one module given `pulse` then `words`.
std::pair<std::vector<readout::RecordedEvent>, std::map<std::string, int64_t>>
run(const nlohmann::json &config, const std::vector<uint64_t> &words) {
  readout::FakeModuleContext ctx(config);
  Timepix3Module m(ctx);
  m.process(test::packet(test::evr(1, 1'706'778'348, 0)));
  test::Words datagram;
  datagram.tdc(1, 1000); // 3125 ns on the pixel clock, below every pixel's
  for (const uint64_t w : words) {
    datagram.add(w);
  }
  m.process(test::packet(datagram.bytes));
  return {ctx.sink.events, ctx.snapshot()};
}

TEST(Timepix3DecodeOrder, OutOfOrderAfterAnyPrefixGivesTheSameEvents) {
  std::mt19937_64 rng(12);
  nlohmann::json narrow = test::essDefaults(); // 200 columns: the checked decode
  narrow["XResolution"] = 200;
  for (const nlohmann::json &config :
       {test::essDefaults(), test::shipped(), test::validated(narrow)}) {
    for (const size_t n : {size_t{2}, size_t{40}, size_t{1104}}) {
      std::vector<uint64_t> ordered = pixelWords(rng, n);
      std::stable_sort(ordered.begin(), ordered.end(), [](uint64_t a, uint64_t b) {
        return pixelClockOfWord(a) < pixelClockOfWord(b);
      });
      std::vector<uint64_t> withOther = ordered; // a word of another type splits the runs
      withOther.insert(withOther.begin() + static_cast<std::ptrdiff_t>(n / 2), uint64_t{0x3} << 60);
      const auto want = run(config, ordered);
      const auto wantOther = run(config, withOther);
      ASSERT_TRUE(n < 1104 || !want.first.empty()) << n << " hits, " << config.dump();
      for (const size_t k : {size_t{0}, size_t{1}, n / 2, n - 1}) {
        // The first k in order, the rest in a random order whose first hit is earlier than
        // the k-th (a swap with the one before when the shuffle leaves it later).
        std::vector<uint64_t> words = ordered;
        std::shuffle(words.begin() + static_cast<std::ptrdiff_t>(k), words.end(), rng);
        if (k > 0 && pixelClockOfWord(words[k]) >= pixelClockOfWord(words[k - 1])) {
          std::swap(words[k], words[k - 1]);
        }
        // Same times keep their order in the datagram: restore it among equals.
        std::vector<uint64_t> inOrder = words;
        std::stable_sort(inOrder.begin(), inOrder.end(), [](uint64_t a, uint64_t b) {
          return pixelClockOfWord(a) < pixelClockOfWord(b);
        });
        const auto got = run(config, words);
        const auto expected = run(config, inOrder);
        EXPECT_EQ(got.first, expected.first) << n << " hits, " << k << " in order";
        EXPECT_EQ(got.second, expected.second) << n << " hits, " << k << " in order";
        EXPECT_EQ(got.second, want.second);
        std::vector<uint64_t> other = words;
        other.insert(other.begin() + static_cast<std::ptrdiff_t>(n / 2), uint64_t{0x3} << 60);
        const auto gotOther = run(config, other);
        EXPECT_EQ(readout::sortedEvents(gotOther.first), readout::sortedEvents(wantOther.first));
        EXPECT_EQ(gotOther.second, wantOther.second);
      }
    }
  }
}

} // namespace
} // namespace efu::timepix3
