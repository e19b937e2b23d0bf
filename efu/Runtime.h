// SPDX-License-Identifier: BSD-2-Clause
// The data path: a pinned rx thread fills ring slots with recvmmsg; a pinned processing thread
// hands each datagram to the module. The only rx loop and the only processing loop in efu.
#pragma once

#include "common/memory/SpscRing.h"
#include "common/net/UdpReceiver.h"
#include "common/sdk/Module.h"
#include "common/stats/Stats.h"

#include <spdlog/logger.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <thread>

#include <sys/types.h>

namespace efu {

/// Largest datagram a slot holds (jumbo 9000 MTU payloads fit); larger ones count rx.truncated.
constexpr uint32_t kSlotBytes = 9216;

/// One ring slot: the kernel writes the datagram straight into `data` (the only copy).
struct RxSlot {
  uint32_t size = 0;
  int64_t rxTimeNs = 0;
  alignas(64) std::array<uint8_t, kSlotBytes> data;
};

/// Work that runs on the processing thread besides the module (Kafka output, stats publishing).
class ProcessingHooks {
public:
  virtual ~ProcessingHooks() = default;
  /// At least every 10 ms, also when idle. nowNs is CLOCK_REALTIME.
  virtual void tick(int64_t nowNs) noexcept = 0;
  /// Once, after the ring is drained and the module flushed.
  virtual void finish() noexcept = 0;
};

struct RuntimeConfig {
  size_t ringSlots = 2048; ///< power of two
  unsigned rxBatch = 64;   ///< most datagrams per recvmmsg
  int rxCpu = -1;          ///< -1 = not pinned
  int procCpu = -1;
};

/// Owns the two data-path threads. Registers rx.* and proc.* counters in `stats`.
/// Thread rules: construct, start() and stop() from one (the main) thread.
class Runtime {
public:
  Runtime(const RuntimeConfig &config, UdpReceiver &receiver, sdk::Module &module, Stats &stats,
          spdlog::logger &log, ProcessingHooks *hooks);
  ~Runtime();
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  void start();
  /// Kernel thread ids (gettid) of the rx and processing threads; 0 until they run.
  [[nodiscard]] pid_t rxTid() const noexcept { return rxTid_.load(std::memory_order_relaxed); }
  [[nodiscard]] pid_t procTid() const noexcept { return procTid_.load(std::memory_order_relaxed); }
  /// Stops receiving, lets the processing thread drain the ring and flush, joins both threads.
  void stop();

private:
  void rxLoop() noexcept;
  void processingLoop() noexcept;
  void tick(int64_t nowNs) noexcept;

  RuntimeConfig config_;
  UdpReceiver &receiver_;
  sdk::Module &module_;
  spdlog::logger &log_;
  ProcessingHooks *hooks_;
  SpscRing<RxSlot> ring_;
  std::unique_ptr<RxSlot[]> scratch_; ///< where datagrams go when the ring is full

  Counter &rxPackets_;
  Counter &rxBytes_;
  Counter &rxDroppedRingFull_;
  Counter &rxTruncated_;
  Counter &rxErrors_;
  Counter &rxKernelDrops_;
  Counter &procPackets_;
  Counter &procIdle_;

  std::atomic<pid_t> rxTid_{0};
  std::atomic<pid_t> procTid_{0};
  std::atomic<bool> stopRx_{false};
  std::atomic<bool> rxDone_{false};
  std::thread rxThread_;
  std::thread procThread_;
};

} // namespace efu
