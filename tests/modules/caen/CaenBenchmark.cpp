// SPDX-License-Identifier: BSD-2-Clause
// caen readout throughput per core (target: >= 20 M readouts/s, PERFORMANCE.md §5).
#include "tests/modules/caen/CaenTestConfig.h"
#include "tests/support/FakeModuleContext.h"
#include "modules/caen/CaenModule.h"
#include "modules/caen/CaenReadout.h"
#include "modules/caen/CaenSource.h"

#include <benchmark/benchmark.h>

#include <fstream>
#include <random>
#include <vector>

namespace {

using namespace efu;

/// 64 full 8972-byte datagrams (373 readouts each) of random valid LoKI readouts, encoded by
/// readoutgen's CaenSource for LokiFull.json with its null calibration.
std::vector<std::vector<uint8_t>> makeDatagrams(const caen::CaenSource &source) {
  std::mt19937_64 rng(42);
  std::vector<std::vector<uint8_t>> out;
  uint32_t seq = 0;
  const caen::CaenConfig &cfg = source.config();
  for (int i = 0; i < 64; ++i) {
    std::vector<uint8_t> d(readout::headerBytes(0));
    readout::HeaderFields f;
    f.detectorType = readout::kTypeLoki;
    f.pulse = {1'700'000'000, 1000};
    f.prevPulse = {1'699'999'999, 82'000'000};
    while (d.size() + sizeof(caen::CaenReadout) <= 8972) {
      const auto row = static_cast<uint32_t>(rng() % cfg.imageHeight());
      const auto x = static_cast<uint32_t>(rng() % cfg.resolution);
      const caen::Channel &ch = cfg.channels[row];
      std::array<int16_t, 4> amp{};
      if (!source.amplitudes(cfg.loki.globalGroup(ch.ring, ch.fen, ch.group), ch.unit, x,
                             1024 + static_cast<int32_t>(rng() % 4000), amp)) {
        continue;
      }
      caen::CaenReadout r{};
      r.fiber = static_cast<uint8_t>(2 * ch.ring);
      r.fen = ch.fen;
      r.group = ch.group;
      r.length = 24;
      const auto t = readout::nsToTicks(readout::ticksToNs(f.pulse.high, f.pulse.low) +
                                        static_cast<int64_t>(rng() % 71'000'000));
      r.timeHigh = t.high;
      r.timeLow = t.low;
      r.ampA = amp[0];
      r.ampB = amp[1];
      r.ampC = amp[2];
      r.ampD = amp[3];
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
  readout::FakeModuleContext ctx(caen::test::lokiFull(), "LokiFull.json");
  ctx.setCalibration(caen::test::lokiNullCalibration(), "lokinullcalib.json");
  ctx.sink.keep = false;
  caen::CaenModule module(ctx);
  const caen::CaenSource source(caen::test::lokiFull(), "LokiFull.json", 1,
                                caen::test::lokiNullCalibration(), "lokinullcalib.json");
  const auto datagrams = makeDatagrams(source);
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
