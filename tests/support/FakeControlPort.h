// SPDX-License-Identifier: BSD-2-Clause
// A stand-in for efu's control port that answers what a test wants, however wrong: for testing
// the clients (ControlClient, efu-dump --report) against replies efu would never send.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <thread>

namespace efu::testkit {

/// Listens on 127.0.0.1 (a port of the kernel's choice); for each connection, reads up to the
/// first "\n" and sends `reply`, then `repeat` more copies of `repeatChunk`, then closes its
/// side and waits for the client to close. Stops sending early when the client goes away.
/// Serves connections one after another until destroyed.
class FakeControlPort {
public:
  explicit FakeControlPort(std::string reply, std::string repeatChunk = "", size_t repeat = 0)
      : reply_(std::move(reply)), chunk_(std::move(repeatChunk)), repeat_(repeat) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0 ||
        ::listen(fd_, 4) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr *>(&addr), &len) != 0) {
      throw std::runtime_error("FakeControlPort: cannot listen on 127.0.0.1");
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeControlPort() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  FakeControlPort(const FakeControlPort &) = delete;
  FakeControlPort &operator=(const FakeControlPort &) = delete;

  [[nodiscard]] uint16_t port() const noexcept { return port_; }
  /// The request line of the last connection (without "\n").
  [[nodiscard]] std::string request() const {
    while (!served_) {
      std::this_thread::yield();
    }
    return request_;
  }

private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) != 1) {
        continue; // look at stop_ again
      }
      const int client = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client < 0) {
        continue;
      }
      std::string request;
      char byte = 0;
      while (::recv(client, &byte, 1, 0) == 1 && byte != '\n') {
        request += byte;
      }
      request_ = request;
      served_ = true;
      if (send(client, reply_)) {
        for (size_t i = 0; i < repeat_ && send(client, chunk_); ++i) {
        }
      }
      // Closing with unread input would reset the connection and could destroy the reply in
      // flight: say "no more", then wait for the client to close (or the test to end).
      ::shutdown(client, SHUT_WR);
      while (!stop_) {
        pollfd c{client, POLLIN, 0};
        if (::poll(&c, 1, 20) == 1 && ::recv(client, &byte, 1, 0) <= 0) {
          break;
        }
      }
      ::close(client);
    }
  }
  /// False once the client has gone (EPIPE, ECONNRESET).
  static bool send(int fd, const std::string &text) {
    for (size_t offset = 0; offset < text.size();) {
      const ssize_t n = ::send(fd, text.data() + offset, text.size() - offset, MSG_NOSIGNAL);
      if (n <= 0) {
        return false;
      }
      offset += static_cast<size_t>(n);
    }
    return true;
  }

  std::string reply_;
  std::string chunk_;
  size_t repeat_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> served_{false};
  std::string request_;
  std::thread thread_;
};

} // namespace efu::testkit
