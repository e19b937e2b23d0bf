// SPDX-License-Identifier: BSD-2-Clause
// The data path: the rx loop and the processing loop.
#include "efu/Runtime.h"

#include "common/system/Affinity.h"
#include "common/time/Time.h"

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

namespace efu {
namespace {
constexpr int64_t kTickNs = 10 * kNsPerMs;
constexpr unsigned kMaxBatch = 1024;
constexpr int kSpinsBeforeSleep = 256;
// Idle naps grow from 20 µs to 1 ms while nothing arrives: a few hundred wake-ups per second
// when idle, and a burst after a pause waits at most 1 ms (the ring holds 7 ms of 20 Gb/s).
constexpr int64_t kFirstIdleSleepNs = 20 * kNsPerUs;
constexpr int64_t kMaxIdleSleepNs = 1000 * kNsPerUs;
} // namespace

Runtime::Runtime(const RuntimeConfig &config, UdpReceiver &receiver, sdk::Module &module,
                 Stats &stats, spdlog::logger &log, ProcessingHooks *hooks)
    : config_(config), receiver_(receiver), module_(module), log_(log), hooks_(hooks),
      ring_(config.ringSlots), scratch_(std::make_unique<RxSlot[]>(config.rxBatch)),
      rxPackets_(stats.add("rx.packets")), rxBytes_(stats.add("rx.bytes")),
      rxDroppedRingFull_(stats.add("rx.dropped.ring_full")),
      rxTruncated_(stats.add("rx.dropped.truncated")), rxErrors_(stats.add("rx.errors")),
      rxKernelDrops_(stats.add("rx.dropped.kernel")), procPackets_(stats.add("proc.packets")),
      procIdle_(stats.add("proc.idle_sleeps")) {
  if (config.rxBatch == 0 || config.rxBatch > kMaxBatch) {
    throw std::invalid_argument("rx batch must be 1.." + std::to_string(kMaxBatch));
  }
}

Runtime::~Runtime() { stop(); }

void Runtime::start() {
  stopRx_ = false;
  rxDone_ = false;
  procThread_ = std::thread([this] { processingLoop(); });
  rxThread_ = std::thread([this] { rxLoop(); });
}

void Runtime::stop() {
  stopRx_.store(true, std::memory_order_relaxed);
  if (rxThread_.joinable()) {
    rxThread_.join();
  }
  if (procThread_.joinable()) {
    procThread_.join();
  }
}

void Runtime::rxLoop() noexcept {
  nameCurrentThread("efu-rx");
  rxTid_.store(gettid(), std::memory_order_relaxed);
  if (const auto problem = pinCurrentThread(config_.rxCpu); !problem.empty()) {
    log_.warn("rx thread: {}; running unpinned", problem);
  }
  const unsigned batch = config_.rxBatch;
  std::vector<uint8_t *> buffers(batch);
  std::vector<uint32_t> sizes(batch);
  std::unique_ptr<bool[]> truncated(new bool[batch]);

  while (!stopRx_.load(std::memory_order_relaxed)) {
    const size_t free = ring_.reserve(batch);
    // A full ring never blocks the socket: read into scratch and count the loss.
    const bool toRing = free > 0;
    const unsigned count = toRing ? static_cast<unsigned>(free) : batch;
    for (unsigned i = 0; i < count; ++i) {
      buffers[i] = toRing ? ring_.producerSlot(i).data.data() : scratch_[i].data.data();
    }
    const auto result = receiver_.receive(buffers.data(), count, kSlotBytes, sizes.data(),
                                          truncated.get());
    if (result.received <= 0) {
      if (result.received < 0) {
        rxErrors_.add();
      }
      continue;
    }
    rxKernelDrops_.set(result.kernelDrops); // cumulative since the socket was created
    const auto received = static_cast<unsigned>(result.received);
    int64_t bytes = 0;
    for (unsigned i = 0; i < received; ++i) {
      bytes += sizes[i];
    }
    rxPackets_.add(received);
    rxBytes_.add(bytes);
    if (!toRing) {
      rxDroppedRingFull_.add(received);
      continue;
    }
    // Truncated datagrams are dropped here; the rest are compacted to the front of the batch.
    const int64_t nowNs = realtimeNs();
    unsigned kept = 0;
    for (unsigned i = 0; i < received; ++i) {
      if (truncated[i]) {
        rxTruncated_.add();
        continue;
      }
      RxSlot &slot = ring_.producerSlot(kept);
      if (kept != i) {
        std::swap(slot.data, ring_.producerSlot(i).data); // rare: only after a truncation
      }
      slot.size = sizes[i];
      slot.rxTimeNs = nowNs;
      ++kept;
    }
    ring_.commit(kept);
  }
  rxDone_.store(true, std::memory_order_release);
}

void Runtime::tick(int64_t nowNs) noexcept {
  module_.tick(nowNs);
  if (hooks_ != nullptr) {
    hooks_->tick(nowNs);
  }
}

void Runtime::processingLoop() noexcept {
  nameCurrentThread("efu-proc");
  procTid_.store(gettid(), std::memory_order_relaxed);
  if (const auto problem = pinCurrentThread(config_.procCpu); !problem.empty()) {
    log_.warn("processing thread: {}; running unpinned", problem);
  }
  prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0); // short idle sleeps must stay short
  constexpr size_t kProcessBatch = 64;
  int64_t nextTickNs = 0;
  int idleSpins = 0;
  int64_t idleSleepNs = kFirstIdleSleepNs;
  for (;;) {
    const size_t n = ring_.available(kProcessBatch);
    if (n > 0) {
      for (size_t i = 0; i < n; ++i) {
        const RxSlot &slot = ring_.consumerSlot(i);
        module_.process(sdk::Packet{slot.data.data(), slot.size, slot.rxTimeNs});
      }
      ring_.release(n);
      procPackets_.add(static_cast<int64_t>(n));
      idleSpins = 0;
      idleSleepNs = kFirstIdleSleepNs;
    } else if (rxDone_.load(std::memory_order_acquire)) {
      if (ring_.available(1) == 0) {
        break; // rx has stopped and everything it committed has been processed
      }
      continue;
    } else if (++idleSpins > kSpinsBeforeSleep) {
      procIdle_.add();
      sleepUntilMonotonicNs(monotonicNs() + idleSleepNs);
      idleSleepNs = std::min(2 * idleSleepNs, kMaxIdleSleepNs);
    }
    const int64_t nowNs = realtimeNs();
    if (nowNs >= nextTickNs) {
      tick(nowNs);
      nextTickNs = nowNs + kTickNs;
    }
  }
  module_.flush();
  tick(realtimeNs());
  if (hooks_ != nullptr) {
    hooks_->finish();
  }
}

} // namespace efu
