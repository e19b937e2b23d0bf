// SPDX-License-Identifier: BSD-2-Clause
// Receive path in drain mode: a prefilled socket emptied by UdpReceiver into ring slots vs bare loops.
#include "common/memory/SpscRing.h"
#include "common/net/UdpReceiver.h"
#include "common/system/Affinity.h"

#include <benchmark/benchmark.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr uint32_t kSlotBytes = 9216; // as efu's RxSlot (efu/Runtime.h)
constexpr unsigned kBatch = 64;       // efu's default --rx-batch
constexpr int kRcvbufBytes = 64 * 1024 * 1024;

/// The same slot layout as efu's RxSlot: the kernel writes straight into the slot's buffer.
struct Slot {
  uint8_t *data = nullptr;
  uint32_t size = 0;
  uint32_t segmentBytes = 0;
  int64_t rxTimeNs = 0;
};

/// A ring of `slots` slots with their 9216-byte buffers, as efu's rx queue builds it.
struct SlotRing {
  explicit SlotRing(size_t slots) : ring(slots), storage(slots * kSlotBytes) {
    for (size_t i = 0; i < slots; ++i) {
      ring.producerSlot(i).data = &storage[i * kSlotBytes];
    }
  }
  efu::SpscRing<Slot> ring;
  std::vector<uint8_t> storage;
};

/// Datagrams to queue before each drain: as many as surely fit in a 64 MiB (x2) receive buffer
/// (the kernel charges about size + 1 KiB per small datagram, 16 KiB + per jumbo one).
int fillCount(int size) { return size <= 256 ? 32768 : (size <= 2048 ? 16384 : 4096); }

int udpSocket() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  }
  return fd;
}

/// A sender connected to 127.0.0.1:port that queues `count` numbered datagrams of `size` bytes.
class Filler {
public:
  Filler(uint16_t port, int size) : fd_(udpSocket()), payload_(static_cast<size_t>(size), 0x5a) {
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr *>(&to), sizeof(to)) != 0) {
      throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
    }
  }
  ~Filler() { close(fd_); }
  Filler(const Filler &) = delete;
  Filler &operator=(const Filler &) = delete;

  void fill(int count) {
    std::array<mmsghdr, kBatch> msgs{};
    iovec iov{payload_.data(), payload_.size()};
    for (auto &m : msgs) {
      m.msg_hdr.msg_iov = &iov;
      m.msg_hdr.msg_iovlen = 1;
    }
    int sent = 0;
    while (sent < count) {
      const unsigned n = static_cast<unsigned>(std::min<int>(kBatch, count - sent));
      const int rc = sendmmsg(fd_, msgs.data(), n, 0);
      if (rc <= 0) {
        throw std::runtime_error(std::string("sendmmsg: ") + std::strerror(errno));
      }
      sent += rc;
    }
  }

private:
  int fd_;
  std::vector<uint8_t> payload_;
};

/// A bare receiving socket with the same buffer size as the efu receiver (forced as root).
int bareReceiver(uint16_t &port) {
  const int fd = udpSocket();
  int rcvbuf = kRcvbufBytes;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
  timeval timeout{0, 10000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) {
    throw std::runtime_error(std::string("bind: ") + std::strerror(errno));
  }
  sockaddr_in bound{};
  socklen_t length = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr *>(&bound), &length);
  port = ntohs(bound.sin_port);
  return fd;
}

/// Runs the timed drain `drain(count)` -> datagrams received, after an untimed fill, per
/// iteration; reports datagrams/s and user-data bytes/s. A drain that comes back short means
/// the fill overflowed the buffer or the drain lost track: the run is marked failed.
template <typename Drain>
void timeDrains(benchmark::State &state, uint16_t port, int size, Drain &&drain) {
  if (const auto problem = efu::pinCurrentThread(0); !problem.empty()) {
    state.SkipWithError(problem.c_str());
    return;
  }
  Filler filler(port, size);
  const int count = fillCount(size);
  int64_t total = 0;
  for (auto _ : state) {
    filler.fill(count);
    const auto start = std::chrono::steady_clock::now();
    const int got = drain(count);
    const auto end = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    if (got != count) {
      state.SkipWithError(("drained " + std::to_string(got) + " of " + std::to_string(count) +
                           " datagrams (buffer overflow during the fill?)")
                              .c_str());
      break;
    }
    total += got;
  }
  state.SetItemsProcessed(total);
  state.SetBytesProcessed(total * size);
}

/// efu's rx loop without the threads: UdpReceiver::receive straight into reserved ring slots,
/// commit, then the consumer side releases them (drain mode measures the receive path only).
/// range(1) is the ring's slot count: 64 is what run to completion uses, 256 the hand-off
/// default, 2048 the old default (19 MiB walked through the cache).
void efuReceiverIntoRing(benchmark::State &state) {
  const int size = static_cast<int>(state.range(0));
  efu::UdpReceiver receiver({"127.0.0.1", 0, kRcvbufBytes, 10, kBatch});
  SlotRing slots(static_cast<size_t>(state.range(1)));
  efu::SpscRing<Slot> &ring = slots.ring;
  std::array<uint8_t *, kBatch> buffers{};
  std::array<efu::UdpReceiver::Message, kBatch> messages{};
  timeDrains(state, receiver.port(), size, [&](int count) {
    int got = 0;
    while (got < count) {
      const size_t free = ring.reserve(kBatch);
      for (size_t i = 0; i < free; ++i) {
        buffers[i] = ring.producerSlot(i).data;
      }
      const auto result = receiver.receive(buffers.data(), static_cast<unsigned>(free),
                                           kSlotBytes, messages.data());
      if (result.received <= 0) {
        break;
      }
      for (int i = 0; i < result.received; ++i) {
        ring.producerSlot(static_cast<size_t>(i)).size = messages[static_cast<size_t>(i)].size;
      }
      ring.commit(static_cast<size_t>(result.received));
      ring.release(ring.available(ring.capacity()));
      got += result.received;
    }
    return got;
  });
}

/// The anchor: recvmmsg of 64 into a fixed array of 9216-byte buffers, nothing else.
/// With range(1) = 1 the socket also has SO_RXQ_OVFL and every message a control buffer, as
/// UdpReceiver does (attributes the cost of per-datagram drop counts).
void bareRecvmmsg(benchmark::State &state) {
  const int size = static_cast<int>(state.range(0));
  const bool overflowCmsg = state.range(1) != 0;
  uint16_t port = 0;
  const int fd = bareReceiver(port);
  const int on = 1;
  if (overflowCmsg) {
    setsockopt(fd, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof(on));
  }
  constexpr size_t kControlBytes = CMSG_SPACE(sizeof(uint32_t));
  std::vector<char> control(kBatch * kControlBytes);
  std::vector<uint8_t> storage(size_t{kBatch} * kSlotBytes);
  std::array<iovec, kBatch> iovs{};
  std::array<mmsghdr, kBatch> msgs{};
  timeDrains(state, port, size, [&](int count) {
    int got = 0;
    while (got < count) {
      for (unsigned i = 0; i < kBatch; ++i) {
        iovs[i] = {&storage[size_t{i} * kSlotBytes], kSlotBytes};
        msgs[i].msg_hdr = {};
        msgs[i].msg_hdr.msg_iov = &iovs[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
        if (overflowCmsg) {
          msgs[i].msg_hdr.msg_control = &control[i * kControlBytes];
          msgs[i].msg_hdr.msg_controllen = kControlBytes;
        }
      }
      const int n = recvmmsg(fd, msgs.data(), kBatch, MSG_WAITFORONE, nullptr);
      if (n <= 0) {
        break;
      }
      got += n;
    }
    return got;
  });
  close(fd);
}

/// Attribution of a gap between the two above: UdpReceiver into one fixed batch of buffers
/// (no ring: isolates SO_RXQ_OVFL and the wrapper) ...
void efuReceiverFixed(benchmark::State &state) {
  const int size = static_cast<int>(state.range(0));
  efu::UdpReceiver receiver({"127.0.0.1", 0, kRcvbufBytes, 10, kBatch});
  std::vector<uint8_t> storage(size_t{kBatch} * kSlotBytes);
  std::array<uint8_t *, kBatch> buffers{};
  for (unsigned i = 0; i < kBatch; ++i) {
    buffers[i] = &storage[size_t{i} * kSlotBytes];
  }
  std::array<efu::UdpReceiver::Message, kBatch> messages{};
  timeDrains(state, receiver.port(), size, [&](int count) {
    int got = 0;
    while (got < count) {
      const auto result = receiver.receive(buffers.data(), kBatch, kSlotBytes, messages.data());
      if (result.received <= 0) {
        break;
      }
      got += result.received;
    }
    return got;
  });
}

/// ... and a bare recvmmsg into ring slots (isolates the cache footprint; range(1) = slots).
void bareRecvmmsgIntoRing(benchmark::State &state) {
  const int size = static_cast<int>(state.range(0));
  uint16_t port = 0;
  const int fd = bareReceiver(port);
  SlotRing slots(static_cast<size_t>(state.range(1)));
  efu::SpscRing<Slot> &ring = slots.ring;
  std::array<iovec, kBatch> iovs{};
  std::array<mmsghdr, kBatch> msgs{};
  timeDrains(state, port, size, [&](int count) {
    int got = 0;
    while (got < count) {
      const size_t free = ring.reserve(kBatch);
      for (size_t i = 0; i < free; ++i) {
        iovs[i] = {ring.producerSlot(i).data, kSlotBytes};
        msgs[i].msg_hdr = {};
        msgs[i].msg_hdr.msg_iov = &iovs[i];
        msgs[i].msg_hdr.msg_iovlen = 1;
      }
      const int n = recvmmsg(fd, msgs.data(), static_cast<unsigned>(free), MSG_WAITFORONE, nullptr);
      if (n <= 0) {
        break;
      }
      ring.commit(static_cast<size_t>(n));
      ring.release(ring.available(ring.capacity()));
      got += n;
    }
    return got;
  });
  close(fd);
}

/// One recvfrom per datagram, the paper's receiver.
void bareRecvfrom(benchmark::State &state) {
  const int size = static_cast<int>(state.range(0));
  uint16_t port = 0;
  const int fd = bareReceiver(port);
  std::vector<uint8_t> buffer(kSlotBytes);
  timeDrains(state, port, size, [&](int count) {
    int got = 0;
    while (got < count) {
      if (recvfrom(fd, buffer.data(), buffer.size(), 0, nullptr, nullptr) < 0) {
        break;
      }
      ++got;
    }
    return got;
  });
  close(fd);
}

} // namespace

BENCHMARK(efuReceiverIntoRing)->Name("drain/efu_receiver_ring")
    ->ArgsProduct({{64, 1472, 8972}, {64, 256, 2048}})->ArgNames({"", "slots"})
    ->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(bareRecvmmsg)->Name("drain/bare_recvmmsg")->ArgsProduct({{64, 1472, 8972}, {0, 1}})
    ->ArgNames({"", "rxq_ovfl"})
    ->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(efuReceiverFixed)->Name("drain/efu_receiver_fixed")->Arg(64)->Arg(1472)->Arg(8972)
    ->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(bareRecvmmsgIntoRing)->Name("drain/bare_recvmmsg_ring")
    ->ArgsProduct({{64, 1472, 8972}, {64, 256, 2048}})->ArgNames({"", "slots"})
    ->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(bareRecvfrom)->Name("drain/bare_recvfrom")->Arg(64)->Arg(1472)->Arg(8972)
    ->UseManualTime()->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
