// SPDX-License-Identifier: BSD-2-Clause
// nmx throughput per core: full 8972-byte datagrams of readoutgen's readouts (NmxSource, fixed
// seed, random pixels, event times sorted within each 14 Hz pulse) through NmxModule::process()
// with a counting sink. Items = readouts.
#include "modules/nmx/NmxModule.h"
#include "modules/nmx/NmxSource.h"
#include "tests/modules/nmx/NmxTestSupport.h"
#include "tests/support/FakeModuleContext.h"
#include "tests/support/ModuleBench.h"

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace {

using namespace efu;

void processFile(benchmark::State &state, const std::string &config) {
  const nlohmann::json cfg = nmx::test::shipped(config);
  readout::FakeModuleContext ctx(cfg, config);
  ctx.sink.keep = false;
  nmx::NmxModule module(ctx);
  nmx::NmxSource source(cfg, config, 1);
  // range(0) full datagrams, 8 per pulse; each pass forms every encoded neutron once.
  readout::test::TruthCount neutrons;
  const auto datagrams =
      readout::test::fullDatagrams(source, neutrons, static_cast<int>(state.range(0)) / 8, 8);
  const int64_t passes =
      readout::test::processInCycle(state, module, datagrams, vmm3::kReadoutBytes);
  if (passes > 0 && (ctx.value("events.count") < passes * neutrons.count ||
                     ctx.value("parser.essheader.errors.timehigh") != 0)) {
    state.SkipWithError("not every neutron became an event");
  }
}

/// nmx.json: the figure to track.
void BM_ModuleProcess(benchmark::State &state) {
  processFile(state, "nmx.json");
}

/// nmx.json as `partitions` partitions on as many threads (--proc-threads), every one given
/// every datagram: the aggregate readouts/s, to compare with one partition.
void BM_Partitions(benchmark::State &state) {
  const nlohmann::json cfg = nmx::test::shipped("nmx.json");
  nmx::NmxSource source(cfg, "nmx.json", 1);
  readout::test::TruthCount neutrons;
  readout::test::processPartitioned<nmx::NmxModule>(
      state, static_cast<unsigned>(state.range(0)), cfg, "nmx.json",
      readout::test::fullDatagrams(source, neutrons, readout::test::kDistinctDatagrams / 8, 8),
      vmm3::kReadoutBytes);
}

} // namespace

BENCHMARK(BM_Partitions)->Arg(1)->Arg(2)->UseManualTime();
BENCHMARK(BM_ModuleProcess)->Apply(readout::test::withCycles);
BENCHMARK_CAPTURE(processFile, split, std::string("nmx_split.json"))
    ->Apply(readout::test::withCycles);
BENCHMARK_MAIN();
