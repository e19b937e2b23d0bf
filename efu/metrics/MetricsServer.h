// SPDX-License-Identifier: BSD-2-Clause
// GET /metrics over HTTP: the counters for Prometheus, from a thread of its own.
#pragma once

#include "common/net/ClientTable.h"
#include "common/net/TcpListener.h"
#include "common/stats/Stats.h"
#include "efu/metrics/PrometheusText.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace efu::metrics {

/// Where and how the metrics server listens. Defaults are the daemon's.
struct MetricsServerOptions {
  std::string address = "127.0.0.1"; ///< numeric IPv4 or IPv6
  uint16_t port = 0;                 ///< 0: the kernel picks one (see MetricsServer::port())
  CommonLabels labels;               ///< instrument and region of every series
  /// Connections at once. A further one is served too: the connection quiet longest gets 503
  /// and is closed (the control port's rule, ClientTable), so idle connections cannot keep a
  /// scrape out.
  size_t maxClients = 16;
  size_t maxRequestBytes = 8192;     ///< request line and headers; a longer request gets 431
  int64_t timeoutMs = 5000; ///< to send the whole request (else 408), and again to take the reply
};

/// A minimal HTTP/1.1 server for Prometheus: `GET /metrics` answers 200 with the exposition
/// (Content-Type: text/plain; version=0.0.4) of every counter in `stats`; any other path 404,
/// any other method 405, a malformed request 400. Every connection is closed after its one
/// response (no keep-alive, no pipelining, no request bodies).
///
/// Why not cpp-httplib (Debian's libcpp-httplib-dev): it serves each connection on a blocking
/// worker of a pool of at least 8 threads, a keep-alive connection holding its worker, with an
/// unbounded queue of accepted connections behind the pool; its limits are settings to get
/// right. efu needs one path, one method and a request of a few hundred bytes, so one thread
/// polling non-blocking sockets, with the bounds written here (request size, time to send it,
/// connection count), is less code to trust and plainly cannot grow.
///
/// It never touches the data path: the thread reads counters through Stats::snapshot(), whose
/// lock only registration and other readers take (the rx and processing threads write their
/// counters without it). Counters (written by its thread only): metrics.scrapes (200 responses
/// to GET /metrics), metrics.errors (error responses: 400, 404, 405, 408, 431, 503),
/// metrics.clients.evicted (connections closed with 503 to make room for a newer one).
///
/// Ownership: `stats` must outlive the server. The destructor stops and joins the thread.
class MetricsServer {
public:
  /// Binds, registers its counters and starts serving. Throws std::runtime_error naming address,
  /// port and reason when it cannot bind; StatsError when its counters are registered already.
  MetricsServer(Stats &stats, MetricsServerOptions options);
  ~MetricsServer();
  MetricsServer(const MetricsServer &) = delete;
  MetricsServer &operator=(const MetricsServer &) = delete;

  /// The bound port (the kernel's choice when the options asked for 0).
  [[nodiscard]] uint16_t port() const noexcept { return listener_.port(); }
  [[nodiscard]] const MetricsServerOptions &options() const noexcept { return options_; }

private:
  enum class Phase { Request, Response, Drain };
  struct Client {
    int fd = -1;
    int64_t lastActiveNs = 0; // accepted, or last bytes received or sent
    bool dead = false;
    Phase phase = Phase::Request;
    std::string data;       // the request so far, then the response
    size_t sent = 0;        // bytes of the response already sent
    size_t drained = 0;     // bytes discarded after the response
    int64_t deadlineNs = 0; // of the current phase
  };

  void run();
  void accept();
  void read(Client &client);
  void handle(Client &client);
  /// Queues the response (the exposition type for 200, plain text otherwise) and counts it.
  void respond(Client &client, int status, std::string_view body);
  void write(Client &client);
  void drain(Client &client);
  void expire(Client &client, int64_t nowNs);

  Stats &stats_;
  MetricsServerOptions options_;
  Counter &scrapes_;
  Counter &errors_;
  Counter &evicted_;
  TcpListener listener_;
  int wakeFd_ = -1; // eventfd: the destructor's stop signal
  // Eviction shared with the control port; no idle timeout: the phase deadlines are stricter.
  ClientTable<Client> clients_;
  std::thread thread_;
};

} // namespace efu::metrics
