// SPDX-License-Identifier: BSD-2-Clause
// Non-blocking TCP control server: poll(2) over the listening socket and every client.
#include "efu/control/ControlServer.h"

#include "common/time/Time.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace efu {

namespace {

constexpr int kListenBacklog = 16;
// Input taken from one client per poll() call, so one busy client cannot starve the others.
constexpr size_t kReadBudgetBytes = 64 * 1024;
constexpr size_t kReadChunkBytes = 16 * 1024;

} // namespace

ControlServer::ControlServer(ControlProtocol &protocol, ControlServerOptions options, Stats &stats)
    : protocol_(protocol), options_(std::move(options)),
      clients_(options_.maxClients, options_.idleTimeoutMs),
      connections_(stats.add("control.connections")), commands_(stats.add("control.commands")),
      errors_(stats.add("control.errors")), dropped_(stats.add("control.clients.dropped")),
      evicted_(stats.add("control.clients.evicted")),
      idleClosed_(stats.add("control.clients.idle_closed")),
      authFailures_(stats.add("control.auth_failures")),
      listener_("control server", options_.address, options_.port, kListenBacklog) {}

ControlServer::~ControlServer() = default; // the client table closes the clients

void ControlServer::poll(int timeoutMs) {
  std::vector<Client> &clients = clients_.clients();
  std::vector<pollfd> fds;
  fds.reserve(clients.size() + 1);
  fds.push_back({listener_.fd(), POLLIN, 0});
  for (const Client &client : clients) {
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

  for (size_t i = 0; i < clients.size(); ++i) {
    Client &client = clients[i];
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

  idleClosed_.add(static_cast<int64_t>(
      clients_.expireIdle(monotonicNs(), [](Client &client) { client.dead = true; })));
  clients_.sweep();

  if ((fds[0].revents & POLLIN) != 0) {
    acceptClients();
  }
}

void ControlServer::acceptClients() {
  for (;;) {
    const int fd = ::accept4(listener_.fd(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) {
        continue;
      }
      return; // EAGAIN: none left; EMFILE and friends: try again on the next poll()
    }
    bool evicted = false;
    (void)clients_.admit(
        fd, monotonicNs(),
        [](const Client &quietest) {
          // Best effort: the line goes out if the client's send buffer has room.
          std::string line(kTooManyClients);
          line += '\n';
          [[maybe_unused]] const ssize_t sent =
              ::send(quietest.fd, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        },
        evicted);
    if (evicted) {
      evicted_.add();
    }
    connections_.add();
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
