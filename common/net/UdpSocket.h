// SPDX-License-Identifier: BSD-2-Clause
// The one way the tools open a UDP socket: an IPv4 address parsed with one error text, a socket
// connected to where it sends (or bound to where it listens), closed with its owner.
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <string>

namespace efu::net {

/// address:port as a socket address. Throws std::runtime_error("bad IPv4 address '<address>'").
sockaddr_in ipv4Address(const std::string &address, uint16_t port);

/// A UDP socket (close-on-exec), closed when its owner goes. Move-only.
class UdpSocket {
public:
  /// Connected to address:port: send() goes there, and only datagrams from there arrive.
  /// `sndbufBytes` > 0 asks for that SO_SNDBUF (best effort: sndbufBytes() says what the kernel
  /// granted, which Linux doubles for its bookkeeping and caps at net.core.wmem_max).
  /// Throws std::runtime_error naming the address and the reason.
  static UdpSocket connectedTo(const std::string &address, uint16_t port, int sndbufBytes = 0);
  /// Bound to address:port (a responder). Throws std::runtime_error naming address and reason.
  static UdpSocket boundTo(const std::string &address, uint16_t port);

  UdpSocket() noexcept = default; ///< no socket (fd() is -1)
  UdpSocket(UdpSocket &&other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  UdpSocket &operator=(UdpSocket &&other) noexcept;
  UdpSocket(const UdpSocket &) = delete;
  UdpSocket &operator=(const UdpSocket &) = delete;
  ~UdpSocket();

  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// The send buffer the kernel granted (SO_SNDBUF as read back).
  [[nodiscard]] int sndbufBytes() const noexcept;

private:
  explicit UdpSocket(int fd) noexcept : fd_(fd) {}
  static UdpSocket open();
  int fd_ = -1;
};

} // namespace efu::net
