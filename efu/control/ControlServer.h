// SPDX-License-Identifier: BSD-2-Clause
// Non-blocking TCP server for the EFU control protocol, driven by poll() from the main thread.
#pragma once

#include "common/net/ClientTable.h"
#include "common/net/TcpListener.h"
#include "common/stats/Counter.h"
#include "common/stats/Stats.h"
#include "efu/control/ControlProtocol.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace efu {

/// Where and how the control server listens. Defaults are the daemon's defaults.
struct ControlServerOptions {
  /// Numeric IPv4 or IPv6 address to bind (the daemon's --cmdaddr takes IPv4 only, like its
  /// other address options; IPv6 is for other users of the class). Loopback by default.
  std::string address = "127.0.0.1";
  /// TCP port; 0 asks the kernel for a free one (see ControlServer::port()).
  uint16_t port = 8888;
  /// Connected clients served at once. A further one is served too: the client that has been
  /// quiet longest gets kTooManyClients and is closed, so idle connections cannot lock others out.
  size_t maxClients = 32;
  /// A client that sends nothing for this long is closed (0 = never).
  int64_t idleTimeoutMs = 60'000;
  /// Longest request line in bytes, without its "\n". A longer line gets kLineTooLong once and
  /// is discarded up to the next "\n"; the connection stays open.
  size_t maxLineBytes = 4096;
  /// Replies queued for a client that does not read them; beyond this the client is dropped.
  size_t maxPendingReplyBytes = 256 * 1024;
};

/// TCP server for the EFU text protocol (docs/control.md): line-based, one reply line per
/// request line, several clients at once.
///
/// It owns no thread. The daemon's main thread calls poll() in its loop; everything (accepting,
/// reading, calling the protocol and its callbacks, writing) happens inside poll(). Sockets are
/// non-blocking, so a slow or silent client never stalls the caller: its replies are queued up to
/// maxPendingReplyBytes, then it is dropped and counted.
///
/// Counters (registered in the given registry, written only from the poll() thread):
/// control.connections (clients accepted and served), control.commands (request lines handled),
/// control.errors (error replies, including kLineTooLong), control.clients.dropped (clients
/// dropped for not reading their replies), control.clients.evicted (closed to make room over
/// maxClients), control.clients.idle_closed (closed after idleTimeoutMs without a request),
/// control.auth_failures (wrong AUTH secrets; each closes its connection).
///
/// Ownership: keeps a reference to `protocol` (and `stats`), which must outlive the server; owns
/// the listening and client sockets and closes them in its destructor. Not copyable or movable.
/// Thread rules: all member functions from one thread.
class ControlServer {
public:
  static constexpr std::string_view kLineTooLong = "Error: <BADSIZE>";
  static constexpr std::string_view kTooManyClients = "Error: <TOOMANYCLIENTS>";

  /// Binds and listens. Throws std::runtime_error naming address, port and the errno text
  /// (e.g. "Address already in use") if the address is not numeric or cannot be bound, and
  /// StatsError if the control counters are already registered in `stats`.
  ControlServer(ControlProtocol &protocol, ControlServerOptions options, Stats &stats);
  ~ControlServer();
  ControlServer(const ControlServer &) = delete;
  ControlServer &operator=(const ControlServer &) = delete;

  /// The bound port (the kernel's choice when the options asked for port 0).
  [[nodiscard]] uint16_t port() const noexcept { return listener_.port(); }
  [[nodiscard]] const ControlServerOptions &options() const noexcept { return options_; }
  /// Clients currently connected.
  [[nodiscard]] size_t clientCount() const noexcept { return clients_.size(); }

  /// Waits up to timeoutMs (0 = just look, -1 = until something happens) for socket activity
  /// and handles whatever is ready. Returns early on a signal (EINTR). Throws std::system_error
  /// only if poll(2) itself fails for another reason.
  void poll(int timeoutMs);

private:
  struct Client {
    int fd = -1;
    std::string input;       // bytes of the current, not yet complete line
    bool discarding = false; // inside an over-long line: drop bytes up to the next '\n'
    std::string output;      // replies not yet accepted by the kernel
    size_t outputOffset = 0; // bytes of `output` already sent
    bool peerClosed = false; // EOF seen: flush replies, then close
    bool dead = false;       // close at the end of this poll()
    int64_t lastActiveNs = 0; // accepted or last bytes received
    ControlSession session;
  };

  void acceptClients();
  void readFrom(Client &client);
  void handleLine(Client &client, std::string_view line);
  void queueReply(Client &client, std::string_view reply);
  void writeTo(Client &client);
  [[nodiscard]] size_t pendingBytes(const Client &client) const noexcept {
    return client.output.size() - client.outputOffset;
  }

  ControlProtocol &protocol_;
  ControlServerOptions options_;
  ClientTable<Client> clients_; // the idle timeout and eviction rule shared with MetricsServer
  Counter &connections_;
  Counter &commands_;
  Counter &errors_;
  Counter &dropped_;
  Counter &evicted_;
  Counter &idleClosed_;
  Counter &authFailures_;
  TcpListener listener_; // last: bound once the counters are registered, as before
};

} // namespace efu
