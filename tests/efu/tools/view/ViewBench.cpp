// SPDX-License-Identifier: BSD-2-Clause
// Google Benchmark: efu-view's ev44 ingest (verify, then bin image + TOF, with and without two
// regions and a gate) of 8192-event messages on a LoKI-sized image, next to the floor cost of
// touching the same data (a loop that only sums the pixel ids).
#include "efu/tools/view/ViewState.h"

#include "schemas/ev44_generated.h"

#include <benchmark/benchmark.h>

#include <random>
#include <vector>

namespace {

constexpr size_t kEventsPerMessage = 8192;
constexpr size_t kMessages = 64; // 4 MiB of events: more than the caches hold
constexpr int64_t kSecondNs = 1'000'000'000;
constexpr int64_t kStartNs = 1'733'356'800 * kSecondNs;
// The clock the view sees moves as if events came at 50 M/s, so that the frames roll (each
// second) and the tick (each 100 ms) cost what they would at that rate.
constexpr int64_t kNsPerMessage = kEventsPerMessage * kSecondNs / 50'000'000;
constexpr int64_t kTickNs = kSecondNs / 10;

/// LoKI as modules/caen/configs/LokiFull.json describes it (tests/efu/tools/ImageTest.cpp):
/// 512 positions along 896 groups x 7 straws.
efu::tools::ImageGeometry lokiSized() {
  return {"caen", "loki", 512, 896 * 7, 1};
}

/// Messages of one pulse each, pixels uniform over the whole image (the worst case for the
/// caches), times uniform over the 100 ms range.
const std::vector<std::vector<uint8_t>> &messages() {
  static const std::vector<std::vector<uint8_t>> built = [] {
    const auto geometry = lokiSized();
    std::mt19937 random(11);
    std::uniform_int_distribution<int32_t> pixel(1, static_cast<int32_t>(geometry.pixels()));
    std::uniform_int_distribution<int32_t> tof(0, 99'999'999);
    std::vector<std::vector<uint8_t>> out;
    for (size_t m = 0; m < kMessages; ++m) {
      std::vector<int32_t> pixels(kEventsPerMessage);
      std::vector<int32_t> tofs(kEventsPerMessage);
      for (size_t i = 0; i < kEventsPerMessage; ++i) {
        pixels[i] = pixel(random);
        tofs[i] = tof(random);
      }
      const std::vector<int64_t> pulses{kStartNs + static_cast<int64_t>(m) * 71'428'571};
      const std::vector<int32_t> index{0};
      flatbuffers::FlatBufferBuilder fbb;
      efu::fb::FinishEvent44MessageBuffer(
          fbb, efu::fb::CreateEvent44MessageDirect(fbb, "caen", static_cast<int64_t>(m), &pulses,
                                                   &index, &tofs, &pixels));
      out.emplace_back(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
    }
    return out;
  }();
  return built;
}

void ingest(benchmark::State &state, bool regions, bool gate) {
  const auto &all = messages();
  efu::tools::view::ViewConfig config;
  config.geometry = lokiSized();
  efu::tools::view::ViewState view(config);
  int64_t now = kStartNs;
  view.ingest("loki_detector", all[0], now); // the source exists before the regions
  if (regions) {
    uint32_t id = 0;
    view.addRoi("caen", {100, 1000, 200, 1100}, now, id);
    view.addRoi("caen", {0, 2000, 512, 3000}, now, id);
  }
  if (gate) {
    view.setGate(std::pair<int64_t, int64_t>{10'000'000, 50'000'000}, now);
  }
  size_t next = 0;
  int64_t nextTick = now + kTickNs;
  for (auto _ : state) {
    view.ingest("loki_detector", all[next], now);
    next = (next + 1) % all.size();
    now += kNsPerMessage;
    if (now >= nextTick) {
      view.tick(now);
      nextTick += kTickNs;
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kEventsPerMessage));
  benchmark::DoNotOptimize(view.tof("caen", std::nullopt));
}

void BM_ViewIngest(benchmark::State &state) {
  ingest(state, false, false);
}
BENCHMARK(BM_ViewIngest);

void BM_ViewIngestTwoRois(benchmark::State &state) {
  ingest(state, true, false);
}
BENCHMARK(BM_ViewIngestTwoRois);

void BM_ViewIngestGate(benchmark::State &state) {
  ingest(state, false, true);
}
BENCHMARK(BM_ViewIngestGate);

void BM_ViewIngestTwoRoisAndGate(benchmark::State &state) {
  ingest(state, true, true);
}
BENCHMARK(BM_ViewIngestTwoRoisAndGate);

// The peer: the same messages' pixel ids summed, read in place without verification.
void BM_SumPixelIdsPeer(benchmark::State &state) {
  const auto &all = messages();
  size_t next = 0;
  int64_t sum = 0;
  for (auto _ : state) {
    const auto *pixels = efu::fb::GetEvent44Message(all[next].data())->pixel_id();
    for (const int32_t p : *pixels) {
      sum += p;
    }
    benchmark::DoNotOptimize(sum);
    next = (next + 1) % all.size();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kEventsPerMessage));
}
BENCHMARK(BM_SumPixelIdsPeer);

} // namespace

BENCHMARK_MAIN();
