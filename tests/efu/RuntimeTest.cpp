// SPDX-License-Identifier: BSD-2-Clause
// The data path on loopback: ring-full back-pressure, run to completion, GRO, truncation, rx queues,
// and the stop hand-off (drain, flush, finish).
#include "efu/Runtime.h"

#include "common/time/Time.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace efu {
namespace {

/// Records what the runtime hands it. process() can be held (to fill the ring).
class RecordingModule final : public sdk::Module {
public:
  void process(const sdk::Packet &packet) noexcept override {
    while (hold.load()) {
      std::this_thread::yield();
    }
    Seen seen{packet.size, packet.queue, 0, gettid(), packet.sourceIp, packet.sourcePort};
    if (packet.size >= 4) {
      std::memcpy(&seen.first4, packet.data, 4);
    }
    const std::lock_guard lock(mutex);
    seen_.push_back(seen);
  }
  void tick(int64_t) noexcept override { ticks.fetch_add(1); }
  void flush() noexcept override {
    flushTid = gettid();
    seenAtFlush = seen().size();
    flushes.fetch_add(1);
  }

  struct Seen {
    uint32_t size;
    uint32_t queue;
    uint32_t first4;
    pid_t tid;
    uint32_t sourceIp;
    uint16_t sourcePort;
  };
  std::vector<Seen> seen() {
    const std::lock_guard lock(mutex);
    return seen_;
  }

  std::atomic<bool> hold{false};
  std::atomic<int> ticks{0};
  std::atomic<int> flushes{0};
  // Plain fields, written on the module's thread and read after stop(): the join must order them.
  pid_t flushTid = 0;
  size_t seenAtFlush = 0;

private:
  std::mutex mutex;
  std::vector<Seen> seen_;
};

/// Records where and when the runtime calls the hooks (plain fields, read after stop()).
class RecordingHooks final : public ProcessingHooks {
public:
  explicit RecordingHooks(const RecordingModule &module) : module_(module) {}
  void tick(int64_t) noexcept override { tickTid = gettid(); }
  void finish() noexcept override {
    finishTid = gettid();
    flushesAtFinish = module_.flushes.load();
    ++finishes;
  }

  pid_t tickTid = 0;
  pid_t finishTid = 0;
  int flushesAtFinish = -1;
  int finishes = 0;

private:
  const RecordingModule &module_;
};

/// True while the thread with kernel id `tid` runs in this process.
bool threadRuns(pid_t tid) {
  return access(("/proc/self/task/" + std::to_string(tid)).c_str(), F_OK) == 0;
}

/// A sender socket on loopback; datagram i starts with i (u32 LE), the rest filled.
class Sender {
public:
  Sender() : fd_(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {}
  ~Sender() { close(fd_); }
  Sender(const Sender &) = delete;
  Sender &operator=(const Sender &) = delete;

  void send(uint16_t port, uint32_t first4, size_t size) {
    std::vector<uint8_t> bytes(size, 0xab);
    std::memcpy(bytes.data(), &first4, std::min<size_t>(4, size));
    const sockaddr_in to = address(port);
    ASSERT_EQ(sendto(fd_, bytes.data(), size, 0, reinterpret_cast<const sockaddr *>(&to),
                     sizeof(to)),
              static_cast<ssize_t>(size))
        << std::strerror(errno);
  }

  /// One send call of `total` bytes that the kernel cuts into datagrams of `segment` bytes
  /// (UDP_SEGMENT); segment k starts with firstNumber + k.
  void sendSegmented(uint16_t port, uint32_t firstNumber, size_t total, uint16_t segment) {
    std::vector<uint8_t> bytes(total, 0xcd);
    for (size_t offset = 0, k = 0; offset < total; offset += segment, ++k) {
      const auto number = static_cast<uint32_t>(firstNumber + k);
      std::memcpy(bytes.data() + offset, &number, std::min<size_t>(4, total - offset));
    }
    sockaddr_in to = address(port);
    iovec iov{bytes.data(), total};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(uint16_t))] = {};
    msghdr msg{};
    msg.msg_name = &to;
    msg.msg_namelen = sizeof(to);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    std::memcpy(CMSG_DATA(c), &segment, sizeof(segment));
    ASSERT_EQ(sendmsg(fd_, &msg, 0), static_cast<ssize_t>(total)) << std::strerror(errno);
  }

private:
  static sockaddr_in address(uint16_t port) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return to;
  }
  int fd_;
};

bool eventually(const std::function<bool()> &condition) {
  const int64_t deadlineNs = monotonicNs() + 20 * kNsPerSec;
  while (!condition()) {
    if (monotonicNs() > deadlineNs) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

class RuntimeTest : public ::testing::Test {
protected:
  RuntimeTest() : log_("test", std::make_shared<spdlog::sinks::null_sink_mt>()) {}

  UdpReceiver &addReceiver(bool gro = false, bool reusePort = false, uint16_t port = 0,
                           int rcvbufBytes = 4 * 1024 * 1024) {
    UdpReceiver::Options options;
    options.address = "127.0.0.1";
    options.port = port;
    options.rcvbufBytes = rcvbufBytes;
    options.timeoutMs = 10;
    options.gro = gro;
    options.reusePort = reusePort;
    receivers_.push_back(std::make_unique<UdpReceiver>(options));
    return *receivers_.back();
  }

  std::vector<UdpReceiver *> queues() {
    std::vector<UdpReceiver *> queues;
    for (auto &r : receivers_) {
      queues.push_back(r.get());
    }
    return queues;
  }

  Runtime &start(RuntimeConfig config, ProcessingHooks *hooks = nullptr) {
    runtime_ = std::make_unique<Runtime>(config, queues(), module_, stats_, log_, hooks);
    runtime_->start();
    return *runtime_;
  }

  int64_t stat(const char *name) {
    const Counter *c = stats_.find(name);
    EXPECT_NE(c, nullptr) << name;
    return c != nullptr ? c->get() : -1;
  }

  bool waitProcessed(int64_t n) {
    return eventually([&] { return stat("processing.packets") >= n; }) && stat("processing.packets") == n;
  }

  Stats stats_;
  spdlog::logger log_;
  RecordingModule module_;
  std::vector<std::unique_ptr<UdpReceiver>> receivers_;
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(RuntimeTest, AFullRingHoldsBackReadingAndLosesNothing) {
  const uint16_t port = addReceiver().port();
  RuntimeConfig config;
  config.threading = Threading::HandOff;
  config.ringSlots = 4;
  config.rxBatch = 2;
  start(config);
  module_.hold = true; // processing stalls: 4 slots fill, the rest must wait in the socket
  constexpr uint32_t kCount = 500;
  Sender sender;
  for (uint32_t i = 0; i < kCount; ++i) {
    sender.send(port, i, 100);
  }
  ASSERT_TRUE(eventually([&] { return stat("receive.ring_full_waits") > 0; }));
  EXPECT_LE(stat("receive.packets"), 4 + 2); // the ring's slots and at most the module's batch
  module_.hold = false;
  ASSERT_TRUE(waitProcessed(kCount)) << stat("processing.packets");
  EXPECT_EQ(stat("receive.packets"), kCount);
  EXPECT_EQ(stat("receive.dropped"), 0);
  const auto seen = module_.seen();
  ASSERT_EQ(seen.size(), kCount);
  for (uint32_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(seen[i].first4, i) << "out of order at " << i;
  }
  runtime_->stop();
  EXPECT_EQ(module_.flushes.load(), 1);
}

TEST_F(RuntimeTest, RunToCompletionCallsTheModuleOnTheRxThread) {
  const uint16_t port = addReceiver().port();
  RuntimeConfig config;
  config.threading = Threading::RunToCompletion;
  Runtime &runtime = start(config);
  Sender sender;
  for (uint32_t i = 0; i < 300; ++i) {
    sender.send(port, i, 64 + i);
  }
  ASSERT_TRUE(waitProcessed(300));
  EXPECT_EQ(runtime.procTid(), 0); // no processing thread
  const auto seen = module_.seen();
  for (uint32_t i = 0; i < seen.size(); ++i) {
    ASSERT_EQ(seen[i].tid, runtime.rxTid()) << i;
    ASSERT_EQ(seen[i].first4, i);
    ASSERT_EQ(seen[i].size, 64 + i);
    ASSERT_EQ(seen[i].sourceIp, INADDR_LOOPBACK);
    ASSERT_EQ(seen[i].sourcePort, seen[0].sourcePort);
  }
  EXPECT_NE(seen[0].sourcePort, 0);
  // Ticks come from the rx thread while idle too (the receive timeout is 10 ms).
  const int ticks = module_.ticks.load();
  ASSERT_TRUE(eventually([&] { return module_.ticks.load() > ticks + 2; }));
  const pid_t rxTid = runtime.rxTid();
  runtime.stop();
  EXPECT_EQ(module_.flushes.load(), 1);
  EXPECT_EQ(module_.flushTid, rxTid);
}

TEST_F(RuntimeTest, RunToCompletionNeedsOneQueue) {
  const uint16_t port = addReceiver(false, true).port();
  addReceiver(false, true, port);
  RuntimeConfig config;
  config.threading = Threading::RunToCompletion;
  EXPECT_THROW(start(config), std::invalid_argument);
  config.threading = Threading::HandOff;
  config.rxCpus = {-1, -1, -1};
  EXPECT_THROW(start(config), std::invalid_argument); // 3 CPUs for 2 queues
}

TEST_F(RuntimeTest, GroMessagesAreSplitIntoTheSentDatagrams) {
  const uint16_t port = addReceiver(/*gro=*/true).port();
  RuntimeConfig config;
  config.threading = Threading::HandOff;
  config.slotBytes = kGroSlotBytes;
  start(config);
  Sender sender;
  // 10 datagrams of 1000 B and a short last one of 300 B, in one send call.
  sender.sendSegmented(port, 0, 10 * 1000 + 300, 1000);
  ASSERT_TRUE(waitProcessed(11));
  // A single datagram between two segmented sends.
  sender.send(port, 100, 777);
  sender.sendSegmented(port, 200, 3 * 64, 64);
  ASSERT_TRUE(waitProcessed(15));
  const auto seen = module_.seen();
  ASSERT_EQ(seen.size(), 15U);
  for (uint32_t k = 0; k < 10; ++k) {
    EXPECT_EQ(seen[k].size, 1000U) << k;
    EXPECT_EQ(seen[k].first4, k);
  }
  EXPECT_EQ(seen[10].size, 300U);
  EXPECT_EQ(seen[10].first4, 10U);
  EXPECT_EQ(seen[11].size, 777U);
  EXPECT_EQ(seen[11].first4, 100U);
  for (uint32_t k = 0; k < 3; ++k) {
    EXPECT_EQ(seen[12 + k].size, 64U);
    EXPECT_EQ(seen[12 + k].first4, 200 + k);
  }
  EXPECT_EQ(stat("receive.packets"), 15);
  EXPECT_EQ(stat("receive.bytes"), 10 * 1000 + 300 + 777 + 3 * 64);
  EXPECT_LT(stat("receive.messages"), 15); // the kernel coalesced
  EXPECT_EQ(stat("receive.truncated"), 0);
}

TEST_F(RuntimeTest, OversizedDatagramsAreCountedAndTheOthersKeepTheirOrder) {
  const uint16_t port = addReceiver().port();
  RuntimeConfig config;
  config.threading = Threading::HandOff;
  start(config);
  module_.hold = true; // let the datagrams queue up so that one recvmmsg gets them all
  Sender sender;
  sender.send(port, 0, 100);
  sender.send(port, 1, 100);
  ASSERT_TRUE(eventually([&] { return module_.seen().empty() && stat("receive.packets") >= 1; }));
  sender.send(port, 2, kSlotBytes + 1); // does not fit a slot
  sender.send(port, 3, kSlotBytes);     // fits exactly
  sender.send(port, 4, 100);
  module_.hold = false;
  ASSERT_TRUE(waitProcessed(4));
  EXPECT_EQ(stat("receive.packets"), 5);
  EXPECT_EQ(stat("receive.truncated"), 1);
  const auto seen = module_.seen();
  ASSERT_EQ(seen.size(), 4U);
  EXPECT_EQ(seen[0].first4, 0U);
  EXPECT_EQ(seen[1].first4, 1U);
  EXPECT_EQ(seen[2].first4, 3U);
  EXPECT_EQ(seen[2].size, kSlotBytes);
  EXPECT_EQ(seen[3].first4, 4U);
}

TEST_F(RuntimeTest, RxQueuesShareThePortAndTheirTotalsAreExact) {
  const uint16_t port = addReceiver(false, true).port();
  addReceiver(false, true, port);
  RuntimeConfig config;
  config.threading = Threading::HandOff;
  start(config);
  // 16 sources (source ports): the kernel spreads them over the two sockets by hash, and keeps
  // each on one socket. Each source's datagrams must arrive in order, with its queue's index.
  constexpr uint32_t kSources = 16;
  constexpr uint32_t kPerSource = 200;
  std::vector<std::unique_ptr<Sender>> senders;
  for (uint32_t s = 0; s < kSources; ++s) {
    senders.push_back(std::make_unique<Sender>());
  }
  for (uint32_t i = 0; i < kPerSource; ++i) {
    for (uint32_t s = 0; s < kSources; ++s) {
      senders[s]->send(port, s << 16 | i, 50 + s);
    }
  }
  constexpr int64_t kTotal = kSources * kPerSource;
  ASSERT_TRUE(waitProcessed(kTotal));
  EXPECT_EQ(stat("receive.packets"), kTotal);
  EXPECT_EQ(stat("receive.q0.packets") + stat("receive.q1.packets"), kTotal);
  EXPECT_EQ(stat("receive.q0.bytes") + stat("receive.q1.bytes"), stat("receive.bytes"));
  EXPECT_GT(stat("receive.q0.packets"), 0); // all 16 on one socket: 1 in 32768
  EXPECT_GT(stat("receive.q1.packets"), 0);
  std::vector<uint32_t> next(kSources, 0);
  std::vector<int> queueOf(kSources, -1);
  std::set<uint32_t> queues;
  for (const auto &seen : module_.seen()) {
    const uint32_t source = seen.first4 >> 16;
    ASSERT_LT(source, kSources);
    ASSERT_EQ(seen.first4 & 0xffff, next[source]) << "source " << source << " out of order";
    ++next[source];
    ASSERT_EQ(seen.size, 50 + source);
    if (queueOf[source] < 0) {
      queueOf[source] = static_cast<int>(seen.queue);
    }
    ASSERT_EQ(static_cast<int>(seen.queue), queueOf[source]) << "a source changed queue";
    queues.insert(seen.queue);
  }
  EXPECT_EQ(queues, (std::set<uint32_t>{0, 1}));
}

// The hand-off as efu::Daemon drives it: start() on one thread, stop() from another while the
// ring still holds every datagram. stop() returns after the drain, the module's flush and the
// hooks' finish, in that order and all on the processing thread, and what they wrote is visible
// to the caller (build-tsan checks the hand-over).
TEST_F(RuntimeTest, StopFromAnotherThreadDrainsFlushesAndFinishesOnTheProcessingThread) {
  const uint16_t port = addReceiver().port();
  RuntimeConfig config;
  config.threading = Threading::HandOff;
  config.ringSlots = 1024;
  RecordingHooks hooks(module_);
  Runtime &runtime = start(config, &hooks);
  module_.hold = true; // the first process() call stalls: the ring keeps what arrives
  constexpr uint32_t kCount = 200;
  Sender sender;
  for (uint32_t i = 0; i < kCount; ++i) {
    sender.send(port, i, 32);
  }
  ASSERT_TRUE(eventually([&] { return stat("receive.packets") == kCount; }));
  ASSERT_TRUE(eventually([&] { return runtime.procTid() != 0; }));
  const pid_t rxTid = runtime.rxTid();
  const pid_t procTid = runtime.procTid();
  ASSERT_NE(rxTid, 0);

  std::thread stopper([&] { runtime.stop(); });
  // The rx thread ends on the stop request; nothing has been processed yet.
  const bool rxEnded = eventually([&] { return !threadRuns(rxTid); });
  const int64_t processedAtStop = stat("processing.packets");
  module_.hold = false;
  stopper.join();
  ASSERT_TRUE(rxEnded);
  EXPECT_EQ(processedAtStop, 0);

  EXPECT_EQ(stat("processing.packets"), kCount);
  const auto seen = module_.seen();
  ASSERT_EQ(seen.size(), kCount);
  for (uint32_t i = 0; i < kCount; ++i) {
    ASSERT_EQ(seen[i].first4, i);
    ASSERT_EQ(seen[i].tid, procTid);
  }
  EXPECT_EQ(module_.flushes.load(), 1);
  EXPECT_EQ(module_.seenAtFlush, kCount) << "flushed after the drain";
  EXPECT_EQ(module_.flushTid, procTid);
  EXPECT_EQ(hooks.finishes, 1);
  EXPECT_EQ(hooks.flushesAtFinish, 1) << "hooks finish after the module's flush";
  EXPECT_EQ(hooks.finishTid, procTid);
  EXPECT_EQ(hooks.tickTid, procTid);
  runtime.stop(); // a second stop (the destructor's) is a no-op
  EXPECT_EQ(module_.flushes.load(), 1);
}

// Issue 37: drops after the last datagram read (SO_RXQ_OVFL comes only with a datagram) and
// what the socket buffer still held at the stop were in no counter. The module holds, the
// 4-slot ring fills, the small socket buffer fills and overflows, and then the stop: every
// datagram sent is received, dropped or unread, exactly (loopback delivers, or drops, within
// the send call).
TEST_F(RuntimeTest, AtTheStopEveryDatagramSentIsReceivedDroppedOrUnread) {
  const uint16_t port = addReceiver(false, false, 0, 64 * 1024).port();
  RuntimeConfig config;
  config.threading = Threading::HandOff;
  config.ringSlots = 4;
  config.rxBatch = 2;
  Runtime &runtime = start(config);
  module_.hold = true;
  constexpr int64_t kCount = 3000;
  Sender sender;
  for (int64_t i = 0; i < kCount; ++i) {
    sender.send(port, static_cast<uint32_t>(i), 200);
  }
  ASSERT_TRUE(eventually([&] { return stat("receive.ring_full_waits") > 0; }));
  const pid_t rxTid = runtime.rxTid();
  ASSERT_NE(rxTid, 0);
  std::thread stopper([&] { runtime.stop(); });
  const bool rxEnded = eventually([&] { return !threadRuns(rxTid); });
  module_.hold = false;
  stopper.join();
  ASSERT_TRUE(rxEnded);
  EXPECT_GT(stat("receive.unread"), 0) << "the buffer was full";
  EXPECT_GT(stat("receive.dropped"), 0) << "and overflowed, after the last datagram read";
  EXPECT_EQ(stat("receive.packets") + stat("receive.dropped") + stat("receive.unread"), kCount)
      << "received " << stat("receive.packets") << ", dropped " << stat("receive.dropped")
      << ", unread " << stat("receive.unread");
  EXPECT_EQ(stat("processing.packets"), stat("receive.packets"));
}

} // namespace
} // namespace efu

namespace efu {
namespace {

/// Records the order in which partitions' hooks finish (--proc-threads).
class OrderedHooks final : public ProcessingHooks {
public:
  explicit OrderedHooks(std::atomic<int> &sequence) : sequence_(sequence) {}
  void tick(int64_t) noexcept override { ticks.fetch_add(1); }
  void finish() noexcept override {
    finishedAs = sequence_.fetch_add(1);
    finishTid = gettid();
  }
  std::atomic<int> ticks{0};
  int finishedAs = -1;
  pid_t finishTid = 0;

private:
  std::atomic<int> &sequence_;
};

class RuntimePartitionTest : public RuntimeTest {
protected:
  // The modules and hooks below go before the base's runtime: stop its threads first.
  ~RuntimePartitionTest() override {
    if (runtime_) {
      runtime_->stop();
    }
  }
  Runtime &startPartitions(RuntimeConfig config, size_t count) {
    std::vector<Partition> partitions;
    for (size_t p = 0; p < count; ++p) {
      modules_.push_back(std::make_unique<RecordingModule>());
      hooks_.push_back(std::make_unique<OrderedHooks>(sequence_));
      partitions.push_back({modules_.back().get(), hooks_.back().get()});
    }
    runtime_ = std::make_unique<Runtime>(config, queues(), std::move(partitions), stats_, log_);
    runtime_->start();
    return *runtime_;
  }
  std::atomic<int> sequence_{0};
  std::vector<std::unique_ptr<RecordingModule>> modules_;
  std::vector<std::unique_ptr<OrderedHooks>> hooks_;
};

// Every partition reads every datagram of every ring, in order, on a thread of its own; a slot
// is reused only when the slowest partition has read it, so a partition that stalls holds back
// reading (the socket buffer keeps the rest) and loses nothing.
TEST_F(RuntimePartitionTest, EveryPartitionSeesEveryDatagramInOrderOnItsOwnThread) {
  const uint16_t port = addReceiver().port();
  RuntimeConfig config;
  config.threading = Threading::HandOff;
  config.ringSlots = 8;
  config.rxBatch = 4;
  Runtime &runtime = startPartitions(config, 3);
  modules_[1]->hold = true;
  constexpr uint32_t kCount = 400;
  Sender sender;
  for (uint32_t i = 0; i < kCount; ++i) {
    sender.send(port, i, 64);
  }
  ASSERT_TRUE(eventually([&] { return stat("receive.ring_full_waits") > 0; }));
  EXPECT_LE(stat("receive.packets"), 8 + 4);
  EXPECT_LE(stat("processing.packets"), 1) << "partition 1 has processed at most one";
  modules_[1]->hold = false;
  ASSERT_TRUE(waitProcessed(kCount)) << stat("processing.packets");
  EXPECT_EQ(stat("receive.dropped"), 0);
  std::set<pid_t> threads;
  for (size_t p = 0; p < 3; ++p) {
    const auto seen = modules_[p]->seen();
    ASSERT_EQ(seen.size(), kCount) << "partition " << p;
    for (uint32_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(seen[i].first4, i) << "partition " << p << " out of order at " << i;
      ASSERT_EQ(seen[i].tid, runtime.procTid(p));
    }
    threads.insert(runtime.procTid(p));
  }
  EXPECT_EQ(threads.size(), 3U);
  EXPECT_EQ(runtime.partitionCount(), 3U);
  runtime.stop();
  for (size_t p = 0; p < 3; ++p) {
    EXPECT_EQ(modules_[p]->flushes.load(), 1) << "partition " << p;
    EXPECT_EQ(modules_[p]->flushTid, runtime.procTid(p));
    EXPECT_EQ(hooks_[p]->finishTid, runtime.procTid(p));
  }
  EXPECT_EQ(hooks_[0]->finishedAs, 2) << "partition 0's hooks (the producer's) finish last";
}

// processing.packets shows a datagram once every partition has processed it: the counters of
// all partitions are final for what it shows.
TEST_F(RuntimePartitionTest, ProcessingPacketsWaitsForTheSlowestPartition) {
  const uint16_t port = addReceiver().port();
  RuntimeConfig config;
  config.threading = Threading::HandOff;
  config.ringSlots = 256;
  startPartitions(config, 2);
  modules_[1]->hold = true;
  Sender sender;
  for (uint32_t i = 0; i < 50; ++i) {
    sender.send(port, i, 32);
  }
  ASSERT_TRUE(eventually([&] { return modules_[0]->seen().size() == 50; }));
  EXPECT_EQ(stat("processing.packets"), 0);
  modules_[1]->hold = false;
  ASSERT_TRUE(waitProcessed(50));
  EXPECT_EQ(modules_[1]->seen().size(), 50U);
}

TEST_F(RuntimePartitionTest, SeveralPartitionsNeedHandOffAndMatchingCpuLists) {
  addReceiver();
  RuntimeConfig config;
  config.threading = Threading::RunToCompletion;
  EXPECT_THROW(startPartitions(config, 2), std::invalid_argument);
  config.threading = Threading::HandOff;
  config.procCpus = {0, 1};
  try {
    startPartitions(config, 3);
    FAIL() << "3 partitions with 2 CPUs were accepted";
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find("--proc-cpu lists 2 CPUs for 3 processing threads"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
} // namespace efu
