// SPDX-License-Identifier: BSD-2-Clause
// vmm3 throughput per core: full 8972-byte datagrams of readoutgen's readouts (Vmm3Source, fixed
// seed, random pixels, event times sorted within each 14 Hz pulse) through Vmm3Module::process()
// with a counting sink. Items = readouts.
#include "modules/vmm3/Vmm3Module.h"
#include "modules/vmm3/Vmm3Source.h"
#include "tests/modules/vmm3/Vmm3TestSupport.h"
#include "tests/support/FakeModuleContext.h"
#include "tests/support/ModuleBench.h"

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace {

using namespace efu;

void processInstrument(benchmark::State &state, const std::string &config,
                       const std::string &calibration) {
  const nlohmann::json cfg = vmm3::test::shipped(config);
  const nlohmann::json cal =
      calibration.empty() ? nlohmann::json() : vmm3::test::shippedCalibration(calibration);
  readout::FakeModuleContext ctx(cfg, config);
  if (!calibration.empty()) {
    ctx.setCalibration(cal, calibration);
  }
  ctx.sink.keep = false;
  vmm3::Vmm3Module module(ctx);
  vmm3::Vmm3Source source(cfg, config, 1, cal, calibration);
  // 64 full datagrams, 8 per pulse; each pass forms every encoded neutron once.
  readout::test::TruthCount neutrons;
  const auto datagrams = readout::test::fullDatagrams(source, neutrons, 8, 8);
  const int64_t passes =
      readout::test::processInCycle(state, module, datagrams, vmm3::kReadoutBytes);
  if (passes > 0 && (ctx.value("events.count") < passes * neutrons.count ||
                     ctx.value("parser.essheader.errors.timehigh") != 0)) {
    state.SkipWithError("not every neutron became an event");
  }
}

/// FREIA (freia.json, calib.json): the figure to track.
void BM_ModuleProcess(benchmark::State &state) {
  processInstrument(state, "freia.json", "calib.json");
}

} // namespace

BENCHMARK(BM_ModuleProcess);
BENCHMARK_CAPTURE(processInstrument, estia, std::string("estia_config.json"),
                  std::string("estia_calib.json"));
BENCHMARK_CAPTURE(processInstrument, amor, std::string("amor.json"), std::string());
BENCHMARK_MAIN();
