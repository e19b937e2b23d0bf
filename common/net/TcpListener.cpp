// SPDX-License-Identifier: BSD-2-Clause
// A listening TCP socket on a numeric address.
#include "common/net/TcpListener.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace efu {

bool isLoopback(const std::string &address) noexcept {
  in_addr v4{};
  if (::inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  return ::inet_pton(AF_INET6, address.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

std::string endpoint(const std::string &address, uint16_t port) {
  const bool ipv6 = address.find(':') != std::string::npos;
  return (ipv6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

TcpListener::TcpListener(const std::string &who, const std::string &address, uint16_t port,
                         int backlog) {
  const auto fail = [&](const char *what, int error) {
    if (fd_ >= 0) {
      ::close(fd_);
    }
    throw std::runtime_error(who + ": " + what + " " + endpoint(address, port) + ": " +
                             std::strerror(error));
  };
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
  addrinfo *found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc = ::getaddrinfo(address.c_str(), service.c_str(), &hints, &found); rc != 0) {
    throw std::runtime_error(who + ": cannot bind " + endpoint(address, port) +
                             ": not a numeric IPv4/IPv6 address (" + ::gai_strerror(rc) + ")");
  }
  // A numeric host resolves to exactly one address.
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> ai(found, &::freeaddrinfo);
  fd_ = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    fail("cannot create socket for", errno);
  }
  const int one = 1;
  if (::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
    fail("cannot set SO_REUSEADDR on", errno);
  }
  if (::bind(fd_, ai->ai_addr, ai->ai_addrlen) != 0) {
    fail("cannot bind", errno);
  }
  if (::listen(fd_, backlog) != 0) {
    fail("cannot listen on", errno);
  }
  sockaddr_storage bound{};
  socklen_t boundLen = sizeof(bound);
  if (::getsockname(fd_, reinterpret_cast<sockaddr *>(&bound), &boundLen) != 0) {
    fail("cannot read the bound port of", errno);
  }
  if (bound.ss_family == AF_INET6) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, &bound, sizeof(in6));
    port_ = ntohs(in6.sin6_port);
  } else {
    sockaddr_in in4{};
    std::memcpy(&in4, &bound, sizeof(in4));
    port_ = ntohs(in4.sin_port);
  }
}

TcpListener::~TcpListener() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

} // namespace efu
