// SPDX-License-Identifier: BSD-2-Clause
// UDP sockets of the tools (udpgen, readoutgen, udpecho).
#include "common/net/UdpSocket.h"

#include <arpa/inet.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace efu::net {

sockaddr_in ipv4Address(const std::string &address, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1) {
    throw std::runtime_error("bad IPv4 address '" + address + "'");
  }
  return a;
}

UdpSocket UdpSocket::open() {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    throw std::runtime_error(std::string("cannot create UDP socket: ") + std::strerror(errno));
  }
  return UdpSocket(fd);
}

UdpSocket UdpSocket::connectedTo(const std::string &address, uint16_t port, int sndbufBytes) {
  const sockaddr_in to = ipv4Address(address, port);
  UdpSocket s = open();
  if (sndbufBytes > 0) {
    // Best effort: the caller compares sndbufBytes() with what it asked for.
    (void)setsockopt(s.fd_, SOL_SOCKET, SO_SNDBUF, &sndbufBytes, sizeof(sndbufBytes));
  }
  if (connect(s.fd_, reinterpret_cast<const sockaddr *>(&to), sizeof(to)) != 0) {
    throw std::runtime_error("cannot connect UDP socket to " + address + ":" +
                             std::to_string(port) + ": " + std::strerror(errno));
  }
  return s;
}

UdpSocket UdpSocket::boundTo(const std::string &address, uint16_t port) {
  const sockaddr_in local = ipv4Address(address, port);
  UdpSocket s = open();
  if (bind(s.fd_, reinterpret_cast<const sockaddr *>(&local), sizeof(local)) != 0) {
    throw std::runtime_error("cannot bind UDP socket to " + address + ":" + std::to_string(port) +
                             ": " + std::strerror(errno));
  }
  return s;
}

UdpSocket &UdpSocket::operator=(UdpSocket &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) {
      close(fd_);
    }
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

UdpSocket::~UdpSocket() {
  if (fd_ >= 0) {
    close(fd_);
  }
}

int UdpSocket::sndbufBytes() const noexcept {
  int bytes = 0;
  socklen_t len = sizeof(bytes);
  return getsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &bytes, &len) == 0 ? bytes : 0;
}

} // namespace efu::net
