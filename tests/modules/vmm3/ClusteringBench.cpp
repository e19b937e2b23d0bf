// SPDX-License-Identifier: BSD-2-Clause
// Google Benchmark of VMM3 event formation: hits/s through clustering and matching, and through
// the loaded module (header + readout parsing + clustering + TOF + event sink) per datagram.
#include "common/readout/EssHeader.h"
#include "tests/support/FakeModuleContext.h"
#include "modules/vmm3/Clustering.h"
#include "modules/vmm3/Vmm3Readout.h"

#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <fstream>
#include <random>
#include <vector>

using namespace efu;
using namespace efu::vmm3;

namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr size_t kHitsPerDatagram = 447; // (8972 - 30) / 20

/// Neutrons 1 µs apart (mean), `width` strips per plane, a few ns of time spread; time ordered.
struct Neutrons {
  std::vector<Plane> planes;
  std::vector<Hit> hits;
};

Neutrons makeHits(size_t neutrons, int width) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int> sx(3, 120);
  std::uniform_int_distribution<int> gap(500, 1500);
  Neutrons n;
  int64_t t = kT0;
  for (size_t i = 0; i < neutrons; ++i) {
    t += gap(rng);
    const int cx = sx(rng);
    const int cy = sx(rng);
    for (int k = 0; k < width; ++k) {
      n.planes.push_back(Plane::X);
      n.hits.push_back(Hit{t + k, static_cast<uint16_t>(cx + k), static_cast<uint16_t>(100 + k)});
    }
    for (int k = 0; k < width; ++k) {
      n.planes.push_back(Plane::Y);
      n.hits.push_back(Hit{t + 2 * k, static_cast<uint16_t>(cy + k), 200});
    }
  }
  return n;
}

class Counting final : public EventOutput {
public:
  void event(const Event &e) noexcept override { pixels += static_cast<uint64_t>(e.pixelId); }
  uint64_t pixels = 0;
};

void BM_EventFormer(benchmark::State &state) {
  const Neutrons n = makeHits(100'000, static_cast<int>(state.range(0)));
  EventFormer::Params p;
  p.nx = 128;
  p.ny = 128;
  Counting out;
  EventFormer former(p, out);
  int64_t shift = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < n.hits.size(); ++i) {
      Hit h = n.hits[i];
      h.timeNs += shift;
      former.addHit(n.planes[i], h);
      if (i % kHitsPerDatagram == kHitsPerDatagram - 1) {
        former.advance();
      }
    }
    former.advance();
    shift += 1'000'000'000; // the next round is later in time
  }
  former.flush();
  benchmark::DoNotOptimize(out.pixels);
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n.hits.size()));
  state.counters["events"] = static_cast<double>(former.stats().events);
  state.counters["late"] = static_cast<double>(former.stats().planes[0].late);
}
BENCHMARK(BM_EventFormer)->Arg(2)->Arg(3)->Arg(5)->Unit(benchmark::kMillisecond);

/// Datagrams of freia.json readouts through the real module, as the processing thread does.
void BM_ModuleProcess(benchmark::State &state) {
  void *lib = dlopen(VMM3_MODULE_PATH, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    state.SkipWithError("cannot dlopen the vmm3 module");
    return;
  }
  auto entry =
      reinterpret_cast<const EfuModuleDescriptor *(*)()>(dlsym(lib, EFU_MODULE_ENTRY_SYMBOL));
  std::ifstream in(std::string(EFU_SOURCE_DIR) + "/modules/vmm3/configs/freia.json");
  readout::FakeModuleContext ctx(nlohmann::json::parse(in), "freia.json");
  ctx.sink.keep = false;
  sdk::Module *module = entry()->create(&ctx);
  if (module == nullptr) {
    state.SkipWithError(ctx.error.c_str());
    return;
  }
  // 64 datagrams of 447 readouts (3 x + 3 y strips per neutron); times advance each round.
  const Neutrons n = makeHits(64 * kHitsPerDatagram / 6 + 1, 3);
  const uint32_t pulseSec = static_cast<uint32_t>(kT0 / 1'000'000'000);
  std::vector<std::vector<uint8_t>> datagrams;
  size_t next = 0;
  for (uint32_t d = 0; d < 64; ++d) {
    std::vector<uint8_t> buf(sizeof(readout::EssHeaderV0) + kHitsPerDatagram * kReadoutBytes);
    readout::HeaderFields f;
    f.detectorType = readout::kTypeFreia;
    f.totalLength = static_cast<uint16_t>(buf.size());
    f.pulse = {pulseSec, 0};
    f.prevPulse = {pulseSec - 1, 0};
    f.seqNum = d;
    readout::writeHeader(buf, f);
    for (size_t k = 0; k < kHitsPerDatagram; ++k, ++next) {
      const Hit &h = n.hits[next];
      const readout::EssTime t = readout::nsToTicks(h.timeNs);
      Vmm3Readout r{};
      r.length = kReadoutBytes;
      r.timeHigh = t.high;
      r.timeLow = t.low;
      r.otadc = h.adc;
      const bool x = n.planes[next] == Plane::X;
      r.vmm = static_cast<uint8_t>(x ? h.strip / 64 : 2 + h.strip / 64);
      r.channel = static_cast<uint8_t>(h.strip % 64);
      std::memcpy(buf.data() + sizeof(readout::EssHeaderV0) + k * kReadoutBytes, &r, sizeof(r));
    }
    datagrams.push_back(std::move(buf));
  }
  uint32_t seq = 0;
  for (auto _ : state) {
    for (auto &buf : datagrams) {
      std::memcpy(buf.data() + offsetof(readout::EssHeaderV0, seqNum), &seq, sizeof(seq));
      ++seq;
      module->process(sdk::Packet{buf.data(), static_cast<uint32_t>(buf.size()), 0, 0});
    }
    // The next round is one second later (pulse and hits), so no hit is late.
    state.PauseTiming();
    for (auto &buf : datagrams) {
      readout::EssHeaderV0 h;
      std::memcpy(&h, buf.data(), sizeof(h));
      ++h.pulseHigh;
      ++h.prevPulseHigh;
      std::memcpy(buf.data(), &h, sizeof(h));
      for (size_t k = 0; k < kHitsPerDatagram; ++k) {
        uint8_t *r = buf.data() + sizeof(h) + k * kReadoutBytes + offsetof(Vmm3Readout, timeHigh);
        uint32_t high = 0;
        std::memcpy(&high, r, sizeof(high));
        ++high;
        std::memcpy(r, &high, sizeof(high));
      }
    }
    state.ResumeTiming();
  }
  module->flush();
  state.SetItemsProcessed(state.iterations() * 64 * static_cast<int64_t>(kHitsPerDatagram));
  state.counters["events"] = static_cast<double>(ctx.sink.count);
  state.counters["late"] = static_cast<double>(ctx.value("hits.late"));
  entry()->destroy(module);
  dlclose(lib);
}
BENCHMARK(BM_ModuleProcess)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
