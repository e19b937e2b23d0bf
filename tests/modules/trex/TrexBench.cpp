// SPDX-License-Identifier: BSD-2-Clause
// bench_trex: full 8972-byte datagrams of TrexSource readouts (trex.json, let.json) through
// TrexModule::process(); readouts/s. 14 Hz pulses 6289464 ticks apart (trex.json's
// MaxPulseTimeNS 71428570 refuses a 1/14 s gap), 1000 neutrons a pulse; the datagrams are made
// once and replayed (at the wrap-around hits step back in time, a few events differ).
#include "modules/trex/TrexModule.h"
#include "modules/trex/TrexSource.h"
#include "tests/modules/trex/TrexTestSupport.h"
#include "tests/support/FakeModuleContext.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <random>

namespace efu::trex {
namespace {

struct Counting final : sdk::TruthSink {
  void add(int64_t, int64_t, int32_t) override {}
};

struct Stream {
  std::vector<std::vector<uint8_t>> datagrams;
  int64_t readouts = 0;
};

Stream makeStream(const std::string &file, int pulses) {
  const nlohmann::json config = test::shipped(file);
  TrexSource source(config, file, 11);
  Counting truth;
  std::mt19937_64 rng(5);
  Stream s;
  uint32_t seq = 0;
  std::vector<uint8_t> buf(source.maxEventBytes());
  for (int k = 0; k < pulses; ++k) {
    const int64_t ticks = int64_t{k + 1} * 6'289'464;
    const readout::EssTime p{
        static_cast<uint32_t>(1'700'000'000 + ticks / readout::kTicksPerSecond),
        static_cast<uint32_t>(ticks % readout::kTicksPerSecond)};
    const int64_t prevTicks = int64_t{k} * 6'289'464;
    const readout::EssTime prev{
        static_cast<uint32_t>(1'700'000'000 + prevTicks / readout::kTicksPerSecond),
        static_cast<uint32_t>(prevTicks % readout::kTicksPerSecond)};
    const int64_t pNs = readout::ticksToNs(p.high, p.low);
    std::vector<int64_t> tofs(1000);
    for (auto &t : tofs) {
      t = static_cast<int64_t>(rng() % 70'000'000);
    }
    std::sort(tofs.begin(), tofs.end());
    test::Datagram d(p, prev, seq++);
    size_t bytes = 30;
    for (const int64_t tof : tofs) {
      sdk::Neutron n;
      n.x = static_cast<uint32_t>(rng() % source.imageWidth());
      n.y = static_cast<uint32_t>(rng() % source.imageHeight());
      n.pulse = p;
      n.pulseTimeNs = pNs;
      n.eventTime = readout::nsToTicks(pNs + tof);
      n.eventTimeNs = readout::ticksToNs(n.eventTime.high, n.eventTime.low);
      const size_t w = source.encodeEvent(n, buf, truth);
      if (w == 0) {
        continue;
      }
      if (bytes + w > readout::kMaxDatagramBytes) {
        const sdk::Packet pk = d.packet();
        s.datagrams.emplace_back(pk.data, pk.data + pk.size);
        d = test::Datagram(p, prev, seq++);
        bytes = 30;
      }
      d.raw(std::vector<uint8_t>(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(w)));
      bytes += w;
    }
    const sdk::Packet pk = d.packet();
    s.datagrams.emplace_back(pk.data, pk.data + pk.size);
  }
  s.readouts = static_cast<int64_t>(source.readouts());
  return s;
}

void BM_ModuleProcess(benchmark::State &state, const std::string &file) {
  static std::map<std::string, Stream> streams;
  if (!streams.contains(file)) {
    streams[file] = makeStream(file, 20);
  }
  const Stream &s = streams[file];
  readout::FakeModuleContext ctx(test::shipped(file), file);
  ctx.sink.keep = false;
  TrexModule module(ctx);
  size_t i = 0;
  int64_t readouts = 0;
  for (auto _ : state) {
    const std::vector<uint8_t> &d = s.datagrams[i];
    module.process(sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0});
    readouts += static_cast<int64_t>((d.size() - 30) / vmm3::kReadoutBytes);
    i = (i + 1) % s.datagrams.size();
  }
  state.SetItemsProcessed(readouts);
  state.counters["events"] = static_cast<double>(ctx.sink.count);
}

BENCHMARK_CAPTURE(BM_ModuleProcess, trex, std::string("trex.json"));
BENCHMARK_CAPTURE(BM_ModuleProcess, let, std::string("let.json"));

} // namespace
} // namespace efu::trex

BENCHMARK_MAIN();
