// SPDX-License-Identifier: BSD-2-Clause
// The loop of a module benchmark: datagrams through Module::process() in a cycle, readouts/s.
#pragma once

#include "common/readout/EssHeader.h"
#include "tests/support/SourceDatagrams.h"

#include "common/system/Affinity.h"
#include "tests/support/FakeModuleContext.h"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <barrier>
#include <chrono>
#include <concepts>
#include <memory>
#include <string>
#include <thread>

#include <cstdint>
#include <vector>

namespace efu::readout::test {

/// The distinct datagrams a module benchmark replays (about 9 MB of full datagrams): the figure.
/// A cycle of kLearntCycle datagrams, as the benchmarks replayed until December 2026, is learnt
/// by the CPU's branch predictor within a few passes: the VMM3 and NMX loops ran 1.3-1.5x and
/// CAEN's 1.1x faster on it than on data they had not seen, while copying each datagram into
/// one warm buffer first (as efu's receive does) changed nothing, so it is not the caches. A
/// detector's data never repeats (docs/benchmarks/link/instruments.md, "Fresh data").
inline constexpr int kDistinctDatagrams = 1024;
inline constexpr int kLearntCycle = 64;

/// Registers a module benchmark whose state.range(0) is the distinct datagrams it replays at
/// both: ".../distinct:1024", the figure, and ".../distinct:64", the learnt cycle, to compare.
inline void withCycles(benchmark::internal::Benchmark *b) {
  b->ArgName("distinct")->Arg(kDistinctDatagrams)->Arg(kLearntCycle);
}

/// One datagram of `datagrams` per iteration, in a cycle. Items (and the "readouts/s" counter)
/// are readouts: each datagram's payload after its ESS header over `readoutBytes`. Returns the
/// full passes over `datagrams`, for checking that every encoded neutron became an event.
template <typename Module>
int64_t processInCycle(benchmark::State &state, Module &module,
                       const std::vector<std::vector<uint8_t>> &datagrams, size_t readoutBytes) {
  size_t i = 0;
  int64_t readouts = 0;
  int64_t passes = 0;
  for (auto _ : state) {
    const std::vector<uint8_t> &d = datagrams[i];
    module.process(packetOf(d));
    readouts += static_cast<int64_t>((d.size() - headerBytes(0)) / readoutBytes);
    if (++i == datagrams.size()) {
      i = 0;
      ++passes;
    }
  }
  state.SetItemsProcessed(readouts);
  state.counters["readouts/s"] =
      benchmark::Counter(static_cast<double>(readouts), benchmark::Counter::kIsRate);
  state.counters["readouts/datagram"] =
      static_cast<double>(readouts) / static_cast<double>(state.iterations());
  state.counters["distinct"] = static_cast<double>(datagrams.size());
  return passes;
}

/// The module as `partitions` partitions (docs/modules.md, "Partitions"), each instance on a
/// thread of its own pinned to CPU p (when `pin`; partition 0 on the calling thread), all given
/// every datagram of `datagrams`, as efu's processing threads are. One benchmark iteration is one
/// pass over `datagrams` by every partition at once, timed by the wall clock (register with
/// UseManualTime()): "readouts/s" is the aggregate rate, and its ratio to the same benchmark with 1
/// partition is the scaling. `readoutsOf(datagram)` says how many readouts a datagram holds (called
/// once per datagram, before the timing), for datagrams without an ESS header (timepix3: its camera
/// words).
template <typename Module, std::invocable<const std::vector<uint8_t> &> ReadoutsOf>
void processPartitioned(benchmark::State &state, unsigned partitions, const nlohmann::json &config,
                        const std::string &source,
                        const std::vector<std::vector<uint8_t>> &datagrams, ReadoutsOf readoutsOf,
                        bool pin = true, const nlohmann::json &calibration = nullptr) {
  std::vector<std::unique_ptr<FakeModuleContext>> contexts;
  std::vector<std::unique_ptr<Module>> modules;
  for (unsigned p = 0; p < partitions; ++p) {
    contexts.push_back(std::make_unique<FakeModuleContext>(config, source));
    contexts.back()->setPartition(p, partitions);
    if (!calibration.is_null()) {
      contexts.back()->setCalibration(calibration, "calib.json");
    }
    contexts.back()->sink.keep = false;
    modules.push_back(std::make_unique<Module>(*contexts.back()));
    // Only count: sinks that record would grow inside the timed loop.
    for (auto &[name, sink] : contexts.back()->sources) {
      sink.keep = false;
    }
    for (auto &[name, sink] : contexts.back()->arrays) {
      sink.keep = false;
    }
  }
  int64_t readoutsPerPass = 0;
  for (const std::vector<uint8_t> &d : datagrams) {
    readoutsPerPass += static_cast<int64_t>(readoutsOf(d));
  }
  std::atomic<bool> running{true};
  // The timing thread runs partition 0 itself: a thread that only waited would spin in the
  // barrier (libstdc++ yields in a loop) and take a CPU from the partitions.
  std::barrier start(static_cast<std::ptrdiff_t>(partitions));
  std::barrier done(static_cast<std::ptrdiff_t>(partitions));
  std::vector<std::thread> threads;
  for (unsigned p = 1; p < partitions; ++p) {
    threads.emplace_back([&, p] {
      if (pin) {
        (void)pinCurrentThread(static_cast<int>(p));
      }
      for (;;) {
        start.arrive_and_wait();
        if (!running.load(std::memory_order_relaxed)) {
          return;
        }
        for (const std::vector<uint8_t> &d : datagrams) {
          modules[p]->process(packetOf(d));
        }
        done.arrive_and_wait();
      }
    });
  }
  cpu_set_t affinity;
  CPU_ZERO(&affinity);
  (void)pthread_getaffinity_np(pthread_self(), sizeof(affinity), &affinity);
  if (pin) {
    (void)pinCurrentThread(0);
  }
  int64_t passes = 0;
  for (auto _ : state) {
    const auto begin = std::chrono::steady_clock::now();
    start.arrive_and_wait();
    for (const std::vector<uint8_t> &d : datagrams) {
      modules[0]->process(packetOf(d));
    }
    done.arrive_and_wait();
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    ++passes;
  }
  running = false;
  start.arrive_and_wait();
  for (std::thread &t : threads) {
    t.join();
  }
  (void)pthread_setaffinity_np(pthread_self(), sizeof(affinity), &affinity);
  uint64_t events = 0;
  for (const auto &ctx : contexts) {
    events += ctx->sink.count;
    for (const auto &[name, sink] : ctx->sources) {
      events += sink.count;
    }
  }
  state.SetItemsProcessed(passes * readoutsPerPass);
  state.counters["readouts/s"] = benchmark::Counter(static_cast<double>(passes * readoutsPerPass),
                                                    benchmark::Counter::kIsRate);
  state.counters["events"] = static_cast<double>(events);
  state.counters["partitions"] = partitions;
}

/// The same for ESS datagrams: a datagram's readouts are its payload after the ESS header over
/// `readoutBytes`, as processInCycle() counts them.
template <typename Module>
void processPartitioned(benchmark::State &state, unsigned partitions, const nlohmann::json &config,
                        const std::string &source,
                        const std::vector<std::vector<uint8_t>> &datagrams, size_t readoutBytes,
                        bool pin = true, const nlohmann::json &calibration = nullptr) {
  processPartitioned<Module>(
      state, partitions, config, source, datagrams,
      [readoutBytes](const std::vector<uint8_t> &d) {
        return (d.size() - headerBytes(0)) / readoutBytes;
      },
      pin, calibration);
}

} // namespace efu::readout::test
