// SPDX-License-Identifier: BSD-2-Clause
// caen readout throughput per core (target: >= 20 M readouts/s, PERFORMANCE.md §5).
#include "tests/support/FakeModuleContext.h"
#include "modules/caen/CaenModule.h"
#include "modules/caen/CaenReadout.h"

#include <benchmark/benchmark.h>

#include <fstream>
#include <random>
#include <vector>

namespace {

using namespace efu;

nlohmann::json lokiConfig() {
  return nlohmann::json::parse(R"({
    "instrument": "LoKI", "detector_type": 48, "banks": 4, "tubes_per_bank": 56,
    "pixels_per_tube": 512, "amplitude_threshold": 100, "max_tof_ns": 1000000000,
    "mapping": [
      {"bank": 0, "fiber": 0, "fens": [0, 6], "groups": 8, "first_tube": 0},
      {"bank": 1, "fiber": 2, "fens": [0, 6], "groups": 8, "first_tube": 0},
      {"bank": 2, "fiber": 4, "fens": [0, 6], "groups": 8, "first_tube": 0},
      {"bank": 3, "fiber": 6, "fens": [0, 6], "groups": 8, "first_tube": 0}]})");
}

/// 64 full 8972-byte datagrams (373 readouts each) of random valid LoKI readouts.
std::vector<std::vector<uint8_t>> makeDatagrams(const caen::CaenConfig &cfg) {
  std::mt19937_64 rng(42);
  std::vector<std::vector<uint8_t>> out;
  uint32_t seq = 0;
  for (int i = 0; i < 64; ++i) {
    std::vector<uint8_t> d(readout::headerBytes(0));
    readout::HeaderFields f;
    f.detectorType = readout::kTypeLoki;
    f.pulse = {1'700'000'000, 1000};
    f.prevPulse = {1'699'999'999, 82'000'000};
    while (d.size() + sizeof(caen::CaenReadout) <= 8972) {
      const uint32_t tube = static_cast<uint32_t>(rng() % cfg.tubes());
      const uint32_t pos = static_cast<uint32_t>(rng() % cfg.pixelsPerTube);
      const int32_t sum = 1024 + static_cast<int32_t>(rng() % 4000);
      const int32_t b = caen::amplitudeBForPosition(pos, sum, cfg.pixelsPerTube);
      caen::CaenReadout r{};
      r.fiber = cfg.channels[tube].fiber;
      r.fen = cfg.channels[tube].fen;
      r.group = cfg.channels[tube].group;
      r.length = 24;
      const auto t = readout::nsToTicks(readout::ticksToNs(f.pulse.high, f.pulse.low) +
                                        static_cast<int64_t>(rng() % 71'000'000));
      r.timeHigh = t.high;
      r.timeLow = t.low;
      r.ampA = static_cast<int16_t>(sum - b);
      r.ampB = static_cast<int16_t>(b);
      const auto *p = reinterpret_cast<const uint8_t *>(&r);
      d.insert(d.end(), p, p + sizeof(r));
    }
    f.totalLength = static_cast<uint16_t>(d.size());
    f.seqNum = seq++;
    readout::writeHeader(d, f);
    out.push_back(std::move(d));
  }
  return out;
}

/// Full datagrams through CaenModule::process(); the sink only counts (one virtual call per
/// event, as with the daemon's sink), so this measures the module, not vector growth.
void BM_CaenProcessNullSink(benchmark::State &state) {
  readout::FakeModuleContext ctx(lokiConfig(), "bench");
  ctx.sink.keep = false;
  caen::CaenModule module(ctx);
  const auto datagrams = makeDatagrams(module.config());
  size_t i = 0;
  int64_t readouts = 0;
  for (auto _ : state) {
    const auto &d = datagrams[i++ & 63];
    module.process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
    readouts += static_cast<int64_t>((d.size() - 30) / 24);
  }
  state.SetItemsProcessed(readouts);
  state.counters["readouts/s"] = benchmark::Counter(static_cast<double>(readouts),
                                                    benchmark::Counter::kIsRate);
  if (ctx.value("events.count") != readouts) {
    state.SkipWithError("not every readout became an event");
  }
}

} // namespace

BENCHMARK(BM_CaenProcessNullSink);
BENCHMARK_MAIN();
