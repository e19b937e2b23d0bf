// SPDX-License-Identifier: BSD-2-Clause
// A listening TCP socket on a numeric address: what the control and metrics servers share.
#pragma once

#include <cstdint>
#include <string>

namespace efu {

/// True if `address` (numeric IPv4 or IPv6) is on loopback: 127.0.0.0/8 or ::1.
[[nodiscard]] bool isLoopback(const std::string &address) noexcept;

/// "address:port", or "[address]:port" for IPv6, for messages.
[[nodiscard]] std::string endpoint(const std::string &address, uint16_t port);

/// A non-blocking, close-on-exec TCP socket listening on a numeric IPv4 or IPv6 address.
/// Owns the descriptor. Not copyable.
class TcpListener {
public:
  /// Binds (SO_REUSEADDR, so a restarted daemon binds while old connections sit in TIME_WAIT;
  /// a port another process listens on still fails) and listens. Port 0 asks the kernel for a
  /// free one. Throws std::runtime_error "<who>: cannot bind <address>:<port>: <errno text>"
  /// (or why the address is not numeric).
  TcpListener(const std::string &who, const std::string &address, uint16_t port, int backlog);
  ~TcpListener();
  TcpListener(const TcpListener &) = delete;
  TcpListener &operator=(const TcpListener &) = delete;

  [[nodiscard]] int fd() const noexcept { return fd_; }
  /// The bound port (the kernel's choice when asked for port 0).
  [[nodiscard]] uint16_t port() const noexcept { return port_; }

private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

} // namespace efu
