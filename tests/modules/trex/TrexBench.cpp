// SPDX-License-Identifier: BSD-2-Clause
// bench_trex: full 8972-byte datagrams of TrexSource readouts (trex.json, let.json) through
// TrexModule::process(); readouts/s. Pulses 6289464 ticks apart (trex.json's MaxPulseTimeNS
// 71428570 refuses a 1/14 s gap), 1000 neutrons a pulse; the datagrams are made once and
// replayed (at the wrap-around the pulse goes back and the builders restart, as with
// udpgen --pcap --loop: cluster.bound.pulse_back).
#include "modules/trex/TrexModule.h"
#include "modules/trex/TrexSource.h"
#include "tests/modules/trex/TrexTestSupport.h"
#include "tests/support/FakeModuleContext.h"
#include "tests/support/ModuleBench.h"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace efu::trex {
namespace {

/// 20 pulses of 1000 neutrons (tests/support/SourceDatagrams.h), in full datagrams.
std::vector<std::vector<uint8_t>> makeStream(const std::string &file) {
  const nlohmann::json config = test::shipped(file);
  TrexSource source(config, file, 11);
  readout::test::TruthCount truth;
  return readout::test::encodePulses(source, 5, 20, 1000, SIZE_MAX, truth);
}

void BM_ModuleProcess(benchmark::State &state, const std::string &file) {
  static std::map<std::string, std::vector<std::vector<uint8_t>>> streams;
  if (!streams.contains(file)) {
    streams[file] = makeStream(file);
  }
  readout::FakeModuleContext ctx(test::shipped(file), file);
  ctx.sink.keep = false;
  TrexModule module(ctx);
  (void)readout::test::processInCycle(state, module, streams[file], vmm3::kReadoutBytes);
  state.counters["events"] = static_cast<double>(ctx.sink.count);
  state.counters["waiting"] = static_cast<double>(module.waiting());
}

BENCHMARK_CAPTURE(BM_ModuleProcess, trex, std::string("trex.json"));
BENCHMARK_CAPTURE(BM_ModuleProcess, let, std::string("let.json"));

} // namespace
} // namespace efu::trex

BENCHMARK_MAIN();
