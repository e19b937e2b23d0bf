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
const RuntimeConfig &checked(const RuntimeConfig &config, size_t queues, size_t partitions) {
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
  if (partitions == 0 || partitions > kMaxPartitions) {
    throw std::invalid_argument("processing threads must be 1.." + std::to_string(kMaxPartitions));
  }
  if (config.threading == Threading::RunToCompletion && partitions != 1) {
    throw std::invalid_argument(std::to_string(partitions) +
                                " processing threads need the hand-off to threads (--threads 2 "
                                "or auto), not run to completion (--threads 1)");
  }
  if (config.procCpus.size() != 1 && config.procCpus.size() != partitions) {
    throw std::invalid_argument("--proc-cpu lists " + std::to_string(config.procCpus.size()) +
                                " CPUs for " + std::to_string(partitions) +
                                " processing threads: give one CPU for all threads or one per "
                                "thread");
  }
  return config;
}

struct AlignedDelete {
  void operator()(uint8_t *p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
};
} // namespace

/// One rx queue: a socket, its ring and the buffers behind the ring's slots.
struct Runtime::Queue {
  Queue(unsigned queueIndex, UdpReceiver &socket, size_t slots, uint32_t slotBytes, unsigned batch,
        size_t readers)
      : index(queueIndex), receiver(socket), ring(slots, readers),
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

/// One processing thread: a partition of the module, its hooks and its place in every ring.
struct Runtime::Worker {
  Worker(unsigned partition, const Partition &p, Counter &idleCounter)
      : index(partition), module(*p.module), hooks(p.hooks), idle(idleCounter) {}

  const unsigned index; ///< the partition, and this thread's reader index in every ring
  sdk::Module &module;
  ProcessingHooks *hooks;
  Counter &idle; ///< thread.processing_idle (a part of it for partitions above 0)
  Doorbell doorbell;
  int64_t nextTickNs = 0;
  int64_t processed = 0;             ///< datagrams, written by this thread
  std::atomic<int64_t> progress{0};  ///< `processed` published for partition 0 (release)
  std::atomic<bool> done{false};     ///< flushed and finished (partitions above 0)
  std::atomic<pid_t> tid{0};
  std::thread thread;
};

void validateRuntimeConfig(const RuntimeConfig &config, size_t queues, size_t partitions) {
  (void)checked(config, queues, partitions);
}

Runtime::Runtime(const RuntimeConfig &config, std::vector<UdpReceiver *> receivers,
                 std::vector<Partition> partitions, Stats &stats, spdlog::logger &log)
    : config_(checked(config, receivers.size(), partitions.size())), log_(log),
      sampler_(partitions.front().hooks != nullptr ? partitions.front().hooks->sampler()
                                                   : nullptr),
      rxPackets_(stats.add("receive.packets")), rxBytes_(stats.add("receive.bytes")),
      rxTruncated_(stats.add("receive.truncated")), rxErrors_(stats.add("receive.errors")),
      rxKernelDrops_(stats.add("receive.dropped")), rxUnread_(stats.add("receive.unread")),
      rxRingFullWaits_(stats.add("receive.ring_full_waits")),
      rxMessages_(stats.add("receive.messages")), procPackets_(stats.add("processing.packets")) {
  for (unsigned p = 0; p < partitions.size(); ++p) {
    Counter &idle = p == 0 ? stats.add("thread.processing_idle")
                           : stats.addPart("thread.processing_idle");
    workers_.push_back(std::make_unique<Worker>(p, partitions[p], idle));
  }
  // Run to completion empties the ring after every batch: one batch of slots stays in cache.
  const size_t slots = config.threading == Threading::RunToCompletion
                           ? std::max<size_t>(2, std::bit_ceil(size_t{config.rxBatch}))
                           : config.ringSlots;
  config_.ringSlots = slots;
  for (unsigned i = 0; i < receivers.size(); ++i) {
    auto queue = std::make_unique<Queue>(i, *receivers[i], slots, config.slotBytes, config.rxBatch,
                                         workers_.size());
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

pid_t Runtime::procTid(size_t partition) const noexcept {
  return partition < workers_.size() ? workers_[partition]->tid.load(std::memory_order_relaxed)
                                     : 0;
}

void Runtime::start() {
  stopRx_ = false;
  rxRunning_ = static_cast<unsigned>(queues_.size());
  for (auto &queue : queues_) {
    queue->done = false;
  }
  for (auto &worker : workers_) {
    worker->done = false;
  }
  if (config_.threading == Threading::HandOff) {
    for (auto &worker : workers_) {
      Worker &w = *worker;
      w.thread = std::thread([this, &w] { processingLoop(w); });
    }
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
  for (auto &worker : workers_) {
    if (worker->thread.joinable()) {
      worker->thread.join();
    }
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

size_t Runtime::process(Queue &q, Worker &w, size_t max) noexcept {
  const size_t n = q.ring.available(max, w.index);
  kafka::RawSampler *sampler = w.index == 0 ? sampler_ : nullptr;
  int64_t datagrams = 0;
  for (size_t i = 0; i < n; ++i) {
    const RxSlot &slot = q.ring.consumerSlot(i, w.index);
    // A GRO message holds datagrams of segmentBytes back to back, the last one possibly
    // shorter; any other slot is one datagram (possibly empty).
    const uint32_t step =
        slot.segmentBytes != 0 ? slot.segmentBytes : std::max<uint32_t>(slot.size, 1);
    uint32_t offset = 0;
    do {
      const uint32_t size = std::min(step, slot.size - offset);
      if (sampler != nullptr) {
        sampler->offer({slot.data + offset, size});
      }
      w.module.process(sdk::Packet{slot.data + offset, size, q.index, slot.rxTimeNs,
                                  slot.sourceIp, slot.sourcePort});
      ++datagrams;
      offset += step;
    } while (offset < slot.size);
  }
  if (n > 0) {
    q.ring.release(n, w.index);
    countProcessed(w, datagrams);
  }
  return n;
}

void Runtime::countProcessed(Worker &w, int64_t datagrams) noexcept {
  if (workers_.size() == 1) {
    procPackets_.add(datagrams); // after process(): counters are final once this shows them
    return;
  }
  w.processed += datagrams;
  w.progress.store(w.processed, std::memory_order_release);
  if (w.index == 0) {
    publishProgress();
  }
}

// The slowest partition's count: a reader that sees it sees every partition's counters for
// those datagrams (each partition's release store, partition 0's acquire loads, its release
// store of processing.packets).
void Runtime::publishProgress() noexcept {
  int64_t all = workers_.front()->progress.load(std::memory_order_acquire);
  for (size_t p = 1; p < workers_.size(); ++p) {
    all = std::min(all, workers_[p]->progress.load(std::memory_order_acquire));
  }
  if (all != procPackets_.value.load(std::memory_order_relaxed)) {
    procPackets_.set(all);
  }
}

void Runtime::ringAll() noexcept {
  for (auto &worker : workers_) {
    worker->doorbell.ring();
  }
}

bool Runtime::anyAvailable(const Worker &w) const noexcept {
  return std::any_of(queues_.begin(), queues_.end(),
                     [&w](const auto &q) { return q->ring.available(1, w.index) > 0; });
}

void Runtime::waitForFreeSlot(Queue &q) noexcept {
  // Not reading is what keeps the datagrams: the socket buffer holds them meanwhile, and only
  // its overflow is a loss (counted by the kernel, receive.dropped).
  rxRingFullWaits_.addShared(1);
  ringAll(); // in case a processing thread is about to sleep
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
      while (process(q, *workers_.front(), kProcessBatch) > 0) {
      }
      tickIfDue(*workers_.front(), realtimeNs());
    } else if (received > 0) {
      ringAll();
    }
  }
  accountSocketAtStop(q);
  q.done.store(true, std::memory_order_release);
  rxRunning_.fetch_sub(1, std::memory_order_acq_rel);
  if (runToCompletion) {
    finish(*workers_.front());
  } else {
    ringAll(); // the processing threads drain and end
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

void Runtime::tickIfDue(Worker &w, int64_t nowNs) noexcept {
  if (nowNs < w.nextTickNs) {
    return;
  }
  w.module.tick(nowNs);
  if (w.hooks != nullptr) {
    w.hooks->tick(nowNs);
  }
  if (w.index == 0 && workers_.size() > 1) {
    publishProgress();
  }
  w.nextTickNs = nowNs + kTickNs;
}

// Partitions above 0 flush and finish first (their last messages go into their forwarding
// rings); partition 0 keeps ticking its hooks meanwhile, which forwards those messages to the
// producer, and finishes last: its hooks publish the final counters and flush the producer.
void Runtime::finish(Worker &w) noexcept {
  w.module.flush();
  w.nextTickNs = 0;
  if (w.index != 0) {
    tickIfDue(w, realtimeNs());
    if (w.hooks != nullptr) {
      w.hooks->finish();
    }
    w.done.store(true, std::memory_order_release);
    workers_.front()->doorbell.ring();
    return;
  }
  auto othersDone = [this] {
    return std::all_of(workers_.begin() + 1, workers_.end(),
                       [](const auto &other) { return other->done.load(std::memory_order_acquire); });
  };
  while (!othersDone()) {
    const uint32_t ticket = w.doorbell.prepareWait();
    if (othersDone()) {
      w.doorbell.cancelWait();
      break;
    }
    if (w.hooks != nullptr) {
      w.hooks->tick(realtimeNs()); // forwards what the others have sent so far
    }
    w.doorbell.wait(ticket, kNsPerMs);
  }
  if (workers_.size() > 1) {
    publishProgress();
  }
  tickIfDue(w, realtimeNs());
  if (w.hooks != nullptr) {
    w.hooks->finish();
  }
}

void Runtime::processingLoop(Worker &w) noexcept {
  const std::string name =
      workers_.size() > 1 ? "efu-proc" + std::to_string(w.index) : std::string("efu-proc");
  nameCurrentThread(name.c_str());
  w.tid.store(gettid(), std::memory_order_relaxed);
  const int cpu = config_.procCpus.size() == 1 ? config_.procCpus[0] : config_.procCpus[w.index];
  if (const auto problem = pinCurrentThread(cpu); !problem.empty()) {
    log_.warn("{} thread: {}; running unpinned", name, problem);
  }
  int idleSpins = 0;
  for (;;) {
    size_t processed = 0;
    for (auto &queue : queues_) {
      processed += process(*queue, w, kProcessBatch);
    }
    int64_t nowNs = realtimeNs();
    if (processed > 0) {
      idleSpins = 0;
    } else if (rxRunning_.load(std::memory_order_acquire) == 0) {
      if (!anyAvailable(w)) {
        break; // every rx thread has stopped and everything it committed has been processed
      }
    } else if (++idleSpins > kSpinsBeforeSleep) {
      const uint32_t ticket = w.doorbell.prepareWait();
      if (anyAvailable(w) || rxRunning_.load(std::memory_order_acquire) == 0) {
        w.doorbell.cancelWait();
      } else {
        w.idle.add();
        w.doorbell.wait(ticket, std::max<int64_t>(w.nextTickNs - nowNs, 1000));
        nowNs = realtimeNs();
      }
      idleSpins = 0;
    }
    tickIfDue(w, nowNs);
  }
  finish(w);
}

} // namespace efu
