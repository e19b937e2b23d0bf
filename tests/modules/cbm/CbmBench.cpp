// SPDX-License-Identifier: BSD-2-Clause
// cbm throughput per core: full 8972-byte datagrams of readoutgen's readouts (CbmSource on
// cbmtest.json: 0D, 2D and IBM monitors; times within 10 us of the pulse so that the IBM
// histograms bin them) through CbmModule::process() with counting sinks. Items = readouts.
// BM_CbmProcess/per_pulse:P/distinct:N: P datagrams per pulse, so 1/P of the datagrams close and
// publish the three 100-bin histograms of cbmtest.json (P = 1: every datagram a new pulse); an
// iteration is a pass over the N distinct datagrams (tests/support/ModuleBench.h).
#include "common/sdk/ModuleConfig.h"
#include "modules/cbm/CbmModule.h"
#include "modules/cbm/CbmSource.h"
#include "tests/support/FakeModuleContext.h"
#include "tests/support/ModuleBench.h"
#include "tests/support/SourceDatagrams.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace efu;

void BM_CbmProcess(benchmark::State &state) {
  const std::string path = std::string(EFU_SOURCE_DIR) + "/modules/cbm/configs/cbmtest.json";
  const nlohmann::json config = validateModuleConfig(
      "cbm", cbm::kCbmConfigKeys, cbm::kCbmConfigKeyCount, readConfigFile(path), path);
  cbm::CbmSource source(config, path, 1);
  const auto perPulse = static_cast<int>(state.range(0));
  std::mt19937_64 rng(42);
  readout::test::TruthCount truth;
  std::vector<std::vector<uint8_t>> datagrams;
  readout::test::DatagramPacker packer(source, truth);
  int64_t readouts = 0;
  for (int64_t k = 0; k < state.range(1); ++k) {
    const int64_t p = k / perPulse;
    const readout::EssTime pulse = readout::nsToTicks(1'700'000'000'000'000'000 + p * 71'428'571LL);
    const readout::EssTime prev =
        readout::nsToTicks(1'700'000'000'000'000'000 + (p - 1) * 71'428'571LL);
    packer.setPulse(pulse, prev);
    while (packer.hasRoom()) {
      const auto x = static_cast<uint32_t>(rng() % source.imageWidth());
      const auto y = static_cast<uint32_t>(rng() % source.imageHeight());
      const auto tofNs = static_cast<int64_t>(rng() % 10'000);
      const size_t bytes =
          packer.add(readout::test::neutronAt(x, y, pulse, tofNs, static_cast<uint64_t>(readouts)));
      readouts += bytes != 0 ? 1 : 0;
    }
    datagrams.push_back(packer.take());
  }
  readout::FakeModuleContext ctx(config, path);
  cbm::CbmModule module(ctx);
  for (auto &[name, sink] : ctx.sources) {
    sink.keep = false;
  }
  for (auto &[name, sink] : ctx.arrays) {
    sink.keep = false;
  }
  int64_t processed = 0;
  uint32_t seq = 0;
  for (auto _ : state) {
    for (auto &d : datagrams) {
      std::memcpy(d.data() + 26, &seq, 4);
      ++seq;
      module.process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
    }
    processed += readouts;
  }
  state.SetItemsProcessed(processed);
  state.counters["histograms"] = static_cast<double>(ctx.value("serialize.cbm4.histograms")) /
                                 static_cast<double>(state.iterations());
}
BENCHMARK(BM_CbmProcess)
    ->ArgNames({"per_pulse", "distinct"})
    ->ArgsProduct({{1, 8}, {readout::test::kDistinctDatagrams, readout::test::kLearntCycle}})
    ->Unit(benchmark::kMicrosecond);

/// cbmtest.json's eight monitors as `partitions` partitions on as many threads
/// (--proc-threads), every one given every datagram (8 per pulse; the sequence numbers and
/// pulses of a pass repeat in the next): the aggregate readouts/s, to compare with one
/// partition.
void BM_Partitions(benchmark::State &state) {
  const std::string path = std::string(EFU_SOURCE_DIR) + "/modules/cbm/configs/cbmtest.json";
  const nlohmann::json config = validateModuleConfig(
      "cbm", cbm::kCbmConfigKeys, cbm::kCbmConfigKeyCount, readConfigFile(path), path);
  cbm::CbmSource source(config, path, 1);
  readout::test::TruthCount truth;
  readout::test::processPartitioned<cbm::CbmModule>(
      state, static_cast<unsigned>(state.range(0)), config, path,
      readout::test::fullDatagrams(source, truth, readout::test::kDistinctDatagrams / 8, 8),
      cbm::kReadoutBytes);
}
BENCHMARK(BM_Partitions)->Arg(1)->Arg(2)->UseManualTime();

} // namespace

BENCHMARK_MAIN();
