// SPDX-License-Identifier: BSD-2-Clause
// Google Benchmark: ev44 serialisation rate (add + finishInto), next to a plain-copy reference.
#include "common/serialize/Ev44Builder.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

namespace {

// Events arrive in pulses of kEventsPerPulse, as from a detector at moderate rate.
constexpr int64_t kEventsPerPulse = 5000;

void BM_Ev44AddFinish(benchmark::State &state) {
  const auto maxEvents = static_cast<size_t>(state.range(0));
  efu::serialize::Ev44Builder builder(maxEvents);
  builder.setSource("bench");
  std::vector<uint64_t> message( // 8-aligned, as a pool block
      (efu::serialize::Ev44Builder::maxMessageBytes(maxEvents, 0, 5) + 7) / 8);
  int64_t messageId = 0;
  int32_t pixel = 0;
  int64_t pulse = 1'700'000'000'000'000'000;
  for (auto _ : state) {
    for (size_t i = 0; i < maxEvents; ++i) {
      if ((pixel % kEventsPerPulse) == 0) {
        pulse += 71'428'571;
      }
      builder.add(pulse, pixel & 0xFFFFF, pixel);
      ++pixel;
    }
    const std::span<uint8_t> bytes(reinterpret_cast<uint8_t *>(message.data()),
                                   builder.messageBytes());
    builder.finishInto(messageId++, bytes);
    benchmark::DoNotOptimize(bytes.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Ev44AddFinish)->Arg(1000)->Arg(50000)->Arg(500000);

// Reference: the two stores per event plus one memcpy into a message buffer, without flatbuffers.
void BM_PlainCopyReference(benchmark::State &state) {
  const auto maxEvents = static_cast<size_t>(state.range(0));
  std::vector<int32_t> tof(maxEvents);
  std::vector<int32_t> pixels(maxEvents);
  std::vector<uint8_t> out(maxEvents * 8 + 64);
  int32_t pixel = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < maxEvents; ++i) {
      tof[i] = pixel & 0xFFFFF;
      pixels[i] = pixel;
      ++pixel;
    }
    std::memcpy(out.data(), tof.data(), maxEvents * 4);
    std::memcpy(out.data() + maxEvents * 4, pixels.data(), maxEvents * 4);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_PlainCopyReference)->Arg(1000)->Arg(50000)->Arg(500000);

} // namespace

BENCHMARK_MAIN();
