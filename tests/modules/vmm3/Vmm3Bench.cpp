// SPDX-License-Identifier: BSD-2-Clause
// vmm3 throughput per core: full 8972-byte datagrams of readoutgen's readouts (Vmm3Source, fixed
// seed, random pixels, event times sorted within each 14 Hz pulse) through Vmm3Module::process()
// with a counting sink. Items = readouts. freia_corrected: FREIA with a correction on every
// channel.
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

/// A calibration file with a correction on every channel (the shipped ones are identity): the
/// path of the ADC and TDC corrections a commissioned instrument takes.
nlohmann::json corrected(nlohmann::json cal) {
  for (nlohmann::json &entry : cal["Calibrations"]) {
    for (const char *vmm : {"vmm0", "vmm1"}) {
      nlohmann::json &v = entry["VMMHybridCalibration"][vmm];
      for (size_t ch = 0; ch < v["tdc_offset"].size(); ++ch) {
        v["adc_offset"][ch] = 2.0 + 0.05 * static_cast<double>(ch);
        v["adc_slope"][ch] = 0.97;
        v["tdc_offset"][ch] = 1.5 - 0.04 * static_cast<double>(ch);
        v["tdc_slope"][ch] = 1.02;
      }
    }
  }
  return cal;
}

void processInstrument(benchmark::State &state, const std::string &config,
                       const std::string &calibration, bool correct = false) {
  const nlohmann::json cfg = vmm3::test::shipped(config);
  nlohmann::json cal =
      calibration.empty() ? nlohmann::json() : vmm3::test::shippedCalibration(calibration);
  if (correct) {
    cal = corrected(cal);
  }
  readout::FakeModuleContext ctx(cfg, config);
  if (!calibration.empty()) {
    ctx.setCalibration(cal, calibration);
  }
  ctx.sink.keep = false;
  vmm3::Vmm3Module module(ctx);
  vmm3::Vmm3Source source(cfg, config, 1, cal, calibration);
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

/// FREIA (freia.json, calib.json): the figure to track.
void BM_ModuleProcess(benchmark::State &state) {
  processInstrument(state, "freia.json", "calib.json");
}

/// FREIA (freia.json, calib.json) as `partitions` partitions on as many threads
/// (--proc-threads), every one given every datagram: the aggregate readouts/s, to compare with
/// one partition.
void BM_Partitions(benchmark::State &state) {
  const nlohmann::json cfg = vmm3::test::shipped("freia.json");
  const nlohmann::json cal = vmm3::test::shippedCalibration("calib.json");
  vmm3::Vmm3Source source(cfg, "freia.json", 1, cal, "calib.json");
  readout::test::TruthCount neutrons;
  readout::test::processPartitioned<vmm3::Vmm3Module>(
      state, static_cast<unsigned>(state.range(0)), cfg, "freia.json",
      readout::test::fullDatagrams(source, neutrons, readout::test::kDistinctDatagrams / 8, 8),
      vmm3::kReadoutBytes, true, cal);
}

} // namespace

BENCHMARK(BM_Partitions)->Arg(1)->Arg(2)->UseManualTime();
BENCHMARK(BM_ModuleProcess)->Apply(readout::test::withCycles);
BENCHMARK_CAPTURE(processInstrument, estia, std::string("estia_config.json"),
                  std::string("estia_calib.json"))
    ->Apply(readout::test::withCycles);
BENCHMARK_CAPTURE(processInstrument, amor, std::string("amor.json"), std::string())
    ->Apply(readout::test::withCycles);
BENCHMARK_CAPTURE(processInstrument, freia_corrected, std::string("freia.json"),
                  std::string("calib.json"), true)
    ->Apply(readout::test::withCycles);
BENCHMARK_MAIN();
