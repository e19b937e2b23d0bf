// SPDX-License-Identifier: BSD-2-Clause
// The clients of a poll-driven TCP server, and the rule efu's servers (the control port and
// /metrics) share so that connections that say nothing cannot lock out the ones that do.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace efu {

/// The clients of one server, with one rule for all of efu's TCP servers:
///
///  - places are limited (`maxClients`), but a newcomer is never turned away: when every place
///    is taken, the client that has been quiet longest (earliest `lastActiveNs`) is told so, in
///    the server's words, and closed, and the newcomer takes its place. Idle connections cannot
///    lock anyone out; a client that is busy is never the one to go while a quieter one is there.
///  - a client quiet for `idleTimeoutMs` (0 or beyond 292 years = never) is handed to the server
///    to close (the control port closes it; a server may answer it first).
///
/// `Client` has `int fd`, `int64_t lastActiveNs` (the server sets it whenever the client does
/// something: connects, sends, takes bytes of a reply) and `bool dead` (the server sets it;
/// sweep() closes and removes). The table owns the descriptors: sweep() and the destructor close
/// them. All member functions from the server's one thread.
template <typename Client> class ClientTable {
public:
  ClientTable(size_t maxClients, int64_t idleTimeoutMs)
      : maxClients_(maxClients),
        idleTimeoutNs_(idleTimeoutMs > INT64_MAX / 1'000'000 ? 0 : idleTimeoutMs * 1'000'000) {}
  ~ClientTable() {
    for (const Client &client : clients_) {
      ::close(client.fd);
    }
  }
  ClientTable(const ClientTable &) = delete;
  ClientTable &operator=(const ClientTable &) = delete;

  [[nodiscard]] std::vector<Client> &clients() noexcept { return clients_; }
  [[nodiscard]] const std::vector<Client> &clients() const noexcept { return clients_; }
  [[nodiscard]] size_t size() const noexcept { return clients_.size(); }

  /// Takes the accepted `fd` as a client active at `nowNs` and returns it. With every place
  /// taken, first makes room: `goodbye(quietest)` (best effort; must not block), then its
  /// descriptor is closed and it is removed; `evicted` is set then. References to clients taken
  /// before are invalid afterwards.
  template <typename Goodbye>
  Client &admit(int fd, int64_t nowNs, Goodbye &&goodbye, bool &evicted) {
    evicted = false;
    if (clients_.size() >= maxClients_ && !clients_.empty()) {
      const auto quietest = std::min_element(
          clients_.begin(), clients_.end(),
          [](const Client &a, const Client &b) { return a.lastActiveNs < b.lastActiveNs; });
      std::forward<Goodbye>(goodbye)(*quietest);
      ::close(quietest->fd);
      clients_.erase(quietest);
      evicted = true;
    }
    Client &client = clients_.emplace_back();
    client.fd = fd;
    client.lastActiveNs = nowNs;
    return client;
  }

  /// Hands each live client quiet for the idle timeout to `onIdle(client)`, which marks it dead
  /// (or answers it and lets it finish). Returns how many. Nothing with a timeout of 0.
  template <typename OnIdle> size_t expireIdle(int64_t nowNs, OnIdle &&onIdle) {
    size_t expired = 0;
    if (idleTimeoutNs_ <= 0) {
      return expired;
    }
    for (Client &client : clients_) {
      if (!client.dead && nowNs - client.lastActiveNs >= idleTimeoutNs_) {
        onIdle(client);
        ++expired;
      }
    }
    return expired;
  }

  /// Closes and removes the clients marked dead.
  void sweep() {
    std::erase_if(clients_, [](const Client &client) {
      if (client.dead) {
        ::close(client.fd);
      }
      return client.dead;
    });
  }

private:
  size_t maxClients_;
  int64_t idleTimeoutNs_;
  std::vector<Client> clients_;
};

} // namespace efu
