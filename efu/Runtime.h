// SPDX-License-Identifier: BSD-2-Clause
// The data path: rx threads fill ring slots with recvmmsg; the module runs on each datagram, either
// on the receiving thread itself (run to completion) or on a processing thread behind the ring.
#pragma once

#include "common/kafka/RawSampler.h"
#include "common/memory/Doorbell.h"
#include "common/memory/SpscRing.h"
#include "common/net/UdpReceiver.h"
#include "common/sdk/Module.h"
#include "common/stats/Stats.h"

#include <spdlog/logger.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include <sys/types.h>

namespace efu {

/// Slot buffer size without GRO: jumbo 9000-MTU payloads fit; larger ones count as truncated.
constexpr uint32_t kSlotBytes = 9216;
/// Slot buffer size with GRO: the largest message the kernel coalesces (64 KiB).
constexpr uint32_t kGroSlotBytes = 65536;
/// Most rx queues (SO_REUSEPORT sockets) one efu runs.
constexpr unsigned kMaxRxQueues = 16;

/// One ring slot: the kernel writes one message straight into `data` (the only copy). With GRO
/// the message holds several datagrams of segmentBytes each (the last may be shorter).
struct RxSlot {
  uint8_t *data = nullptr; ///< this slot's buffer (fixed at construction; swapped, never copied)
  uint32_t size = 0;       ///< bytes of whole datagrams in data
  uint32_t segmentBytes = 0; ///< GRO datagram size, 0 = one datagram
  int64_t rxTimeNs = 0;
  uint32_t sourceIp = 0;     ///< host byte order
  uint16_t sourcePort = 0;
};

/// Work that runs on the thread that runs the module besides it (Kafka output, stats).
class ProcessingHooks {
public:
  virtual ~ProcessingHooks() = default;
  /// At least every 10 ms, also when idle. nowNs is CLOCK_REALTIME.
  virtual void tick(int64_t nowNs) noexcept = 0;
  /// Once, after the ring is drained and the module flushed.
  virtual void finish() noexcept = 0;
  /// Offered every datagram, before the module, on the module's thread; nullptr = none.
  virtual kafka::RawSampler *sampler() noexcept { return nullptr; }
};

/// Who calls the module.
enum class Threading {
  /// The rx thread calls the module on each batch it received: no hand-off, no second thread.
  /// Used with one rx queue when the module would otherwise share the rx thread's core.
  RunToCompletion,
  /// rx thread(s) → ring(s) → one processing thread that sleeps on a doorbell when idle.
  HandOff,
};

struct RuntimeConfig {
  Threading threading = Threading::HandOff;
  size_t ringSlots = 256;        ///< per rx queue, power of two (hand-off; run to completion
                                 ///< uses the smallest power of two >= rxBatch)
  unsigned rxBatch = 64;         ///< most messages per recvmmsg
  uint32_t slotBytes = kSlotBytes; ///< kGroSlotBytes with GRO
  std::vector<int> rxCpus{-1};   ///< one CPU for every rx queue, or one per queue; -1 = unpinned
  std::vector<int> procCpus{-1}; ///< one CPU for every processing thread, or one per thread
  int rxPriority = 0;            ///< SCHED_FIFO priority of the rx threads; 0 = normal
};

/// Throws std::invalid_argument, saying what to change, for a configuration the runtime cannot
/// run with `queues` rx queues and `partitions` processing threads (the Runtime constructor
/// checks the same).
void validateRuntimeConfig(const RuntimeConfig &config, size_t queues, size_t partitions = 1);

/// Most processing threads (module partitions) one efu runs: --proc-threads.
constexpr unsigned kMaxPartitions = 16;

/// One processing thread's module partition and the work beside it.
struct Partition {
  sdk::Module *module = nullptr;
  ProcessingHooks *hooks = nullptr; ///< may be nullptr
};

/// Owns the data-path threads. Registers receive.*, processing.packets and thread.processing_idle
/// (a part per further partition) counters in `stats` (receive.q<i>.* per queue when there are several). Every datagram is counted in exactly one place: processed,
/// truncated, or dropped by the kernel when the socket buffer overflowed. A full ring is never
/// a loss: the rx thread stops reading until the processing thread frees a slot, and the
/// socket buffer holds what arrives meanwhile.
/// Thread rules: construct and start() on one thread. stop() may come from another thread once
/// start() has returned (Daemon::stop() stops from a helper thread while the main thread keeps
/// serving the control port), but not from two at once; a second stop() (the destructor's)
/// does nothing.
class Runtime {
public:
  /// One receiver per rx queue (all bound to the same port with SO_REUSEPORT when several).
  /// Throws std::invalid_argument for an unusable configuration.
  Runtime(const RuntimeConfig &config, std::vector<UdpReceiver *> receivers, sdk::Module &module,
          Stats &stats, spdlog::logger &log, ProcessingHooks *hooks)
      : Runtime(config, std::move(receivers), {Partition{&module, hooks}}, stats, log) {}
  /// Several partitions of the module (efu --proc-threads, docs/modules.md "Partitions"): one
  /// processing thread each, every one of them given every datagram of every ring in the same
  /// order (the rings have one reader per partition; a slot is reused once all have read it).
  /// Partition 0's hooks own the Kafka producer: its thread forwards the others' messages, and
  /// it finishes last. Partition 0's raw sampler sees every datagram. processing.packets counts
  /// the datagrams every partition has processed (the counters of all partitions are final
  /// for them). Several partitions need hand-off threading.
  Runtime(const RuntimeConfig &config, std::vector<UdpReceiver *> receivers,
          std::vector<Partition> partitions, Stats &stats, spdlog::logger &log);
  ~Runtime();
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  void start();
  /// Kernel thread id (gettid) of rx queue i's thread; 0 until it runs.
  [[nodiscard]] pid_t rxTid(size_t queue = 0) const noexcept;
  /// Kernel thread id of processing thread (partition) p; 0 until it runs and always 0 in run
  /// to completion (the rx thread does the processing).
  [[nodiscard]] pid_t procTid(size_t partition = 0) const noexcept;
  [[nodiscard]] size_t partitionCount() const noexcept { return workers_.size(); }
  [[nodiscard]] size_t queueCount() const noexcept { return queues_.size(); }
  [[nodiscard]] Threading threading() const noexcept { return config_.threading; }
  /// Stops receiving, processes what the rings hold, flushes, joins the threads.
  void stop();

private:
  struct Queue;
  struct Worker;

  void rxLoop(Queue &queue) noexcept;
  void processingLoop(Worker &worker) noexcept;
  void startThread(Queue &queue) noexcept;
  /// Receives into free ring slots and commits them; returns the slots committed.
  size_t receive(Queue &queue, size_t freeSlots) noexcept;
  void accountSocketAtStop(Queue &queue) noexcept;
  /// Runs worker's partition on up to `max` committed slots of one queue; returns the slots done.
  size_t process(Queue &queue, Worker &worker, size_t max) noexcept;
  /// Counts `datagrams` more processed by `worker` (processing.packets).
  void countProcessed(Worker &worker, int64_t datagrams) noexcept;
  /// Partition 0: processing.packets = the datagrams every partition has processed.
  void publishProgress() noexcept;
  /// Wakes every processing thread (after a commit, or when the ring is full).
  void ringAll() noexcept;
  [[nodiscard]] bool anyAvailable(const Worker &worker) const noexcept;
  void waitForFreeSlot(Queue &queue) noexcept;
  void tickIfDue(Worker &worker, int64_t nowNs) noexcept;
  void finish(Worker &worker) noexcept;

  RuntimeConfig config_;
  spdlog::logger &log_;
  kafka::RawSampler *sampler_; ///< partition 0's hooks' sampler(), fetched once
  std::vector<std::unique_ptr<Queue>> queues_;
  std::vector<std::unique_ptr<Worker>> workers_;

  // Totals over the queues; rx threads write them with addShared().
  Counter &rxPackets_;
  Counter &rxBytes_;
  Counter &rxTruncated_;
  Counter &rxErrors_;
  Counter &rxKernelDrops_;
  Counter &rxUnread_;
  Counter &rxRingFullWaits_;
  Counter &rxMessages_;
  // Written by the thread that runs partition 0 of the module.
  Counter &procPackets_;

  std::atomic<bool> stopRx_{false};
  std::atomic<unsigned> rxRunning_{0};
};

} // namespace efu
