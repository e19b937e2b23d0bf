// SPDX-License-Identifier: BSD-2-Clause
// bench_dream: full 8972-byte datagrams of DreamSource readouts (DreamInst.json, MagicInst.json,
// HeimdalInst.json; positions drawn uniformly over each source's image, those without a pixel
// redrawn) through DreamModule::process(); readouts/s. The datagrams are made once and replayed.
#include "modules/dream/DreamModule.h"
#include "modules/dream/DreamSource.h"

#include "common/readout/EssHeader.h"
#include "common/sdk/ModuleConfig.h"
#include "tests/support/FakeModuleContext.h"
#include "tests/support/ModuleBench.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <map>
#include <random>
#include <utility>

namespace efu::dream {
namespace {

struct Ignore final : sdk::TruthSink {
  void add(int64_t, int64_t, int32_t) override {}
};

nlohmann::json shipped(const std::string &name) {
  return validateModuleConfig(
      "dream", kDreamConfigKeys, kDreamConfigKeyCount,
      readConfigFile(std::string(EFU_SOURCE_DIR) + "/modules/dream/configs/" + name), name);
}

std::vector<std::vector<uint8_t>> makeStream(const std::string &file, int datagrams) {
  DreamSource source(shipped(file), file, 1);
  Ignore truth;
  std::mt19937_64 rng(7);
  std::vector<std::vector<uint8_t>> out;
  const readout::EssTime pulse{1'700'000'000, 0};
  const int64_t pulseNs = readout::ticksToNs(pulse.high, pulse.low);
  readout::test::DatagramPacker packer(source, truth);
  packer.setPulse(pulse, readout::nsToTicks(pulseNs - 71'428'571)); // 14 Hz
  for (int k = 0; k < datagrams; ++k) {
    while (packer.hasRoom()) {
      const auto x = static_cast<uint32_t>(rng() % source.imageWidth());
      const auto y = static_cast<uint32_t>(rng() % source.imageHeight());
      const auto tofNs = static_cast<int64_t>(rng() % 70'000'000);
      packer.add(readout::test::neutronAt(x, y, pulse, tofNs, rng()));
    }
    out.push_back(packer.take());
  }
  return out;
}

void BM_ModuleProcess(benchmark::State &state, const std::string &file) {
  static std::map<std::pair<std::string, int64_t>, std::vector<std::vector<uint8_t>>> streams;
  const auto key = std::make_pair(file, state.range(0));
  if (!streams.contains(key)) {
    streams[key] = makeStream(file, static_cast<int>(state.range(0)));
  }
  const auto &s = streams[key];
  readout::FakeModuleContext ctx(shipped(file), file);
  ctx.sink.keep = false;
  DreamModule module(ctx);
  (void)readout::test::processInCycle(state, module, s, kReadoutBytes);
  state.counters["events"] = static_cast<double>(ctx.sink.count);
}

/// DREAM as `partitions` partitions on as many threads (--proc-threads), every one given every
/// datagram: the aggregate readouts/s, to compare with one partition.
void BM_Partitions(benchmark::State &state) {
  const std::string file = "DreamInst.json";
  readout::test::processPartitioned<DreamModule>(
      state, static_cast<unsigned>(state.range(0)), shipped(file), file,
      makeStream(file, readout::test::kDistinctDatagrams), kReadoutBytes);
}

BENCHMARK(BM_Partitions)->Arg(1)->Arg(2)->UseManualTime();
BENCHMARK_CAPTURE(BM_ModuleProcess, dream, std::string("DreamInst.json"))
    ->Apply(readout::test::withCycles);
BENCHMARK_CAPTURE(BM_ModuleProcess, magic, std::string("MagicInst.json"))
    ->Apply(readout::test::withCycles);
BENCHMARK_CAPTURE(BM_ModuleProcess, heimdal, std::string("HeimdalInst.json"))
    ->Apply(readout::test::withCycles);
// DREAM's parts alone.
BENCHMARK_CAPTURE(BM_ModuleProcess, dream_bwec, std::string("bwec.json"))
    ->Apply(readout::test::withCycles);
BENCHMARK_CAPTURE(BM_ModuleProcess, dream_mantle, std::string("mantle.json"))
    ->Apply(readout::test::withCycles);
BENCHMARK_CAPTURE(BM_ModuleProcess, dream_hr, std::string("hr.json"))
    ->Apply(readout::test::withCycles);

} // namespace
} // namespace efu::dream

BENCHMARK_MAIN();
