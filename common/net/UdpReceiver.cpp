// SPDX-License-Identifier: BSD-2-Clause
// A bound UDP socket that receives batches of datagrams (recvmmsg) straight into caller buffers.
#include "common/net/UdpReceiver.h"

#include <arpa/inet.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

namespace efu {
namespace {

// SO_RXQ_OVFL (uint32_t drop count), UDP_GRO (int segment size), SO_TIMESTAMPNS (timespec).
constexpr size_t kControlBytes =
    CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(int)) + CMSG_SPACE(sizeof(timespec));

std::string errnoText(int error) { return std::strerror(error); }

/// Reads the control messages of one received message: the socket's cumulative drop count
/// into `drops` (when the kernel sent it), the GRO segment size, the kernel's timestamp.
inline void readControl(msghdr &hdr, uint32_t &drops, uint32_t &segmentBytes,
                        int64_t &rxTimeNs) noexcept {
  for (cmsghdr *c = CMSG_FIRSTHDR(&hdr); c != nullptr; c = CMSG_NXTHDR(&hdr, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
      std::memcpy(&drops, CMSG_DATA(c), sizeof(drops));
    } else if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) {
      int segment = 0;
      std::memcpy(&segment, CMSG_DATA(c), sizeof(segment));
      segmentBytes = segment > 0 ? static_cast<uint32_t>(segment) : 0;
    } else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPNS) {
      timespec stamp{};
      std::memcpy(&stamp, CMSG_DATA(c), sizeof(stamp));
      rxTimeNs = static_cast<int64_t>(stamp.tv_sec) * 1'000'000'000 + stamp.tv_nsec;
    }
  }
}

} // namespace

std::string rmemMaxAdvice(int bytes) {
  const std::string setting = "net.core.rmem_max=" + std::to_string(bytes);
  return "sudo sysctl -w " + setting + " (to keep it after a reboot: echo '" + setting +
         "' | sudo tee /etc/sysctl.d/90-efu.conf)";
}

UdpReceiver::UdpReceiver(const Options &options)
    : msgs_(options.maxBatch), iovs_(options.maxBatch), sources_(options.maxBatch),
      control_(options.maxBatch * kControlBytes) {
  const std::string where = options.address + ":" + std::to_string(options.port);
  if (options.maxBatch == 0) {
    throw NetError("receive batch must be at least 1");
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(options.port);
  if (inet_pton(AF_INET, options.address.c_str(), &addr.sin_addr) != 1) {
    throw NetError("invalid IPv4 address '" + options.address + "' to receive on");
  }
  fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    throw NetError("cannot create UDP socket: " + errnoText(errno));
  }
  auto fail = [this](const std::string &message) {
    const std::string text = message + ": " + errnoText(errno);
    close(fd_);
    fd_ = -1;
    throw NetError(text);
  };

  // Ask for the buffer; if rmem_max caps it, a privileged process may force it.
  int requested = options.rcvbufBytes;
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &requested, sizeof(requested)) != 0) {
    fail("cannot set SO_RCVBUF to " + std::to_string(requested));
  }
  int granted = 0;
  socklen_t length = sizeof(granted);
  getsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &granted, &length);
  grantedRcvbufBytes_ = granted / 2; // Linux doubles the value for its bookkeeping
  if (grantedRcvbufBytes_ < requested &&
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &requested, sizeof(requested)) == 0) {
    getsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &granted, &length);
    grantedRcvbufBytes_ = granted / 2;
    rcvbufForced_ = true;
  }
  const int on = 1;
  if (setsockopt(fd_, SOL_SOCKET, SO_RXQ_OVFL, &on, sizeof(on)) != 0) {
    fail("cannot enable SO_RXQ_OVFL");
  }
  timeval timeout{options.timeoutMs / 1000, (options.timeoutMs % 1000) * 1000};
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) != 0) {
    fail("cannot set SO_RCVTIMEO");
  }
  if (options.reusePort && setsockopt(fd_, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on)) != 0) {
    fail("cannot enable SO_REUSEPORT");
  }
  if (options.gro && setsockopt(fd_, IPPROTO_UDP, UDP_GRO, &on, sizeof(on)) != 0) {
    fail("cannot enable UDP_GRO (needs Linux 5.0 or later)");
  }
  if (options.kernelTimestamps &&
      setsockopt(fd_, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on)) != 0) {
    fail("cannot enable SO_TIMESTAMPNS");
  }
  if (options.busyPollUs > 0 && setsockopt(fd_, SOL_SOCKET, SO_BUSY_POLL, &options.busyPollUs,
                                           sizeof(options.busyPollUs)) != 0) {
    busyPollProblem_ = "cannot set SO_BUSY_POLL to " + std::to_string(options.busyPollUs) +
                       " us: " + errnoText(errno) +
                       (errno == EPERM ? " (needs CAP_NET_ADMIN above net.core.busy_read)" : "");
  }
  if (bind(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) {
    fail("cannot bind UDP " + where);
  }
  sockaddr_in bound{};
  socklen_t boundLength = sizeof(bound);
  getsockname(fd_, reinterpret_cast<sockaddr *>(&bound), &boundLength);
  port_ = ntohs(bound.sin_port);
}

UdpReceiver::~UdpReceiver() {
  if (fd_ >= 0) {
    close(fd_);
  }
}

UdpReceiver::Batch UdpReceiver::receive(uint8_t *const *buffers, unsigned count, uint32_t capacity,
                                        Message *messages) noexcept {
  if (count > msgs_.size()) {
    count = static_cast<unsigned>(msgs_.size());
  }
  for (unsigned i = 0; i < count; ++i) {
    iovs_[i].iov_base = buffers[i];
    iovs_[i].iov_len = capacity;
    msghdr &hdr = msgs_[i].msg_hdr;
    hdr.msg_name = &sources_[i];
    hdr.msg_namelen = sizeof(sockaddr_in);
    hdr.msg_iov = &iovs_[i];
    hdr.msg_iovlen = 1;
    hdr.msg_control = &control_[i * kControlBytes];
    hdr.msg_controllen = kControlBytes;
    hdr.msg_flags = 0;
  }
  const int n = recvmmsg(fd_, msgs_.data(), count, MSG_WAITFORONE, nullptr);
  if (n < 0) {
    const int error = errno;
    if (error == EAGAIN || error == EWOULDBLOCK || error == EINTR) {
      return {0, 0, kernelDrops_};
    }
    return {-1, error, kernelDrops_};
  }
  for (int i = 0; i < n; ++i) {
    msghdr &hdr = msgs_[i].msg_hdr;
    Message &m = messages[i];
    m.size = msgs_[i].msg_len;
    m.truncated = (hdr.msg_flags & MSG_TRUNC) != 0;
    m.segmentBytes = 0;
    m.rxTimeNs = 0;
    m.sourceIp = ntohl(sources_[i].sin_addr.s_addr);
    m.sourcePort = ntohs(sources_[i].sin_port);
    // The drop count is cumulative per socket, so the last message's value is the newest.
    readControl(hdr, kernelDrops_, m.segmentBytes, m.rxTimeNs);
  }
  return {n, 0, kernelDrops_};
}

UdpReceiver::Leftover UdpReceiver::discardQueued() noexcept {
  // The budget is the buffer's allocation at the call (each datagram's true size: payload plus
  // at least a few hundred bytes of overhead); every datagram read uses up its payload and 256
  // bytes of it, so all that was queued is read, and little more.
  uint32_t meminfo[SK_MEMINFO_VARS] = {};
  socklen_t length = sizeof(meminfo);
  const bool known = getsockopt(fd_, SOL_SOCKET, SO_MEMINFO, meminfo, &length) == 0;
  const uint64_t budget =
      known ? meminfo[SK_MEMINFO_RMEM_ALLOC] : 2 * static_cast<uint64_t>(grantedRcvbufBytes_);
  Leftover left{0, kernelDrops_};
  uint8_t scratch[64];
  alignas(cmsghdr) char control[kControlBytes];
  for (uint64_t used = 0; used < budget;) {
    iovec iov{scratch, sizeof(scratch)};
    msghdr hdr{};
    hdr.msg_iov = &iov;
    hdr.msg_iovlen = 1;
    hdr.msg_control = control;
    hdr.msg_controllen = sizeof(control);
    // MSG_TRUNC: the datagram's (or GRO message's) whole length, though only 64 bytes are copied.
    const ssize_t n = recvmsg(fd_, &hdr, MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) {
      if (errno == EINTR) {
        continue; // a signal (another stop request): the buffer still holds what it held
      }
      break; // empty (EAGAIN), or nothing more to read at the stop
    }
    uint32_t segment = 0;
    int64_t arrivalNs = 0;
    readControl(hdr, kernelDrops_, segment, arrivalNs);
    const auto size = static_cast<uint64_t>(n);
    left.datagrams += segment > 0 && size > segment ? (size + segment - 1) / segment : 1;
    used += size + 256;
  }
  length = sizeof(meminfo);
  if (getsockopt(fd_, SOL_SOCKET, SO_MEMINFO, meminfo, &length) == 0) {
    kernelDrops_ = meminfo[SK_MEMINFO_DROPS]; // the counter SO_RXQ_OVFL reports
  }
  left.kernelDrops = kernelDrops_;
  return left;
}

} // namespace efu
