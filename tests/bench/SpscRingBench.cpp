// SPDX-License-Identifier: BSD-2-Clause
// Two pinned threads pass ints through efu::SpscRing and its peers (boost, moodycamel), capacity 1024.
#include "common/memory/SpscRing.h"
#include "common/system/Affinity.h"

#include <benchmark/benchmark.h>

#if EFU_BENCH_BOOST
#include <boost/lockfree/spsc_queue.hpp>
#endif
#if EFU_BENCH_MOODYCAMEL
#include <readerwriterqueue/readerwriterqueue.h>
#endif

#include <atomic>
#include <cstdint>
#include <thread>

namespace {

constexpr size_t kCapacity = 1024;
constexpr int64_t kItemsPerIteration = 1 << 20;
constexpr size_t kBatch = 32;
constexpr int kProducerCpu = 0;
constexpr int kConsumerCpu = 1;

/// Each queue is wrapped in an adapter with the same four calls, so one harness times them all.
/// push/pop move one item; pushBatch/popBatch up to `n` items and return how many they moved.
struct EfuRing {
  efu::SpscRing<int> ring{kCapacity};
  bool push(int v) noexcept { return ring.tryPush(v); }
  bool pop(int &v) noexcept { return ring.tryPop(v); }
  size_t pushBatch(int first, size_t n) noexcept {
    const size_t free = ring.reserve(n);
    for (size_t i = 0; i < free; ++i) {
      ring.producerSlot(i) = first + static_cast<int>(i);
    }
    ring.commit(free);
    return free;
  }
  size_t popBatch(int *out, size_t n) noexcept {
    const size_t filled = ring.available(n);
    for (size_t i = 0; i < filled; ++i) {
      out[i] = ring.consumerSlot(i);
    }
    ring.release(filled);
    return filled;
  }
};

#if EFU_BENCH_BOOST
struct BoostQueue {
  // capacity<N> is compile-time sized like ours; boost keeps one slot empty (N-1 usable).
  boost::lockfree::spsc_queue<int, boost::lockfree::capacity<kCapacity>> queue;
  bool push(int v) noexcept { return queue.push(v); }
  bool pop(int &v) noexcept { return queue.pop(v); }
  size_t pushBatch(int first, size_t n) noexcept {
    int items[kBatch];
    for (size_t i = 0; i < n; ++i) {
      items[i] = first + static_cast<int>(i);
    }
    return queue.push(items, n);
  }
  size_t popBatch(int *out, size_t n) noexcept { return queue.pop(out, n); }
};
#endif

#if EFU_BENCH_MOODYCAMEL
struct MoodycamelQueue {
  moodycamel::ReaderWriterQueue<int> queue{kCapacity};
  bool push(int v) noexcept { return queue.try_enqueue(v); } // try_: never allocates
  bool pop(int &v) noexcept { return queue.try_dequeue(v); }
};
#endif

/// Consumer on its own pinned thread; the benchmark thread (pinned) produces. One iteration
/// moves kItemsPerIteration ints and ends when the consumer has seen the last one, so the
/// time covers the whole transfer. The consumer checks the order (a wrong item fails the run).
template <typename Queue, bool kBatched> void transfer(benchmark::State &state) {
  auto queue = std::make_unique<Queue>();
  std::atomic<int64_t> consumed{0};
  std::atomic<bool> stop{false};
  std::atomic<bool> disorder{false};
  std::thread consumer([&] {
    if (!efu::pinCurrentThread(kConsumerCpu).empty()) {
      disorder = true;
    }
    int expected = 0;
    int64_t count = 0;
    int items[kBatch];
    while (!stop.load(std::memory_order_relaxed)) {
      size_t n = 0;
      if constexpr (kBatched) {
        n = queue->popBatch(items, kBatch);
      } else {
        n = queue->pop(items[0]) ? 1 : 0;
      }
      for (size_t i = 0; i < n; ++i) {
        if (items[i] != expected) {
          disorder.store(true, std::memory_order_relaxed);
        }
        expected = (expected + 1) % kItemsPerIteration;
      }
      if (n > 0) {
        count += static_cast<int64_t>(n);
        consumed.store(count, std::memory_order_release);
      }
    }
  });
  if (const auto problem = efu::pinCurrentThread(kProducerCpu); !problem.empty()) {
    state.SkipWithError(problem.c_str());
  }
  int64_t target = 0;
  for (auto _ : state) {
    int next = 0;
    while (next < kItemsPerIteration) {
      if constexpr (kBatched) {
        const auto want = std::min<int64_t>(kBatch, kItemsPerIteration - next);
        next += static_cast<int>(queue->pushBatch(next, static_cast<size_t>(want)));
      } else {
        if (queue->push(next)) {
          ++next;
        }
      }
    }
    target += kItemsPerIteration;
    while (consumed.load(std::memory_order_acquire) < target) {
    }
  }
  stop = true;
  consumer.join();
  if (disorder) {
    state.SkipWithError("items arrived out of order, or the consumer could not be pinned");
  }
  state.SetItemsProcessed(state.iterations() * kItemsPerIteration);
}

} // namespace

#define EFU_RING_BENCHMARK(queue, batched, name)                                                   \
  BENCHMARK(transfer<queue, batched>)->Name(name)->Unit(benchmark::kMillisecond)->UseRealTime()

EFU_RING_BENCHMARK(EfuRing, false, "ring/efu/single");
EFU_RING_BENCHMARK(EfuRing, true, "ring/efu/batch32");
#if EFU_BENCH_BOOST
EFU_RING_BENCHMARK(BoostQueue, false, "ring/boost/single");
EFU_RING_BENCHMARK(BoostQueue, true, "ring/boost/batch32");
#endif
#if EFU_BENCH_MOODYCAMEL
EFU_RING_BENCHMARK(MoodycamelQueue, false, "ring/moodycamel/single");
#endif

BENCHMARK_MAIN();
