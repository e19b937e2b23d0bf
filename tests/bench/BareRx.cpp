// SPDX-License-Identifier: BSD-2-Clause
// efu-bench-bare-rx: the bare UDP receiver that scripts/bench-zero-loss compares efu with.
//
// One thread, no efu code: a UDP socket (SO_RCVBUF 12 MiB, SO_RXQ_OVFL), recvmmsg of up to 64
// datagrams (MSG_WAITFORONE) into 64 fixed buffers, and two counters. It is the anchor that
// efu's receive path is compared with. With --gro the socket takes UDP_GRO super-datagrams into
// 64 KiB buffers and counts each as ceil(length / segment size) datagrams. With --work-ns it
// does a fixed amount of CPU work per datagram (common/system/BusyWork.h, the one efu header it
// uses; the same work as `efu -d udp` with work_ns): a stand-in for a module's cost, so that what
// the machine loses at that cost can be told from what efu loses.
//
// stdout: {"port":N,"rcvbuf":B} once bound, and on SIGINT/SIGTERM
// {"packets":P,"bytes":B,"kernel_drops":D} (then exit 0). Errors go to stderr, exit 1.
#include "common/system/BusyWork.h"

#include <CLI/CLI.hpp>

#include <arpa/inet.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifndef UDP_GRO
#define UDP_GRO 104 // linux/udp.h; older libc headers lack it
#endif

namespace {

constexpr unsigned kBatch = 64;
constexpr size_t kBufferBytes = 9216;     // efu's slot size: any datagram up to a 9000 MTU
constexpr size_t kGroBufferBytes = 65536; // a GRO super-datagram is at most 64 KiB
constexpr size_t kControlBytes = CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(int));

volatile sig_atomic_t stopRequested = 0;

void onStopSignal(int) {
  stopRequested = 1;
}

[[noreturn]] void fail(const std::string &what) {
  std::fprintf(stderr, "efu-bench-bare-rx: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

void setIntOption(int fd, int level, int name, int value, const char *what) {
  if (setsockopt(fd, level, name, &value, sizeof(value)) != 0) {
    fail(std::string("setsockopt(") + what + ")");
  }
}

int intOption(int fd, int level, int name, const char *what) {
  int value = 0;
  socklen_t length = sizeof(value);
  if (getsockopt(fd, level, name, &value, &length) != 0) {
    fail(std::string("getsockopt(") + what + ")");
  }
  return value;
}

/// Asks for `bytes` of receive buffer; past net.core.rmem_max only SO_RCVBUFFORCE (root) helps.
/// Returns what the kernel granted (it doubles the request for its bookkeeping).
int setReceiveBuffer(int fd, int bytes) {
  setIntOption(fd, SOL_SOCKET, SO_RCVBUF, bytes, "SO_RCVBUF");
  if (intOption(fd, SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF") < 2 * bytes &&
      setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) != 0) {
    std::fprintf(stderr,
                 "efu-bench-bare-rx: warning: SO_RCVBUF capped by net.core.rmem_max and "
                 "SO_RCVBUFFORCE failed (%s)\n",
                 std::strerror(errno));
  }
  return intOption(fd, SOL_SOCKET, SO_RCVBUF, "SO_RCVBUF");
}

/// The socket's drop count (sk_drops) right now, from SO_MEMINFO.
uint32_t socketDrops(int fd) {
  uint32_t meminfo[SK_MEMINFO_VARS] = {};
  socklen_t length = sizeof(meminfo);
  if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, meminfo, &length) != 0) {
    fail("getsockopt(SO_MEMINFO)");
  }
  return meminfo[SK_MEMINFO_DROPS];
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"efu-bench-bare-rx: bare UDP receiver (recvmmsg into fixed buffers, counts only); "
               "prints its port, and its counts on SIGINT/SIGTERM, as JSON lines on stdout"};
  std::string address = "127.0.0.1";
  int port = 0;
  int cpu = -1;
  int rcvbuf = 12 * 1024 * 1024;
  bool gro = false;
  uint64_t workNs = 0;
  app.add_option("--address", address, "IPv4 address to bind")->capture_default_str();
  app.add_option("--port", port, "UDP port to bind (0 = any free port; printed)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  app.add_option("--cpu", cpu, "CPU to pin the thread to (-1 = not pinned)")
      ->capture_default_str()
      ->check(CLI::Range(-1, CPU_SETSIZE - 1));
  app.add_option("--rcvbuf", rcvbuf, "Socket receive buffer to request, bytes")
      ->capture_default_str()
      ->check(CLI::Range(4096, 1 << 30));
  app.add_flag("--gro", gro, "UDP_GRO: receive coalesced datagrams, count their segments");
  app.add_option("--work-ns", workNs, "CPU work per datagram, ns (sized at start; 0 = none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 10'000'000));
  CLI11_PARSE(app, argc, argv);

  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); rc != 0) {
      errno = rc; // pthread functions return the errno instead of setting it
      fail("pinning to CPU " + std::to_string(cpu));
    }
  }

  struct sigaction action {};
  action.sa_handler = onStopSignal; // no SA_RESTART: a blocked recvmmsg returns EINTR
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGINT, &action, nullptr) != 0 || sigaction(SIGTERM, &action, nullptr) != 0) {
    fail("sigaction");
  }

  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    fail("socket");
  }
  const int granted = setReceiveBuffer(fd, rcvbuf);
  setIntOption(fd, SOL_SOCKET, SO_RXQ_OVFL, 1, "SO_RXQ_OVFL");
  if (gro) {
    setIntOption(fd, SOL_UDP, UDP_GRO, 1, "UDP_GRO");
  }
  // A signal between the stop check and recvmmsg would otherwise block until the next datagram.
  const timeval wakeup{0, 100 * 1000};
  if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wakeup, sizeof(wakeup)) != 0) {
    fail("setsockopt(SO_RCVTIMEO)");
  }
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, address.c_str(), &local.sin_addr) != 1) {
    std::fprintf(stderr, "efu-bench-bare-rx: --address: not an IPv4 address: %s\n",
                 address.c_str());
    return 1;
  }
  if (bind(fd, reinterpret_cast<sockaddr *>(&local), sizeof(local)) != 0) {
    fail("bind " + address + ":" + std::to_string(port));
  }
  socklen_t localLength = sizeof(local);
  if (getsockname(fd, reinterpret_cast<sockaddr *>(&local), &localLength) != 0) {
    fail("getsockname");
  }
  efu::BusyWork work(workNs); // sized after pinning, on the core it runs on
  std::printf("{\"port\":%u,\"rcvbuf\":%d,\"work_steps\":%llu}\n", ntohs(local.sin_port),
              granted, static_cast<unsigned long long>(work.stepCount()));
  std::fflush(stdout);

  const size_t bufferBytes = gro ? kGroBufferBytes : kBufferBytes;
  std::vector<uint8_t> buffers(kBatch * bufferBytes);
  std::vector<uint8_t> controls(kBatch * kControlBytes);
  std::vector<iovec> iovs(kBatch);
  std::vector<mmsghdr> msgs(kBatch);
  for (unsigned i = 0; i < kBatch; ++i) {
    iovs[i] = {buffers.data() + i * bufferBytes, bufferBytes};
    msgs[i].msg_hdr.msg_iov = &iovs[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
    msgs[i].msg_hdr.msg_control = controls.data() + i * kControlBytes;
  }

  uint64_t packets = 0;
  uint64_t bytes = 0;
  uint32_t overflowDrops = 0; // the latest SO_RXQ_OVFL value (cumulative for the socket)
  while (!stopRequested) {
    for (auto &m : msgs) {
      m.msg_hdr.msg_controllen = kControlBytes; // the kernel shrinks it to what it wrote
    }
    const int n = recvmmsg(fd, msgs.data(), kBatch, MSG_WAITFORONE, nullptr);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) {
        continue;
      }
      fail("recvmmsg");
    }
    for (int i = 0; i < n; ++i) {
      msghdr &h = msgs[i].msg_hdr;
      const uint32_t length = msgs[i].msg_len;
      bytes += length;
      uint64_t count = 1;
      // Only GRO needs every message's control data; otherwise the batch's last carries the drops.
      if (gro || i == n - 1) {
        for (cmsghdr *c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(&h, c)) {
          if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
            std::memcpy(&overflowDrops, CMSG_DATA(c), sizeof(overflowDrops));
          } else if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
            int segment = 0;
            std::memcpy(&segment, CMSG_DATA(c), sizeof(segment));
            if (segment > 0) {
              const auto segmentBytes = static_cast<uint32_t>(segment);
              count = (length + segmentBytes - 1) / segmentBytes;
            }
          }
        }
      }
      packets += count;
      if (workNs > 0) {
        for (uint64_t k = 0; k < count; ++k) {
          (void)work.run(length);
        }
      }
    }
  }

  // SO_RXQ_OVFL only reports drops before the last datagram read; SO_MEMINFO has them all.
  const uint32_t drops = std::max(overflowDrops, socketDrops(fd));
  close(fd);
  std::printf("{\"packets\":%llu,\"bytes\":%llu,\"kernel_drops\":%u}\n",
              static_cast<unsigned long long>(packets), static_cast<unsigned long long>(bytes),
              drops);
  return 0;
}
