// SPDX-License-Identifier: BSD-2-Clause
// vmm3 throughput per core: full 8972-byte datagrams of readoutgen's readouts (Vmm3Source, fixed
// seed, random pixels, event times sorted within each 14 Hz pulse) through Vmm3Module::process()
// with a counting sink. Items = readouts.
#include "modules/vmm3/Vmm3Module.h"
#include "modules/vmm3/Vmm3Source.h"
#include "tests/modules/vmm3/Vmm3TestSupport.h"
#include "tests/support/FakeModuleContext.h"

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
std::vector<std::vector<uint8_t>> makeDatagrams(vmm3::Vmm3Source &source, int64_t &neutrons) {
  NoTruth truth;
  auto out = readout::test::fullDatagrams(source, truth, 8, 8);
  neutrons = truth.count;
  return out;
}

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
  // Each full pass over the 64 datagrams forms every encoded neutron once.
  if (passes > 0 && (ctx.value("events.count") < passes * neutrons ||
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
