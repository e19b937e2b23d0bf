// SPDX-License-Identifier: BSD-2-Clause
// Helpers for integration tests: real child processes, free ports, a control-port client.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace efu::testkit {

/// A child process started with execv; stdout and stderr go to a file read by output().
/// The destructor SIGKILLs a child that is still running (tests must not leak processes).
class Process {
public:
  /// `pendingSignals` are blocked and raised in the child before exec, so they are pending
  /// when the program starts (a stop asked while it starts up; the mask survives exec).
  explicit Process(std::vector<std::string> argv, const std::vector<int> &pendingSignals = {});
  ~Process();
  Process(const Process &) = delete;
  Process &operator=(const Process &) = delete;

  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  void signal(int sig) const;
  /// Waits for the exit; returns the exit code (128+signal if killed), nullopt on timeout.
  std::optional<int> wait(std::chrono::milliseconds timeout);
  [[nodiscard]] bool running();
  /// Everything the child wrote to stdout and stderr so far.
  [[nodiscard]] std::string output() const;

private:
  pid_t pid_ = -1;
  std::optional<int> exitCode_;
  std::string outputPath_;
};

/// A running efu-broker (the development Kafka broker) in its own temporary folder.
/// The constructor waits for its bootstrap file and throws std::runtime_error (with the
/// broker's output) if it does not appear; the destructor stops it with SIGTERM.
class DevBroker {
public:
  explicit DevBroker(const std::string &binary, const std::vector<std::string> &extraArgs = {});
  ~DevBroker();
  DevBroker(const DevBroker &) = delete;
  DevBroker &operator=(const DevBroker &) = delete;

  [[nodiscard]] const std::string &bootstrap() const noexcept { return bootstrap_; }
  /// Stops the broker; returns its exit code (nullopt if it did not stop in time).
  std::optional<int> stop();

private:
  std::string dir_;
  std::string bootstrap_;
  std::unique_ptr<Process> process_;
};

/// A port that was free on 127.0.0.1 a moment ago (bind to 0, read, close).
uint16_t freeUdpPort();
uint16_t freeTcpPort();

/// Sends `line` to the control server on one connection and returns the reply line (without
/// newline); with several lines ("AUTH x\nEXIT"), their replies joined by "\n". "" when the
/// connection fails.
std::string control(uint16_t port, const std::string &line);

/// Sends `request` as is to 127.0.0.1:port on one connection (then half-closes it if asked)
/// and returns everything the server sends until it closes (5 s receive timeout). "" when the
/// connection fails.
std::string tcpExchange(uint16_t port, const std::string &request, bool halfClose = false);

/// An HTTP response split into its parts; status 0 when there was none.
struct HttpResponse {
  int status = 0;
  std::string head; ///< status line and headers, up to the empty line
  std::string body;
  /// The value of header `name` (case-insensitive), "" if absent.
  [[nodiscard]] std::string header(const std::string &name) const;
};
/// Splits what tcpExchange() returned.
HttpResponse parseHttpResponse(const std::string &raw);
/// GET `target` from 127.0.0.1:port as HTTP/1.0 (so the server closes after the response
/// and sends no chunked body).
HttpResponse httpGet(uint16_t port, const std::string &target);

/// Polls `condition` every 10 ms until it is true or `timeout` passes; returns its last value.
bool eventually(const std::function<bool()> &condition,
                std::chrono::milliseconds timeout = std::chrono::seconds(20));

/// Value of counter `name` over the control port (STAT_GET_NAME), nullopt if unavailable.
std::optional<int64_t> counter(uint16_t cmdPort, const std::string &name);

/// Sends datagrams to 127.0.0.1:port from one socket.
class UdpSender {
public:
  UdpSender();
  ~UdpSender();
  UdpSender(const UdpSender &) = delete;
  UdpSender &operator=(const UdpSender &) = delete;
  void send(uint16_t port, const void *data, size_t size) const;
  /// A udp-module datagram: u64 sequence (+ u64 timestamp when size >= 16), zero filler.
  void sendSequence(uint16_t port, uint64_t seq, size_t size = 64) const;

private:
  int fd_;
};

} // namespace efu::testkit
