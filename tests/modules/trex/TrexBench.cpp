// SPDX-License-Identifier: BSD-2-Clause
// bench_trex: full 8972-byte datagrams of TrexSource readouts (trex.json, let.json) through
// TrexModule::process(); readouts/s. Pulses 6289464 ticks apart (trex.json's MaxPulseTimeNS
// 71428570 refuses a 1/14 s gap), 1000 neutrons a pulse; the datagrams are made once and
// replayed (at the wrap-around the pulse goes back and the builders restart, as with
// udpgen --pcap --loop: cluster.bound.pulse_back). BM_PartitionZero and BM_Partitioned: the
// module as partitions (efu --proc-threads).
#include "modules/trex/TrexModule.h"
#include "modules/trex/TrexSource.h"
#include "tests/modules/trex/TrexTestSupport.h"
#include "tests/support/FakeModuleContext.h"
#include "tests/support/ModuleBench.h"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace efu::trex {
namespace {

/// `pulses` pulses of 1000 neutrons (tests/support/SourceDatagrams.h), in full datagrams.
std::vector<std::vector<uint8_t>> makeStream(const std::string &file, int pulses) {
  const nlohmann::json config = test::shipped(file);
  TrexSource source(config, file, 11);
  readout::test::TruthCount truth;
  return readout::test::encodePulses(source, 5, pulses, 1000, SIZE_MAX, truth);
}

/// The pulses the benchmarks replay: kFreshPulses, the figure (the "distinct" counter says how
/// many datagrams they are), and kLearntPulses, the cycle replayed until December 2026, which
/// the branch predictor partly learns (tests/support/ModuleBench.h, kDistinctDatagrams).
constexpr int kFreshPulses = 320;
constexpr int kLearntPulses = 20;

void withPulses(benchmark::internal::Benchmark *b) {
  b->ArgName("pulses")->Arg(kFreshPulses)->Arg(kLearntPulses);
}

/// makeStream(file, pulses), made once per file and pulses.
const std::vector<std::vector<uint8_t>> &stream(const std::string &file,
                                                int pulses = kFreshPulses) {
  static std::map<std::pair<std::string, int>, std::vector<std::vector<uint8_t>>> streams;
  const auto key = std::make_pair(file, pulses);
  if (!streams.contains(key)) {
    streams[key] = makeStream(file, pulses);
  }
  return streams[key];
}

void BM_ModuleProcess(benchmark::State &state, const std::string &file) {
  readout::FakeModuleContext ctx(test::shipped(file), file);
  ctx.sink.keep = false;
  TrexModule module(ctx);
  (void)readout::test::processInCycle(state, module, stream(file, static_cast<int>(state.range(0))),
                                      vmm3::kReadoutBytes);
  state.counters["events"] = static_cast<double>(ctx.sink.count);
  state.counters["waiting"] = static_cast<double>(module.waiting());
}

BENCHMARK_CAPTURE(BM_ModuleProcess, trex, std::string("trex.json"))->Apply(withPulses);
BENCHMARK_CAPTURE(BM_ModuleProcess, let, std::string("let.json"))->Apply(withPulses);

/// Partition 0 of range(0) alone on this thread: what one partition costs (the whole stream's
/// headers and readout checks, its share of the builders), free of the threads' scheduling; the
/// ratio to range(0) = 1 bounds what BM_Partitioned can scale to.
void BM_PartitionZero(benchmark::State &state, const std::string &file) {
  readout::FakeModuleContext ctx(test::shipped(file), file);
  ctx.setPartition(0, static_cast<unsigned>(state.range(0)));
  ctx.sink.keep = false;
  TrexModule module(ctx);
  (void)readout::test::processInCycle(state, module, stream(file), vmm3::kReadoutBytes);
  state.counters["events"] = static_cast<double>(ctx.sink.count);
}

BENCHMARK_CAPTURE(BM_PartitionZero, trex, std::string("trex.json"))->Arg(1)->Arg(2);
BENCHMARK_CAPTURE(BM_PartitionZero, let, std::string("let.json"))->Arg(1)->Arg(2);

/// The same datagrams through range(0) partitions, each on a thread of its own (efu
/// --proc-threads; README "Partitions"): readouts/s is the aggregate rate of the stream, each
/// partition reading every datagram and building its share of the event builders. trex.json
/// only: let.json packs a pulse into about one datagram (LET's neutrons reach grid 0 only), too
/// few a pass for the two barriers every pass waits at.
void BM_Partitioned(benchmark::State &state, const std::string &file) {
  readout::test::processPartitioned<TrexModule>(state, static_cast<unsigned>(state.range(0)),
                                                test::shipped(file), file, stream(file),
                                                vmm3::kReadoutBytes);
}

BENCHMARK_CAPTURE(BM_Partitioned, trex, std::string("trex.json"))->Arg(1)->Arg(2)->UseManualTime();

} // namespace
} // namespace efu::trex

BENCHMARK_MAIN();
