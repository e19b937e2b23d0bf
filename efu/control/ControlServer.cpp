// SPDX-License-Identifier: BSD-2-Clause
// Non-blocking TCP control server: poll(2) over the listening socket and every client.
#include "efu/control/ControlServer.h"

#include "common/time/Time.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace efu {

namespace {

constexpr int kListenBacklog = 16;
// Input taken from one client per poll() call, so one busy client cannot starve the others.
constexpr size_t kReadBudgetBytes = 64 * 1024;
constexpr size_t kReadChunkBytes = 16 * 1024;

std::string endpoint(const std::string &address, uint16_t port) {
  const bool ipv6 = address.find(':') != std::string::npos;
  return (ipv6 ? "[" + address + "]" : address) + ":" + std::to_string(port);
}

[[noreturn]] void throwErrno(const char *what, const std::string &address, uint16_t port,
                             int error) {
  throw std::runtime_error("control server: " + std::string(what) + " " + endpoint(address, port) +
                           ": " + std::strerror(error));
}

/// Owns a socket until released, so a failing constructor closes it.
class FdGuard {
public:
  explicit FdGuard(int fd) noexcept : fd_(fd) {}
  ~FdGuard() {
    if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  FdGuard(const FdGuard &) = delete;
  FdGuard &operator=(const FdGuard &) = delete;
  [[nodiscard]] int get() const noexcept { return fd_; }
  int release() noexcept { return std::exchange(fd_, -1); }

private:
  int fd_;
};

} // namespace

bool isLoopback(const std::string &address) noexcept {
  in_addr v4{};
  if (::inet_pton(AF_INET, address.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  return ::inet_pton(AF_INET6, address.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

ControlServer::ControlServer(ControlProtocol &protocol, ControlServerOptions options, Stats &stats)
    : protocol_(protocol), options_(std::move(options)),
      connections_(stats.add("control.connections")), commands_(stats.add("control.commands")),
      errors_(stats.add("control.errors")), dropped_(stats.add("control.clients.dropped")),
      evicted_(stats.add("control.clients.evicted")),
      idleClosed_(stats.add("control.clients.idle_closed")),
      authFailures_(stats.add("control.auth_failures")) {
  const std::string &address = options_.address;
  const uint16_t requestedPort = options_.port;

  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
  addrinfo *found = nullptr;
  const std::string service = std::to_string(requestedPort);
  if (const int rc = ::getaddrinfo(address.c_str(), service.c_str(), &hints, &found); rc != 0) {
    throw std::runtime_error("control server: cannot bind " + endpoint(address, requestedPort) +
                             ": not a numeric IPv4/IPv6 address (" + ::gai_strerror(rc) + ")");
  }
  // A numeric host resolves to exactly one address.
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> ai(found, &::freeaddrinfo);

  FdGuard fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) {
    throwErrno("cannot create socket for", address, requestedPort, errno);
  }
  // Lets a restarted daemon bind while old connections sit in TIME_WAIT; a port that another
  // process is listening on still fails with EADDRINUSE.
  const int one = 1;
  if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0) {
    throwErrno("cannot set SO_REUSEADDR on", address, requestedPort, errno);
  }
  if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
    throwErrno("cannot bind", address, requestedPort, errno);
  }
  if (::listen(fd.get(), kListenBacklog) != 0) {
    throwErrno("cannot listen on", address, requestedPort, errno);
  }
  sockaddr_storage bound{};
  socklen_t boundLen = sizeof(bound);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr *>(&bound), &boundLen) != 0) {
    throwErrno("cannot read the bound port of", address, requestedPort, errno);
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
  listenFd_ = fd.release();
}

ControlServer::~ControlServer() {
  for (const Client &client : clients_) {
    ::close(client.fd);
  }
  ::close(listenFd_);
}

void ControlServer::poll(int timeoutMs) {
  std::vector<pollfd> fds;
  fds.reserve(clients_.size() + 1);
  fds.push_back({listenFd_, POLLIN, 0});
  for (const Client &client : clients_) {
    short events = client.peerClosed ? 0 : POLLIN;
    if (pendingBytes(client) > 0) {
      events |= POLLOUT;
    }
    fds.push_back({client.fd, events, 0});
  }

  const int ready = ::poll(fds.data(), fds.size(), timeoutMs);
  if (ready < 0) {
    if (errno == EINTR) {
      return;
    }
    throw std::system_error(errno, std::generic_category(), "control server: poll");
  }

  for (size_t i = 0; i < clients_.size(); ++i) {
    Client &client = clients_[i];
    const short revents = fds[i + 1].revents;
    if (revents == 0) {
      continue;
    }
    if (!client.peerClosed && (revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      readFrom(client);
    }
    if (!client.dead && pendingBytes(client) > 0) {
      writeTo(client);
    }
    if (client.peerClosed && pendingBytes(client) == 0) {
      client.dead = true;
    }
  }

  closeIdleClients(monotonicNs());
  std::erase_if(clients_, [](const Client &client) {
    if (client.dead) {
      ::close(client.fd);
    }
    return client.dead;
  });

  if ((fds[0].revents & POLLIN) != 0) {
    acceptClients();
  }
}

void ControlServer::acceptClients() {
  for (;;) {
    const int fd = ::accept4(listenFd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) {
        continue;
      }
      return; // EAGAIN: none left; EMFILE and friends: try again on the next poll()
    }
    if (clients_.size() >= options_.maxClients) {
      evictQuietest();
    }
    Client &client = clients_.emplace_back();
    client.fd = fd;
    client.lastActiveNs = monotonicNs();
    connections_.add();
  }
}

void ControlServer::evictQuietest() {
  const auto quietest = std::min_element(
      clients_.begin(), clients_.end(),
      [](const Client &a, const Client &b) { return a.lastActiveNs < b.lastActiveNs; });
  if (quietest == clients_.end()) {
    return;
  }
  // Best effort: the line goes out if the client's send buffer has room.
  std::string line(kTooManyClients);
  line += '\n';
  [[maybe_unused]] const ssize_t sent =
      ::send(quietest->fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::close(quietest->fd);
  clients_.erase(quietest);
  evicted_.add();
}

void ControlServer::closeIdleClients(int64_t nowNs) {
  if (options_.idleTimeoutMs <= 0) {
    return;
  }
  for (Client &client : clients_) {
    if (!client.dead && nowNs - client.lastActiveNs >= options_.idleTimeoutMs * kNsPerMs) {
      client.dead = true;
      idleClosed_.add();
    }
  }
}

void ControlServer::readFrom(Client &client) {
  std::array<char, kReadChunkBytes> buffer;
  size_t budget = kReadBudgetBytes;
  while (budget > 0 && !client.dead && !client.peerClosed) {
    const ssize_t got = ::recv(client.fd, buffer.data(), std::min(buffer.size(), budget), 0);
    if (got < 0) {
      if (errno == EINTR) {
        continue;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        client.dead = true; // ECONNRESET and the like: nobody to answer
      }
      return;
    }
    if (got == 0) {
      // An unterminated last line is never executed: it may be a truncated command.
      client.peerClosed = true;
      client.input.clear();
      return;
    }
    budget -= static_cast<size_t>(got);
    client.lastActiveNs = monotonicNs();

    std::string_view chunk(buffer.data(), static_cast<size_t>(got));
    while (!chunk.empty() && !client.dead && !client.peerClosed) {
      const size_t newline = chunk.find('\n');
      const std::string_view piece = chunk.substr(0, newline);
      chunk = newline == std::string_view::npos ? std::string_view{} : chunk.substr(newline + 1);
      if (client.discarding) {
        client.discarding = newline == std::string_view::npos;
        continue;
      }
      if (client.input.size() + piece.size() > options_.maxLineBytes) {
        client.input.clear();
        client.discarding = newline == std::string_view::npos;
        errors_.add();
        queueReply(client, kLineTooLong);
        continue;
      }
      client.input.append(piece);
      if (newline != std::string_view::npos) {
        handleLine(client, client.input);
        client.input.clear();
      }
    }
  }
}

void ControlServer::handleLine(Client &client, std::string_view line) {
  commands_.add();
  const std::string reply = protocol_.handle(line, client.session);
  if (ControlProtocol::isError(reply)) {
    errors_.add();
  }
  queueReply(client, reply);
  if (client.session.closeAfterReply && !client.dead) {
    // A wrong secret: answer, then stop listening to this client (guessing costs a connection).
    authFailures_.add();
    client.peerClosed = true;
    client.input.clear();
    client.discarding = false;
  }
}

void ControlServer::queueReply(Client &client, std::string_view reply) {
  client.output.append(reply);
  client.output += '\n';
  if (pendingBytes(client) > options_.maxPendingReplyBytes) {
    writeTo(client); // a client that reads may just be behind by one burst
    if (!client.dead && pendingBytes(client) > options_.maxPendingReplyBytes) {
      client.dead = true;
      dropped_.add();
    }
  }
}

void ControlServer::writeTo(Client &client) {
  while (pendingBytes(client) > 0) {
    const ssize_t sent = ::send(client.fd, client.output.data() + client.outputOffset,
                                pendingBytes(client), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) {
        continue;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        client.dead = true; // EPIPE, ECONNRESET: the reader is gone
      }
      break;
    }
    client.outputOffset += static_cast<size_t>(sent);
  }
  if (pendingBytes(client) == 0) {
    client.output.clear();
    client.outputOffset = 0;
  } else if (client.outputOffset >= kReadBudgetBytes) {
    client.output.erase(0, client.outputOffset);
    client.outputOffset = 0;
  }
}

} // namespace efu
