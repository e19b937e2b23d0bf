// SPDX-License-Identifier: BSD-2-Clause
// nmx throughput per core: full 8972-byte datagrams of readoutgen's readouts (NmxSource, fixed
// seed, random pixels, event times sorted within each 14 Hz pulse) through NmxModule::process()
// with a counting sink. Items = readouts.
#include "modules/nmx/NmxModule.h"
#include "modules/nmx/NmxSource.h"
#include "tests/modules/nmx/NmxTestSupport.h"
#include "tests/support/FakeModuleContext.h"
#include "tests/support/SourceDatagrams.h"

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace {

using namespace efu;

struct NoTruth final : sdk::TruthSink {
  void add(int64_t, int64_t, int32_t) override { ++count; }
  int64_t count = 0;
};

/// 64 full datagrams, 8 per pulse (tests/support/SourceDatagrams.h); `neutrons` encoded.
std::vector<std::vector<uint8_t>> makeDatagrams(nmx::NmxSource &source, int64_t &neutrons) {
  NoTruth truth;
  auto out = readout::test::fullDatagrams(source, truth, 8, 8);
  neutrons = truth.count;
  return out;
}

void processFile(benchmark::State &state, const std::string &config) {
  const nlohmann::json cfg = nmx::test::shipped(config);
  readout::FakeModuleContext ctx(cfg, config);
  ctx.sink.keep = false;
  nmx::NmxModule module(ctx);
  nmx::NmxSource source(cfg, config, 1);
  int64_t neutrons = 0;
  const auto datagrams = makeDatagrams(source, neutrons);
  size_t i = 0;
  int64_t readouts = 0;
  int64_t passes = 0;
  for (auto _ : state) {
    const auto &d = datagrams[i++ & 63];
    module.process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
    readouts += static_cast<int64_t>((d.size() - readout::headerBytes(0)) / vmm3::kReadoutBytes);
    passes += (i & 63) == 0 ? 1 : 0;
  }
  state.SetItemsProcessed(readouts);
  state.counters["readouts/s"] =
      benchmark::Counter(static_cast<double>(readouts), benchmark::Counter::kIsRate);
  state.counters["readouts/datagram"] = static_cast<double>(readouts) / static_cast<double>(i);
  if (passes > 0 && (ctx.value("events.count") < passes * neutrons ||
                     ctx.value("parser.essheader.errors.timehigh") != 0)) {
    state.SkipWithError("not every neutron became an event");
  }
}

/// nmx.json: the figure to track.
void BM_ModuleProcess(benchmark::State &state) {
  processFile(state, "nmx.json");
}

} // namespace

BENCHMARK(BM_ModuleProcess);
BENCHMARK_CAPTURE(processFile, split, std::string("nmx_split.json"));
BENCHMARK_MAIN();
