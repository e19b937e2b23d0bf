// SPDX-License-Identifier: BSD-2-Clause
// Counters to Graphite (carbon plaintext protocol) from a thread of its own.
#pragma once

#include "common/stats/Stats.h"

#include <spdlog/logger.h>

#include <condition_variable>
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
};

/// Sends every counter as "<prefix><name> <value> <unix seconds>\n" once per stats interval.
///
/// publish() (main thread) takes a snapshot of the registry and hands it to the sender thread;
/// it never blocks on the network, so receiving and processing cannot be held up by Graphite.
/// The sender connects (2 s timeout), writes, and on any failure closes the connection and
/// retries with a back-off of 1 s doubling to 30 s, keeping the newest kMaxPending intervals
/// meanwhile (older ones are dropped and counted). Counters: graphite.sent (intervals written),
/// graphite.failures (failed connects and writes), graphite.dropped (intervals given up while
/// Graphite was away).
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
  bool connect();
  bool sendAll(const std::string &text);
  bool peerClosed();
  void disconnect();

  GraphiteOptions options_;
  const Stats &stats_;
  spdlog::logger &log_;
  Counter &sent_;
  Counter &failures_;
  Counter &dropped_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::string> pending_;
  bool stop_ = false;
  int fd_ = -1;
  std::thread thread_;
};

} // namespace efu
