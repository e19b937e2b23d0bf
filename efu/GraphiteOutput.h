// SPDX-License-Identifier: BSD-2-Clause
// Counters to Graphite (carbon plaintext protocol) from a thread of its own.
#pragma once

#include "common/stats/Stats.h"
#include "common/system/LogRateLimit.h"

#include <spdlog/logger.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace efu {

struct GraphiteOptions {
  std::string host;     ///< carbon-cache (or relay) host name or address; "" = off
  uint16_t port = 2003; ///< its plaintext line receiver
  std::string prefix;   ///< metric prefix including the final dot, e.g. "efu.loki.0."
  int firstBackoffMs = 1000;  ///< wait after the first failure, doubling ...
  int maxBackoffMs = 30'000;  ///< ... up to this
  int logIntervalMs = 10'000; ///< at most one problem line per interval (as Kafka's problems)
};

/// Sends every counter as "<prefix><name> <value> <unix seconds>\n" once per stats interval.
///
/// publish() (main thread) takes a snapshot of the registry and hands it to the sender thread;
/// it never blocks on the network, so receiving and processing cannot be held up by Graphite.
/// The sender connects (2 s timeout) and writes; on any failure it closes the connection and
/// retries with a back-off of 1 s doubling to 30 s, keeping the newest kMaxPending intervals
/// meanwhile (older ones are dropped and counted).
///
/// A write that succeeds only means the kernel took the bytes: a carbon that accepts and then
/// resets the connection (or closes it) discards them. So an interval written is confirmed only
/// when the connection is still open and error-free at the sender's next round (the next
/// interval's publish() or the retry after a failure), watched meanwhile for a reset or close;
/// if it was lost, the intervals written on it since the last confirmation count as one failure
/// and are sent again on a new connection. Counters:
///   graphite.sent      intervals confirmed (lags the intervals written by one round; the last
///                      interval written before stopping is never confirmed)
///   graphite.failures  failed attempts: a connect or write that failed, a connection reset or
///                      closed by carbon with intervals on it unconfirmed
///   graphite.dropped   intervals given up: more than kMaxPending were waiting
/// Problems are logged at most once per logIntervalMs (the first at once), with the count of
/// the lines held back; "sending again" is logged once a confirmation follows trouble.
///
/// Thread rules: publish() from one thread; the destructor stops the sender (it waits at most
/// for one connect or write timeout). `stats` and `log` must outlive it.
class GraphiteOutput {
public:
  static constexpr size_t kMaxPending = 600; ///< intervals kept while Graphite is away

  /// Registers its counters in `stats` and sends all of them (its own included).
  GraphiteOutput(GraphiteOptions options, Stats &stats, spdlog::logger &log);
  ~GraphiteOutput();
  GraphiteOutput(const GraphiteOutput &) = delete;
  GraphiteOutput &operator=(const GraphiteOutput &) = delete;

  /// Snapshot of every counter stamped with `unixSeconds`, queued for the sender.
  void publish(int64_t unixSeconds);
  [[nodiscard]] const GraphiteOptions &options() const noexcept { return options_; }

private:
  void run();
  /// Waits for a publish(), the stop, or (connected) the connection's end; `timeoutMs` -1 = no
  /// limit. Returns false when stopping.
  bool waitForWork(int timeoutMs);
  /// Waits out the back-off (publish() does not cut it short); false when stopping.
  bool backOff(std::chrono::steady_clock::duration wait);
  /// "" while the connection looks healthy, else what ended it.
  std::string connectionLost();
  /// The unconfirmed intervals go back to the front of the queue; one failure.
  void lose(const std::string &why);
  std::string connect();
  std::string sendAll(const std::string &text);
  void disconnect();
  /// A rate-limited warning; arms "sending again".
  void problem(const std::string &what);
  void recovered();
  void reportSuppressed();
  /// Puts `intervals` back at the front of the queue, oldest first (under the lock).
  void requeue(std::deque<std::string> &intervals);

  GraphiteOptions options_;
  const Stats &stats_;
  spdlog::logger &log_;
  Counter &sent_;
  Counter &failures_;
  Counter &dropped_;
  std::mutex mutex_;
  std::deque<std::string> pending_; // published, not yet written (under mutex_)
  bool stop_ = false;               // under mutex_
  int wakeFd_ = -1;                 // eventfd: publish() and the destructor wake the sender
  // The sender thread's own:
  int fd_ = -1;
  std::deque<std::string> unconfirmed_; // written on fd_, not yet confirmed
  bool troubled_ = false;
  LogRateLimit problemLog_;
  std::thread thread_;
};

} // namespace efu
