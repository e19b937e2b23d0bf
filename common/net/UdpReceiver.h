// SPDX-License-Identifier: BSD-2-Clause
// A bound UDP socket that receives batches of datagrams (recvmmsg) straight into caller buffers.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace efu {

/// Thrown when the socket cannot be created, bound or configured; the message names what and why.
class NetError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Receives UDP datagrams with one recvmmsg() call per batch.
/// Thread rules: configure on any thread, then receive() from one thread only.
class UdpReceiver {
public:
  struct Options {
    std::string address = "0.0.0.0";
    uint16_t port = 9000;           ///< 0 = ephemeral (see port())
    int rcvbufBytes = 12 * 1024 * 1024;
    int timeoutMs = 100;            ///< receive() returns 0 after this long without data
    unsigned maxBatch = 64;         ///< most datagrams one receive() may return
  };

  explicit UdpReceiver(const Options &options);
  ~UdpReceiver();
  UdpReceiver(const UdpReceiver &) = delete;
  UdpReceiver &operator=(const UdpReceiver &) = delete;

  /// The port actually bound.
  [[nodiscard]] uint16_t port() const noexcept { return port_; }
  /// Receive buffer the kernel granted, in bytes as requested (the kernel reports twice this).
  [[nodiscard]] int grantedRcvbufBytes() const noexcept { return grantedRcvbufBytes_; }
  /// True when the grant needed SO_RCVBUFFORCE (net.core.rmem_max was below the request).
  [[nodiscard]] bool rcvbufForced() const noexcept { return rcvbufForced_; }

  struct Batch {
    int received;          ///< datagrams received; 0 on timeout or signal, -1 on error (errno in error)
    int error;
    uint32_t kernelDrops;  ///< the socket's cumulative drop count (SO_RXQ_OVFL) after this batch
  };

  /// Receives up to `count` (<= maxBatch) datagrams, blocking until at least one arrives or the
  /// timeout passes. Datagram i goes to buffers[i] (capacity bytes each); its length goes to
  /// sizes[i], with truncated[i] set when it did not fit. noexcept, no allocation.
  Batch receive(uint8_t *const *buffers, unsigned count, uint32_t capacity, uint32_t *sizes,
                bool *truncated) noexcept;

private:
  int fd_ = -1;
  uint16_t port_ = 0;
  int grantedRcvbufBytes_ = 0;
  bool rcvbufForced_ = false;
  uint32_t kernelDrops_ = 0;
  std::vector<mmsghdr> msgs_;
  std::vector<iovec> iovs_;
  std::vector<char> control_; ///< one SO_RXQ_OVFL control buffer per message
};

} // namespace efu
