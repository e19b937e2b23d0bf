// SPDX-License-Identifier: BSD-2-Clause
// The data path: the rx loop and the processing loop (docs/architecture.md, "Processes and threads").
#include "efu/Runtime.h"

#include "common/system/Affinity.h"
#include "common/time/Time.h"

#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <new>
#include <string>

namespace efu {
namespace {
constexpr int64_t kTickNs = 10 * kNsPerMs;
constexpr unsigned kMaxBatch = 1024;
constexpr size_t kProcessBatch = 64;
/// Empty polls of the rings before the processing thread sleeps on the doorbell: a burst
/// that follows within a few microseconds finds it awake.
constexpr int kSpinsBeforeSleep = 64;
/// A full ring: yield this often (lets a processing thread on the same core run), then nap.
constexpr int kYieldsBeforeNap = 16;
constexpr int64_t kFullRingNapNs = 20 * kNsPerUs;

/// Throws std::invalid_argument for what the runtime cannot run (before anything is registered).
const RuntimeConfig &checked(const RuntimeConfig &config, size_t queues) {
  if (config.rxBatch == 0 || config.rxBatch > kMaxBatch) {
    throw std::invalid_argument("rx batch must be 1.." + std::to_string(kMaxBatch));
  }
  if (queues == 0 || queues > kMaxRxQueues) {
    throw std::invalid_argument("rx queues must be 1.." + std::to_string(kMaxRxQueues));
  }
  if (config.rxCpus.size() != 1 && config.rxCpus.size() != queues) {
    throw std::invalid_argument("--rx-cpu lists " + std::to_string(config.rxCpus.size()) +
                                " CPUs for " + std::to_string(queues) +
                                " rx queues: give one CPU for all queues or one per queue");
  }
  if (config.threading == Threading::RunToCompletion && queues != 1) {
    throw std::invalid_argument("run to completion (--threads 1) needs a single rx queue");
  }
  return config;
}

struct AlignedDelete {
  void operator()(uint8_t *p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
};
} // namespace

/// One rx queue: a socket, its ring and the buffers behind the ring's slots.
struct Runtime::Queue {
  Queue(unsigned queueIndex, UdpReceiver &socket, size_t slots, uint32_t slotBytes, unsigned batch)
      : index(queueIndex), receiver(socket), ring(slots),
        buffers(new (std::align_val_t{64}) uint8_t[slots * slotBytes]), messageBuffers(batch),
        messages(batch) {
    for (size_t i = 0; i < slots; ++i) {
      ring.producerSlot(i).data = buffers.get() + i * slotBytes;
    }
  }

  const unsigned index;
  UdpReceiver &receiver;
  SpscRing<RxSlot> ring;
  std::unique_ptr<uint8_t[], AlignedDelete> buffers;
  // rx thread scratch for one recvmmsg call
  std::vector<uint8_t *> messageBuffers;
  std::vector<UdpReceiver::Message> messages;
  uint32_t kernelDropsSeen = 0; ///< the socket's cumulative SO_RXQ_OVFL count already added
  // Per-queue counters (only with several queues), written by this queue's rx thread.
  Counter *packets = nullptr;
  Counter *bytes = nullptr;
  Counter *kernelDrops = nullptr;
  std::atomic<pid_t> tid{0};
  std::atomic<bool> done{false};
  std::thread thread;
};

void validateRuntimeConfig(const RuntimeConfig &config, size_t queues) {
  (void)checked(config, queues);
}

Runtime::Runtime(const RuntimeConfig &config, std::vector<UdpReceiver *> receivers,
                 sdk::Module &module, Stats &stats, spdlog::logger &log, ProcessingHooks *hooks)
    : config_(checked(config, receivers.size())), module_(module), log_(log), hooks_(hooks),
      sampler_(hooks != nullptr ? hooks->sampler() : nullptr),
      rxPackets_(stats.add("receive.packets")), rxBytes_(stats.add("receive.bytes")),
      rxTruncated_(stats.add("receive.truncated")), rxErrors_(stats.add("receive.errors")),
      rxKernelDrops_(stats.add("receive.dropped")), rxUnread_(stats.add("receive.unread")),
      rxRingFullWaits_(stats.add("receive.ring_full_waits")),
      rxMessages_(stats.add("receive.messages")), procPackets_(stats.add("processing.packets")),
      procIdle_(stats.add("thread.processing_idle")) {
  // Run to completion empties the ring after every batch: one batch of slots stays in cache.
  const size_t slots = config.threading == Threading::RunToCompletion
                           ? std::max<size_t>(2, std::bit_ceil(size_t{config.rxBatch}))
                           : config.ringSlots;
  config_.ringSlots = slots;
  for (unsigned i = 0; i < receivers.size(); ++i) {
    auto queue = std::make_unique<Queue>(i, *receivers[i], slots, config.slotBytes, config.rxBatch);
    if (receivers.size() > 1) {
      const std::string prefix = "receive.q" + std::to_string(i) + ".";
      queue->packets = &stats.add(prefix + "packets");
      queue->bytes = &stats.add(prefix + "bytes");
      queue->kernelDrops = &stats.add(prefix + "dropped");
    }
    queues_.push_back(std::move(queue));
  }
}

Runtime::~Runtime() { stop(); }

pid_t Runtime::rxTid(size_t queue) const noexcept {
  return queue < queues_.size() ? queues_[queue]->tid.load(std::memory_order_relaxed) : 0;
}

void Runtime::start() {
  stopRx_ = false;
  rxRunning_ = static_cast<unsigned>(queues_.size());
  for (auto &queue : queues_) {
    queue->done = false;
  }
  if (config_.threading == Threading::HandOff) {
    procThread_ = std::thread([this] { processingLoop(); });
  }
  for (auto &queue : queues_) {
    Queue &q = *queue;
    q.thread = std::thread([this, &q] { rxLoop(q); });
  }
}

void Runtime::stop() {
  stopRx_.store(true, std::memory_order_relaxed);
  for (auto &queue : queues_) {
    if (queue->thread.joinable()) {
      queue->thread.join();
    }
  }
  if (procThread_.joinable()) {
    procThread_.join();
  }
}

void Runtime::startThread(Queue &queue) noexcept {
  const std::string name = queues_.size() > 1 ? "efu-rx" + std::to_string(queue.index) : "efu-rx";
  nameCurrentThread(name.c_str());
  queue.tid.store(gettid(), std::memory_order_relaxed);
  const int cpu = config_.rxCpus.size() == 1 ? config_.rxCpus[0] : config_.rxCpus[queue.index];
  if (const auto problem = pinCurrentThread(cpu); !problem.empty()) {
    log_.warn("{} thread: {}; running unpinned", name, problem);
  }
  if (const auto problem = setCurrentThreadFifoPriority(config_.rxPriority); !problem.empty()) {
    log_.warn("{} thread: {}; running at normal priority", name, problem);
  }
}

size_t Runtime::receive(Queue &q, size_t freeSlots) noexcept {
  const auto count = static_cast<unsigned>(std::min<size_t>(freeSlots, config_.rxBatch));
  for (unsigned i = 0; i < count; ++i) {
    q.messageBuffers[i] = q.ring.producerSlot(i).data;
  }
  const auto result =
      q.receiver.receive(q.messageBuffers.data(), count, config_.slotBytes, q.messages.data());
  if (result.received <= 0) {
    if (result.received < 0) {
      rxErrors_.addShared(1);
    }
    return 0;
  }
  const auto messages = static_cast<unsigned>(result.received);
  const int64_t nowNs = realtimeNs();
  int64_t datagrams = 0;
  int64_t bytes = 0;
  int64_t truncated = 0;
  size_t kept = 0;
  for (unsigned i = 0; i < messages; ++i) {
    const UdpReceiver::Message &m = q.messages[i];
    const MessageSplit split = splitMessage(m.size, m.segmentBytes, m.truncated);
    datagrams += split.datagrams + split.truncated;
    bytes += m.size;
    truncated += split.truncated;
    if (split.datagrams == 0) {
      continue;
    }
    RxSlot &slot = q.ring.producerSlot(kept);
    if (kept != i) {
      std::swap(slot.data, q.ring.producerSlot(i).data); // only after a lost message: no copy
    }
    slot.size = split.bytes;
    slot.segmentBytes = split.datagrams > 1 ? m.segmentBytes : 0;
    slot.rxTimeNs = m.rxTimeNs != 0 ? m.rxTimeNs : nowNs;
    slot.sourceIp = m.sourceIp;
    slot.sourcePort = m.sourcePort;
    ++kept;
  }
  q.ring.commit(kept);

  // The socket's drop count is cumulative; add what is new since the last batch.
  const uint32_t newDrops = result.kernelDrops - q.kernelDropsSeen;
  q.kernelDropsSeen = result.kernelDrops;
  rxPackets_.addShared(datagrams);
  rxBytes_.addShared(bytes);
  rxMessages_.addShared(messages);
  if (truncated > 0) {
    rxTruncated_.addShared(truncated);
  }
  if (newDrops > 0) {
    rxKernelDrops_.addShared(newDrops);
  }
  if (q.packets != nullptr) {
    q.packets->add(datagrams);
    q.bytes->add(bytes);
    q.kernelDrops->set(result.kernelDrops);
  }
  return kept;
}

size_t Runtime::process(Queue &q, size_t max) noexcept {
  const size_t n = q.ring.available(max);
  int64_t datagrams = 0;
  for (size_t i = 0; i < n; ++i) {
    const RxSlot &slot = q.ring.consumerSlot(i);
    // A GRO message holds datagrams of segmentBytes back to back, the last one possibly
    // shorter; any other slot is one datagram (possibly empty).
    const uint32_t step =
        slot.segmentBytes != 0 ? slot.segmentBytes : std::max<uint32_t>(slot.size, 1);
    uint32_t offset = 0;
    do {
      const uint32_t size = std::min(step, slot.size - offset);
      if (sampler_ != nullptr) {
        sampler_->offer({slot.data + offset, size});
      }
      module_.process(sdk::Packet{slot.data + offset, size, q.index, slot.rxTimeNs,
                                  slot.sourceIp, slot.sourcePort});
      ++datagrams;
      offset += step;
    } while (offset < slot.size);
  }
  if (n > 0) {
    q.ring.release(n);
    procPackets_.add(datagrams); // after process(): counters are final once this shows them
  }
  return n;
}

void Runtime::waitForFreeSlot(Queue &q) noexcept {
  // Not reading is what keeps the datagrams: the socket buffer holds them meanwhile, and only
  // its overflow is a loss (counted by the kernel, receive.dropped).
  rxRingFullWaits_.addShared(1);
  doorbell_.ring(); // in case the processing thread is about to sleep
  for (int round = 0; q.ring.reserve(1) == 0 && !stopRx_.load(std::memory_order_relaxed);
       ++round) {
    if (round < kYieldsBeforeNap) {
      sched_yield();
    } else {
      sleepUntilMonotonicNs(monotonicNs() + kFullRingNapNs, stopRx_);
    }
  }
}

void Runtime::rxLoop(Queue &q) noexcept {
  startThread(q);
  const bool runToCompletion = config_.threading == Threading::RunToCompletion;
  while (!stopRx_.load(std::memory_order_relaxed)) {
    const size_t free = q.ring.reserve(config_.rxBatch);
    if (free == 0) {
      waitForFreeSlot(q);
      continue;
    }
    const size_t received = receive(q, free);
    if (runToCompletion) {
      while (process(q, kProcessBatch) > 0) {
      }
      tickIfDue(realtimeNs());
    } else if (received > 0) {
      doorbell_.ring();
    }
  }
  accountSocketAtStop(q);
  q.done.store(true, std::memory_order_release);
  rxRunning_.fetch_sub(1, std::memory_order_acq_rel);
  if (runToCompletion) {
    finish();
  } else {
    doorbell_.ring(); // the processing thread drains and ends
  }
}

// What the socket still holds when receiving stops, and its drops since the last datagram read,
// are losses too: counted, so that receive.packets + receive.dropped + receive.unread is every
// datagram that reached the socket (the final line adds up).
void Runtime::accountSocketAtStop(Queue &q) noexcept {
  const UdpReceiver::Leftover left = q.receiver.discardQueued();
  const uint32_t newDrops = left.kernelDrops - q.kernelDropsSeen;
  q.kernelDropsSeen = left.kernelDrops;
  if (left.datagrams > 0) {
    rxUnread_.addShared(static_cast<int64_t>(left.datagrams));
  }
  if (newDrops > 0) {
    rxKernelDrops_.addShared(newDrops);
  }
  if (q.kernelDrops != nullptr) {
    q.kernelDrops->set(left.kernelDrops);
  }
  if (left.datagrams > 0 || newDrops > 0) {
    log_.warn("rx queue {} at the stop: {} datagrams still in the socket buffer discarded "
              "(receive.unread), {} dropped by the kernel since the last one read "
              "(receive.dropped)",
              q.index, left.datagrams, newDrops);
  }
}

void Runtime::tickIfDue(int64_t nowNs) noexcept {
  if (nowNs < nextTickNs_) {
    return;
  }
  module_.tick(nowNs);
  if (hooks_ != nullptr) {
    hooks_->tick(nowNs);
  }
  nextTickNs_ = nowNs + kTickNs;
}

void Runtime::finish() noexcept {
  module_.flush();
  nextTickNs_ = 0;
  tickIfDue(realtimeNs());
  if (hooks_ != nullptr) {
    hooks_->finish();
  }
}

void Runtime::processingLoop() noexcept {
  nameCurrentThread("efu-proc");
  procTid_.store(gettid(), std::memory_order_relaxed);
  if (const auto problem = pinCurrentThread(config_.procCpu); !problem.empty()) {
    log_.warn("processing thread: {}; running unpinned", problem);
  }
  auto anyAvailable = [this] {
    return std::any_of(queues_.begin(), queues_.end(),
                       [](const auto &q) { return q->ring.available(1) > 0; });
  };
  int idleSpins = 0;
  for (;;) {
    size_t processed = 0;
    for (auto &queue : queues_) {
      processed += process(*queue, kProcessBatch);
    }
    int64_t nowNs = realtimeNs();
    if (processed > 0) {
      idleSpins = 0;
    } else if (rxRunning_.load(std::memory_order_acquire) == 0) {
      if (!anyAvailable()) {
        break; // every rx thread has stopped and everything it committed has been processed
      }
    } else if (++idleSpins > kSpinsBeforeSleep) {
      const uint32_t ticket = doorbell_.prepareWait();
      if (anyAvailable() || rxRunning_.load(std::memory_order_acquire) == 0) {
        doorbell_.cancelWait();
      } else {
        procIdle_.add();
        doorbell_.wait(ticket, std::max<int64_t>(nextTickNs_ - nowNs, 1000));
        nowNs = realtimeNs();
      }
      idleSpins = 0;
    }
    tickIfDue(nowNs);
  }
  finish();
}

} // namespace efu
