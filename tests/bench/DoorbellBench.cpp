// SPDX-License-Identifier: BSD-2-Clause
// Hand-off wake-up latency: a producer publishes one item and rings; how long until the sleeping
// consumer runs? The doorbell (futex) against the processing thread's former growing naps.
#include "common/memory/Doorbell.h"
#include "common/system/Affinity.h"
#include "common/time/Time.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace {

constexpr int kRounds = 2000;
constexpr int64_t kGapNs = 200 * efu::kNsPerUs; // the consumer is asleep when the item comes

/// The consumer's ways to wait for an empty queue to fill.
enum class Wait { Doorbell, Naps };

/// range(0): 0 = doorbell, 1 = naps of 20 us doubling to 1 ms (efu before the doorbell);
/// range(1): consumer CPU (the producer runs on CPU 0). Reports wake-up latency percentiles.
void wakeLatency(benchmark::State &state) {
  const Wait wait = state.range(0) == 0 ? Wait::Doorbell : Wait::Naps;
  const int consumerCpu = static_cast<int>(state.range(1));
  std::vector<int64_t> latencies;
  for (auto _ : state) {
    efu::Doorbell bell;
    std::atomic<int64_t> publishedAtNs{0}; // 0 = empty
    std::atomic<bool> stop{false};
    latencies.clear();
    latencies.reserve(kRounds);
    std::thread consumer([&] {
      (void)efu::pinCurrentThread(consumerCpu);
      int64_t napNs = 20 * efu::kNsPerUs;
      while (!stop.load()) {
        const int64_t at = publishedAtNs.exchange(0);
        if (at != 0) {
          latencies.push_back(efu::monotonicNs() - at);
          napNs = 20 * efu::kNsPerUs;
          continue;
        }
        if (wait == Wait::Doorbell) {
          const uint32_t ticket = bell.prepareWait();
          if (publishedAtNs.load() != 0 || stop.load()) {
            bell.cancelWait();
          } else {
            bell.wait(ticket, 10 * efu::kNsPerMs);
          }
        } else {
          efu::sleepUntilMonotonicNs(efu::monotonicNs() + napNs, stop);
          napNs = std::min(2 * napNs, 1000 * efu::kNsPerUs);
        }
      }
    });
    (void)efu::pinCurrentThread(0);
    for (int i = 0; i < kRounds; ++i) {
      efu::sleepUntilMonotonicNs(efu::monotonicNs() + kGapNs, stop);
      publishedAtNs.store(efu::monotonicNs());
      bell.ring();
      while (publishedAtNs.load() != 0) {
        std::this_thread::yield();
      }
    }
    stop = true;
    bell.ring();
    consumer.join();
  }
  std::sort(latencies.begin(), latencies.end());
  auto at = [&](double q) {
    return static_cast<double>(latencies[static_cast<size_t>(q * (latencies.size() - 1))]) / 1e3;
  };
  state.counters["p50_us"] = at(0.5);
  state.counters["p99_us"] = at(0.99);
  state.counters["max_us"] = at(1.0);
}

} // namespace

BENCHMARK(wakeLatency)->Name("wake/latency")->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"naps", "consumer_cpu"})->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
