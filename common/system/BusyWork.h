// SPDX-License-Identifier: BSD-2-Clause
// A fixed amount of CPU work that stands in for a detector module's cost per datagram
// (`efu -d udp` with `work_ns`, `efu-bench-bare-rx --work-ns`): with it, efu's receive path and a
// bare recvmmsg loop can be loaded exactly like a module of that cost, so that what the machine
// loses at a given cost (its own stalls, the socket buffer) is told apart from what efu loses.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace efu {

/// A chain of dependent multiply-adds, sized once against the steady clock. A fixed number of
/// steps and not "spin until the clock says N ns": a thread stalled in the middle (preempted,
/// the hypervisor's steal) must come back to the rest of its work, as a real module would,
/// instead of finding its time already spent.
class BusyWork {
public:
  /// Steps for `ns` nanoseconds on this core, measured now (about 10 ms when ns > 0).
  explicit BusyWork(uint64_t ns) : ns_(ns) {
    if (ns == 0) {
      return;
    }
    constexpr uint64_t kProbeSteps = 1 << 20;
    // The fastest of several probes: a probe that was interrupted only looks slower.
    int64_t bestNs = INT64_MAX;
    for (int probe = 0; probe < 7; ++probe) {
      const auto start = std::chrono::steady_clock::now();
      sink_ += steps(kProbeSteps, sink_);
      const auto elapsed = std::chrono::steady_clock::now() - start;
      bestNs = std::min<int64_t>(
          bestNs, std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
    }
    bestNs = std::max<int64_t>(bestNs, 1);
    steps_ = std::max<uint64_t>(
        1, static_cast<uint64_t>(static_cast<double>(ns) * static_cast<double>(kProbeSteps) /
                                 static_cast<double>(bestNs)));
  }

  /// Does the work; the result depends on every step, so the compiler cannot drop it.
  uint64_t run(uint64_t seed) noexcept {
    sink_ += steps(steps_, seed);
    return sink_;
  }

  [[nodiscard]] uint64_t ns() const noexcept { return ns_; }
  /// Steps per run (0 when ns was 0).
  [[nodiscard]] uint64_t stepCount() const noexcept { return steps_; }

private:
  static uint64_t steps(uint64_t count, uint64_t x) noexcept {
    for (uint64_t i = 0; i < count; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL; // wraps: unsigned, defined
#if defined(__GNUC__)
      __asm__ volatile("" : "+r"(x)); // one step per iteration: no vectorising or unrolling away
#endif
    }
    return x;
  }

  uint64_t ns_ = 0;
  uint64_t steps_ = 0;
  uint64_t sink_ = 0;
};

} // namespace efu
