// SPDX-License-Identifier: BSD-2-Clause
// vmm3 throughput per core: full 8972-byte datagrams of readoutgen's readouts (Vmm3Source, fixed
// seed, random pixels, event times sorted within each 14 Hz pulse) through Vmm3Module::process()
// with a counting sink. Items = readouts.
#include "modules/vmm3/Vmm3Module.h"
#include "modules/vmm3/Vmm3Source.h"
#include "tests/modules/vmm3/Vmm3TestSupport.h"
#include "tests/support/FakeModuleContext.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace efu;

struct NoTruth final : sdk::TruthSink {
  void add(int64_t, int64_t, int32_t) override { ++count; }
  int64_t count = 0;
};

/// 64 full datagrams (as many readouts as fit in 8972 bytes), 8 per pulse, each with its pulse
/// and the previous one; neutrons in time order within the pulse, as readoutgen sends them.
std::vector<std::vector<uint8_t>> makeDatagrams(vmm3::Vmm3Source &source, int64_t &neutrons) {
  std::mt19937_64 rng(42);
  std::vector<std::vector<uint8_t>> out;
  NoTruth truth;
  constexpr int kPerPulse = 8;
  for (int p = 0; p < 64 / kPerPulse; ++p) {
    const readout::EssTime pulse = vmm3::test::pulseTime(p);
    const readout::EssTime prev = vmm3::test::pulseTime(p - 1);
    const int64_t pulseNs = readout::ticksToNs(pulse.high, pulse.low);
    // Enough sorted times for the pulse's datagrams (at most 74 neutrons each; ESTIA covers
    // half its image).
    std::vector<int64_t> tofs(kPerPulse * 200);
    for (int64_t &t : tofs) {
      t = static_cast<int64_t>(rng() % 70'000'000);
    }
    std::sort(tofs.begin(), tofs.end());
    size_t next = 0;
    for (int k = 0; k < kPerPulse; ++k) {
      std::vector<uint8_t> d(readout::headerBytes(0));
      while (d.size() + source.maxEventBytes() <= readout::kMaxDatagramBytes &&
             next < tofs.size()) {
        sdk::Neutron n;
        n.x = static_cast<uint32_t>(rng() % source.imageWidth());
        n.y = static_cast<uint32_t>(rng() % source.imageHeight());
        n.pulse = pulse;
        n.pulseTimeNs = pulseNs;
        n.eventTime = readout::nsToTicks(pulseNs + tofs[next++]);
        n.eventTimeNs = readout::ticksToNs(n.eventTime.high, n.eventTime.low);
        std::vector<uint8_t> r(source.maxEventBytes());
        const size_t bytes = source.encodeEvent(n, r, truth);
        d.insert(d.end(), r.begin(), r.begin() + static_cast<std::ptrdiff_t>(bytes));
      }
      readout::HeaderFields f;
      f.detectorType = source.detectorType();
      f.pulse = pulse;
      f.prevPulse = prev;
      f.seqNum = static_cast<uint32_t>(out.size());
      f.totalLength = static_cast<uint16_t>(d.size());
      readout::writeHeader(d, f);
      out.push_back(std::move(d));
    }
  }
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
