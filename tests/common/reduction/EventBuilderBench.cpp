// SPDX-License-Identifier: BSD-2-Clause
// Google Benchmark: EventBuilder2D hits/s on Multi-Blade-like datagrams of 440 hits spread over
// a few builders (one per cassette), each builder flushed after every datagram.
#include "common/reduction/EventBuilder2D.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <vector>

using namespace efu::reduction;

namespace {

constexpr size_t kHitsPerDatagram = 440;
constexpr size_t kDatagrams = 512;

struct Routed {
  Hit hit;
  uint8_t builder;
};

enum class Order { Readout, Shuffled };

/// Neutrons of 2-4 strip hits (plane A, neighbouring coordinates of 64) and 1-3 wire hits
/// (plane B, of 32) within 200 ns, on random builders, about 1 us apart per builder. Readout
/// order: time order blurred by 300 ns (the electronics' channels interleave), or shuffled.
std::vector<std::vector<Routed>> makeDatagrams(size_t builders, Order order) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int> strips(2, 4), wires(1, 3), jitter(0, 200), blur(0, 300);
  std::uniform_int_distribution<int> adc(50, 1000), strip(0, 61), wire(0, 30);
  std::exponential_distribution<double> spacing(1.0 / 1000.0);
  std::uniform_int_distribution<size_t> pick(0, builders - 1);
  std::vector<uint64_t> clock(builders, 1'000'000'000);
  std::vector<std::vector<Routed>> datagrams(kDatagrams);
  for (auto &d : datagrams) {
    std::vector<std::pair<uint64_t, Routed>> keyed;
    while (keyed.size() < kHitsPerDatagram) {
      const size_t b = pick(rng);
      clock[b] += 200 + static_cast<uint64_t>(spacing(rng));
      const uint64_t t = clock[b];
      const int s0 = strip(rng), w0 = wire(rng), ns = strips(rng), nw = wires(rng);
      for (int i = 0; i < ns + nw && keyed.size() < kHitsPerDatagram; ++i) {
        const bool isStrip = i < ns;
        const Hit h{t + static_cast<uint64_t>(jitter(rng)),
                    static_cast<uint16_t>(isStrip ? s0 + i : w0 + (i - ns)),
                    static_cast<uint16_t>(adc(rng)), static_cast<uint8_t>(isStrip ? 0 : 1)};
        keyed.push_back(
            {h.timeNs + static_cast<uint64_t>(blur(rng)), Routed{h, static_cast<uint8_t>(b)}});
      }
    }
    if (order == Order::Readout) {
      std::sort(keyed.begin(), keyed.end(),
                [](const auto &x, const auto &y) { return x.first < y.first; });
    } else {
      std::shuffle(keyed.begin(), keyed.end(), rng);
    }
    for (const auto &k : keyed) {
      d.push_back(k.second);
    }
  }
  return datagrams;
}

void run(benchmark::State &state, Order order, bool split) {
  const auto builders = static_cast<size_t>(state.range(0));
  const auto datagrams = makeDatagrams(builders, order);
  BuilderParams p;
  p.splitMultiEvents = split;
  std::vector<EventBuilder2D> b(builders, EventBuilder2D(p));
  std::vector<Event2D> out;
  out.reserve(4096);
  size_t next = 0;
  int64_t events = 0;
  for (auto _ : state) {
    for (const Routed &r : datagrams[next]) {
      b[r.builder].insert(r.hit);
    }
    for (auto &builder : b) {
      builder.flush(out);
    }
    events += static_cast<int64_t>(out.size());
    benchmark::DoNotOptimize(out.data());
    out.clear();
    next = (next + 1) % kDatagrams;
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kHitsPerDatagram));
  state.counters["events/datagram"] =
      static_cast<double>(events) / static_cast<double>(state.iterations());
}

void BM_ReadoutOrder(benchmark::State &state) {
  run(state, Order::Readout, false);
}
void BM_ReadoutOrderSplit(benchmark::State &state) {
  run(state, Order::Readout, true);
}
void BM_Shuffled(benchmark::State &state) {
  run(state, Order::Shuffled, false);
}

BENCHMARK(BM_ReadoutOrder)->Arg(1)->Arg(4)->Arg(16);
BENCHMARK(BM_ReadoutOrderSplit)->Arg(4);
BENCHMARK(BM_Shuffled)->Arg(4);

} // namespace

BENCHMARK_MAIN();
