// SPDX-License-Identifier: BSD-2-Clause
// efu-bench-stalls: how long a busy, pinned thread on this machine goes without running.
//
// One thread pinned to --cpu reads the steady clock in a tight loop for --seconds; a step between
// two readings longer than --threshold-us is time the thread did not run (an interrupt, another
// task, the hypervisor's steal). A receiver on that core cannot read its socket meanwhile, so the
// longest stalls say how many datagrams the socket buffer must hold to lose none at a given rate
// (scripts/bench-lossless prints this next to its rates; docs/performance.md). Of efu's code only
// the pinning (common/system/Affinity).
//
// stdout, one JSON line: {"cpu","seconds","threshold_us","stalls","stalled_us","max_us",
// "histogram":[[lower_us, count], ...]} (power-of-two bins from the threshold).
#include "common/system/Affinity.h"

#include <CLI/CLI.hpp>

#include <sched.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

int main(int argc, char **argv) {
  CLI::App app{"efu-bench-stalls: the gaps a busy pinned thread sees in the steady clock (time it "
               "did not run); one JSON line on stdout"};
  int cpu = 0;
  double seconds = 10;
  uint64_t thresholdUs = 10;
  app.add_option("--cpu", cpu, "CPU to pin the thread to (-1 = not pinned)")
      ->capture_default_str()
      ->check(CLI::Range(-1, CPU_SETSIZE - 1));
  app.add_option("--seconds", seconds, "How long to watch")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 3600.0));
  app.add_option("--threshold-us", thresholdUs, "Shortest gap counted as a stall, µs")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  CLI11_PARSE(app, argc, argv);

  if (const std::string problem = efu::pinCurrentThread(cpu); !problem.empty()) {
    std::fprintf(stderr, "efu-bench-stalls: %s\n", problem.c_str());
    return 1;
  }

  using Clock = std::chrono::steady_clock;
  const auto thresholdNs = static_cast<int64_t>(thresholdUs) * 1000;
  constexpr size_t kBins = 24; // threshold x 2^23: beyond any plausible stall
  std::array<uint64_t, kBins> histogram{};
  uint64_t stalls = 0;
  int64_t stalledNs = 0;
  int64_t maxNs = 0;
  const auto start = Clock::now();
  const auto end = start + std::chrono::nanoseconds(static_cast<int64_t>(seconds * 1e9));
  auto last = start;
  while (last < end) {
    const auto now = Clock::now();
    const int64_t gapNs = std::chrono::duration_cast<std::chrono::nanoseconds>(now - last).count();
    if (gapNs >= thresholdNs) {
      ++stalls;
      stalledNs += gapNs;
      maxNs = gapNs > maxNs ? gapNs : maxNs;
      size_t bin = 0;
      while (bin + 1 < kBins && gapNs >= (thresholdNs << (bin + 1))) {
        ++bin;
      }
      ++histogram[bin];
    }
    last = now;
  }

  std::string bins;
  for (size_t bin = 0; bin < kBins; ++bin) {
    if (histogram[bin] != 0) {
      bins += (bins.empty() ? "[" : ",[") + std::to_string(thresholdUs << bin) + "," +
              std::to_string(histogram[bin]) + "]";
    }
  }
  std::printf("{\"cpu\":%d,\"seconds\":%g,\"threshold_us\":%llu,\"stalls\":%llu,"
              "\"stalled_us\":%.1f,\"max_us\":%.1f,\"histogram\":[%s]}\n",
              cpu, seconds, static_cast<unsigned long long>(thresholdUs),
              static_cast<unsigned long long>(stalls), static_cast<double>(stalledNs) / 1e3,
              static_cast<double>(maxNs) / 1e3, bins.c_str());
  return 0;
}
