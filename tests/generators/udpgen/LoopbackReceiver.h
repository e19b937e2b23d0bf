// SPDX-License-Identifier: BSD-2-Clause
// Test helper: a UDP socket on 127.0.0.1 (free port, large buffer) that collects datagrams.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace efu::test {

/// One received datagram, decoded per docs/wire-formats.md §1.
struct Datagram {
  size_t sizeBytes = 0;
  uint64_t sequence = 0;
  uint64_t txNs = 0; ///< 0 when the datagram is shorter than 16 B.
  uint64_t hash = 0; ///< payloadHash() of the whole datagram
};

/// FNV-1a over a payload: equal hashes, equal bytes (for a test's few hundred datagrams).
inline uint64_t payloadHash(const uint8_t *data, size_t size) {
  uint64_t hash = 14695981039346656037ULL;
  for (size_t i = 0; i < size; ++i) {
    hash = (hash ^ data[i]) * 1099511628211ULL;
  }
  return hash;
}

inline uint64_t loadLe64(const uint8_t *src) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) {
    value = (value << 8) | src[i];
  }
  return value;
}

/// Binds 127.0.0.1:0 with the largest receive buffer it can get (SO_RCVBUFFORCE as root), so a
/// test can let a sender finish before reading without the kernel dropping anything.
class LoopbackReceiver {
public:
  LoopbackReceiver() {
    fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) {
      throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    }
    const int wanted = 64 << 20;
    if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &wanted, sizeof(wanted)) != 0) {
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &wanted, sizeof(wanted));
    }
    socklen_t len = sizeof(rcvbufBytes_);
    getsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbufBytes_, &len);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) {
      throw std::runtime_error(std::string("bind: ") + std::strerror(errno));
    }
    len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr *>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  ~LoopbackReceiver() { close(fd_); }
  LoopbackReceiver(const LoopbackReceiver &) = delete;
  LoopbackReceiver &operator=(const LoopbackReceiver &) = delete;

  [[nodiscard]] uint16_t port() const { return port_; }
  [[nodiscard]] int fd() const { return fd_; }
  /// Receive buffer the kernel granted (its accounting unit, i.e. including skb overhead).
  [[nodiscard]] int rcvbufBytes() const { return rcvbufBytes_; }

  /// Waits up to `timeoutMs` for one datagram to be readable; true if one is.
  bool waitReadable(int timeoutMs) const {
    pollfd pfd{fd_, POLLIN, 0};
    return poll(&pfd, 1, timeoutMs) == 1;
  }

  /// Reads until `expected` datagrams arrived (or `idleTimeoutMs` passes without any), then
  /// reads whatever else is already queued, so extras are seen too.
  std::vector<Datagram> collect(size_t expected, int idleTimeoutMs = 5000) {
    std::vector<Datagram> got;
    std::vector<uint8_t> buffer(65536);
    const auto readOne = [&](int flags) {
      const ssize_t n = recv(fd_, buffer.data(), buffer.size(), flags);
      if (n < 0) {
        return false;
      }
      Datagram d;
      d.sizeBytes = static_cast<size_t>(n);
      if (n >= 8) {
        d.sequence = loadLe64(buffer.data());
      }
      if (n >= 16) {
        d.txNs = loadLe64(buffer.data() + 8);
      }
      d.hash = payloadHash(buffer.data(), d.sizeBytes);
      got.push_back(d);
      return true;
    };
    while (got.size() < expected && waitReadable(idleTimeoutMs)) {
      readOne(0);
    }
    while (readOne(MSG_DONTWAIT)) {
    }
    return got;
  }

private:
  int fd_ = -1;
  uint16_t port_ = 0;
  int rcvbufBytes_ = 0;
};

} // namespace efu::test
