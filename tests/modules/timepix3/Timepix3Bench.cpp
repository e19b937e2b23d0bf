// SPDX-License-Identifier: BSD-2-Clause
// bench_timepix3: Timepix3Source datagrams (the shipped ESS file: 9 hits a neutron, 1024 x 1024
// image) through Timepix3Module::process(); items are pixel hits, so items/s is hits/s on one
// core, clustering included. An EVR datagram starts each 10 Hz pulse; camera datagrams hold up
// to 1121 words (8968 bytes). The stream is made once and replayed (at the wrap-around the
// counters restart at 1, which the module accepts as a restart).
// Arguments: neutrons per pulse (1000: sparse; 100000: a neutron every 0.7 us, time groups of
// several neutrons), 1 to shuffle each camera datagram's words (the module then sorts), and
// (BM_ModuleProcess) the pulses replayed. BM_Partitioned: the same as 1 and 2 partitions on threads
// of their own (aggregate hits/s, wall clock); BM_PartitionAlone: one of those partitions alone, by
// CPU time (the scaling on idle cores).
#include "modules/timepix3/Timepix3Module.h"
#include "modules/timepix3/Timepix3Source.h"
#include "tests/modules/timepix3/Timepix3TestSupport.h"
#include "tests/support/FakeModuleContext.h"
#include "tests/support/ModuleBench.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <tuple>

namespace efu::timepix3 {
namespace {

struct Discard final : sdk::TruthSink {
  void add(int64_t, int64_t, int32_t) override {}
};

struct Stream {
  std::vector<std::vector<uint8_t>> datagrams;
  std::vector<int64_t> hits; ///< pixel words per datagram
  int64_t neutrons = 0;
};

Stream makeStream(int pulses, int perPulse, bool shuffled) {
  const nlohmann::json config = test::shipped();
  Timepix3Source source(config, "timepix3.json", 3);
  Discard truth;
  std::mt19937_64 rng(5);
  Stream s;
  constexpr size_t kMax = 1121 * 8;
  std::vector<uint8_t> buf(kMax);
  std::vector<uint8_t> evrBuf(64);
  const int64_t start = 1'700'000'000'000'000'000;
  for (int k = 0; k < pulses; ++k) {
    const int64_t pulseNs = start + int64_t{k} * 100'000'000;
    const size_t n =
        source.pulseDatagram({pulseNs, pulseNs - 100'000'000, static_cast<uint64_t>(k)}, evrBuf);
    s.datagrams.emplace_back(evrBuf.begin(), evrBuf.begin() + static_cast<std::ptrdiff_t>(n));
    s.hits.push_back(0);
    std::vector<int64_t> tofs(static_cast<size_t>(perPulse));
    for (auto &t : tofs) {
      t = static_cast<int64_t>(rng() % 70'000'000);
    }
    std::sort(tofs.begin(), tofs.end());
    size_t len = 0;
    const auto emit = [&]() {
      if (len > 0 && shuffled) { // the camera's words out of time order (the TDC stays first)
        std::vector<uint64_t> words(len / 8);
        std::memcpy(words.data(), buf.data(), len);
        std::shuffle(words.begin() + 1, words.end(), rng);
        std::memcpy(buf.data(), words.data(), len);
      }
      if (len > 0) {
        s.datagrams.emplace_back(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(len));
        s.hits.push_back(static_cast<int64_t>(len / 8));
      }
      len = 0;
    };
    for (const int64_t tof : tofs) {
      if (kMax - len < source.maxEventBytes()) {
        emit();
      }
      sdk::Neutron nu;
      nu.x = static_cast<uint32_t>(rng() % source.imageWidth());
      nu.y = static_cast<uint32_t>(rng() % source.imageHeight());
      nu.pulseTimeNs = pulseNs;
      nu.eventTimeNs = pulseNs + tof;
      const size_t w =
          source.encodeEvent(nu, std::span<uint8_t>(buf.data() + len, buf.size() - len), truth);
      len += w;
      s.neutrons += w > 0;
    }
    emit();
  }
  return s;
}

/// The pulses of a stream: at least readout::test::kDistinctDatagrams camera datagrams (1000
/// neutrons a pulse: 640 pulses of about 8; 100 000: 4 of about 800). kLearntPulses: the 40
/// pulses of 1000 replayed until December 2026, to compare (tests/support/ModuleBench.h).
int64_t freshPulses(int64_t perPulse) {
  return perPulse > 10000 ? 4 : 640;
}
constexpr int64_t kLearntPulses = 40;

/// The stream of (neutrons per pulse, shuffled, pulses), made once.
const Stream &streamFor(int64_t perPulse, int64_t shuffled, int64_t pulses) {
  static std::map<std::tuple<int64_t, int64_t, int64_t>, Stream> streams;
  const auto key = std::make_tuple(perPulse, shuffled, pulses);
  if (!streams.contains(key)) {
    streams[key] = makeStream(static_cast<int>(pulses), static_cast<int>(perPulse), shuffled != 0);
  }
  return streams[key];
}
const Stream &streamFor(int64_t perPulse, int64_t shuffled) {
  return streamFor(perPulse, shuffled, freshPulses(perPulse));
}

/// Partition 0 of `partitions` (1: the whole module) on this thread, one datagram of stream `s`
/// per iteration; items are the stream's hits.
void processAlone(benchmark::State &state, const Stream &s, unsigned partitions) {
  readout::FakeModuleContext ctx(test::shipped(), "timepix3.json");
  ctx.setPartition(0, partitions);
  ctx.sink.keep = false;
  Timepix3Module module(ctx);
  size_t i = 0;
  int64_t hits = 0;
  for (auto _ : state) {
    const std::vector<uint8_t> &d = s.datagrams[i];
    module.process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
    hits += s.hits[i];
    i = (i + 1) % s.datagrams.size();
  }
  state.SetItemsProcessed(hits);
  state.counters["events"] = static_cast<double>(ctx.sink.count);
  state.counters["distinct"] = static_cast<double>(s.datagrams.size());
}

void BM_ModuleProcess(benchmark::State &state) {
  const Stream &s = streamFor(state.range(0), state.range(1), state.range(2));
  processAlone(state, s, 1);
  state.counters["neutrons_in_stream"] = static_cast<double>(s.neutrons);
}

BENCHMARK(BM_ModuleProcess)
    ->ArgNames({"", "", "pulses"})
    ->Args({1000, 0, freshPulses(1000)})
    ->Args({1000, 0, kLearntPulses})
    ->Args({100000, 0, freshPulses(100000)})
    ->Args({1000, 1, freshPulses(1000)})
    ->Args({1000, 1, kLearntPulses});

/// The same streams through the module as N partitions on N threads (tests/support/ModuleBench.h):
/// every partition reads every datagram, clusters its own camera datagrams and follows the TDC
/// words of the others. Items are hits as above (a camera datagram's words; none in an EVR
/// datagram, and no ESS header), so items/s is the aggregate hits/s of all N threads, by the wall
/// clock. Arguments: N, then the stream's two.
void BM_Partitioned(benchmark::State &state) {
  const Stream &s = streamFor(state.range(1), state.range(2));
  readout::test::processPartitioned<Timepix3Module>(
      state, static_cast<unsigned>(state.range(0)), test::shipped(), "timepix3.json", s.datagrams,
      [](const std::vector<uint8_t> &d) {
        const bool evr = d.size() == kEvrBytes && d[0] == kEvrType;
        return evr ? size_t{0} : d.size() / kWordBytes;
      });
  state.counters["neutrons_in_stream"] = static_cast<double>(s.neutrons);
}

BENCHMARK(BM_Partitioned)
    ->Args({1, 1000, 0})
    ->Args({2, 1000, 0})
    ->Args({1, 100000, 0})
    ->Args({2, 100000, 0})
    ->Args({1, 1000, 1})
    ->Args({2, 1000, 1})
    ->UseManualTime();

/// Partition 0 of N alone on this thread, by CPU time: what one partition's thread does (its
/// own camera datagrams clustered, the others' scanned for TDC words). Items are the whole
/// stream's hits, so items/s is the aggregate rate N partitions reach on N idle cores: the
/// scaling BM_Partitioned would show on a machine with nothing else running.
void BM_PartitionAlone(benchmark::State &state) {
  processAlone(state, streamFor(state.range(1), state.range(2)),
               static_cast<unsigned>(state.range(0)));
}

BENCHMARK(BM_PartitionAlone)
    ->Args({1, 1000, 0})
    ->Args({2, 1000, 0})
    ->Args({1, 100000, 0})
    ->Args({2, 100000, 0})
    ->Args({1, 1000, 1})
    ->Args({2, 1000, 1});

} // namespace
} // namespace efu::timepix3

BENCHMARK_MAIN();
