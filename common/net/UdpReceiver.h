// SPDX-License-Identifier: BSD-2-Clause
// A bound UDP socket that receives batches of datagrams (recvmmsg) straight into caller buffers.
#pragma once

#include <netinet/in.h>
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

/// How to let every process have `bytes` of socket receive buffer: the sysctl command to run
/// and how to keep the setting across reboots (net.core.rmem_max caps SO_RCVBUF).
[[nodiscard]] std::string rmemMaxAdvice(int bytes);

/// Receives UDP datagrams with one recvmmsg() call per batch.
/// Thread rules: configure on any thread, then receive() from one thread only.
class UdpReceiver {
public:
  struct Options {
    std::string address = "0.0.0.0";
    uint16_t port = 9000;           ///< 0 = ephemeral (see port())
    int rcvbufBytes = 12 * 1024 * 1024;
    int timeoutMs = 100;            ///< receive() returns 0 after this long without data
    unsigned maxBatch = 64;         ///< most messages one receive() may return
    bool reusePort = false;         ///< SO_REUSEPORT: several sockets share the port (rx queues)
    bool gro = false;               ///< UDP_GRO: one message may hold many same-size datagrams
    int busyPollUs = 0;             ///< SO_BUSY_POLL: spin this long in the driver (0 = off)
    bool kernelTimestamps = false;  ///< SO_TIMESTAMPNS: the kernel's arrival time per message
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
  /// Why SO_BUSY_POLL was not applied ("" if it was, or was not asked for). Not fatal: it needs
  /// CAP_NET_ADMIN to go above net.core.busy_read.
  [[nodiscard]] const std::string &busyPollProblem() const noexcept { return busyPollProblem_; }

  struct Batch {
    int received;          ///< messages received; 0 on timeout or signal, -1 on error (errno in error)
    int error;
    uint32_t kernelDrops;  ///< the socket's cumulative drop count (SO_RXQ_OVFL) after this batch
  };

  /// What the kernel said about one received message.
  struct Message {
    uint32_t size;         ///< bytes received
    uint32_t segmentBytes; ///< datagram size when GRO coalesced several (the last may be
                           ///< shorter), else 0
    uint32_t sourceIp;     ///< sender's IPv4 address, host byte order
    uint16_t sourcePort;   ///< sender's UDP port, host byte order
    bool truncated;        ///< did not fit the buffer (MSG_TRUNC)
    int64_t rxTimeNs;      ///< kernel arrival time, CLOCK_REALTIME ns (kernelTimestamps), else 0
  };

  /// Receives up to `count` (<= maxBatch) messages, blocking until at least one arrives or the
  /// timeout passes. Message i goes to buffers[i] (capacity bytes each) and is described by
  /// messages[i]. noexcept, no allocation.
  Batch receive(uint8_t *const *buffers, unsigned count, uint32_t capacity,
                Message *messages) noexcept;

  /// What discardQueued() found.
  struct Leftover {
    uint64_t datagrams;   ///< read from the socket buffer and discarded
    uint32_t kernelDrops; ///< the socket's cumulative drop count after them
  };

  /// At the stop, after the last receive(), from the receiving thread: reads without blocking
  /// and discards what the socket buffer still holds (at most what it held when called, so a
  /// sender that goes on cannot keep the stop busy), and reads the socket's drop count
  /// (SO_MEMINFO), which SO_RXQ_OVFL reports only with a datagram received: drops after the
  /// last one would be seen by no counter. noexcept, no allocation.
  Leftover discardQueued() noexcept;

private:
  int fd_ = -1;
  uint16_t port_ = 0;
  int grantedRcvbufBytes_ = 0;
  bool rcvbufForced_ = false;
  std::string busyPollProblem_;
  uint32_t kernelDrops_ = 0;
  std::vector<mmsghdr> msgs_;
  std::vector<iovec> iovs_;
  std::vector<sockaddr_in> sources_;
  std::vector<char> control_; ///< one control buffer (SO_RXQ_OVFL, UDP_GRO) per message
};

/// What one received message holds: `datagrams` whole datagrams in its first `bytes` bytes,
/// each `segmentBytes` long but the last (or one datagram if segmentBytes is 0), and
/// `truncated` datagrams that did not fit the buffer and are lost.
struct MessageSplit {
  uint32_t datagrams;
  uint32_t bytes;
  uint32_t truncated;
};

/// Splits a received message (size bytes, GRO segment size or 0, MSG_TRUNC flag). A truncated
/// single datagram is lost whole; of a truncated GRO message the whole segments are kept and
/// the cut one counts as truncated.
[[nodiscard]] constexpr MessageSplit splitMessage(uint32_t size, uint32_t segmentBytes,
                                                  bool truncated) noexcept {
  if (segmentBytes == 0 || segmentBytes >= size) {
    if (truncated) {
      return {0, 0, 1};
    }
    return {1, size, 0};
  }
  if (truncated) {
    const uint32_t whole = size / segmentBytes;
    return {whole, whole * segmentBytes, 1};
  }
  return {(size + segmentBytes - 1) / segmentBytes, size, 0};
}

} // namespace efu
