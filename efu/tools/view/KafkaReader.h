// SPDX-License-Identifier: BSD-2-Clause
// efu-view's Kafka reader: one thread that consumes the topics into a ViewState.
#pragma once

#include "common/kafka/RdKafka.h"
#include "efu/tools/view/ViewState.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace efu::tools::view {

/// What the reader reads, from the command line.
struct ReaderOptions {
  std::string brokers;
  std::vector<std::string> topics;
  std::string from = "end";          ///< "beginning" or "end" of each partition
  std::vector<std::string> settings; ///< -X key=value
};

/// Consumes every partition of the topics (assigned directly, no consumer group, nothing
/// committed, as efu-dump) on a thread of its own: each message goes to ViewState::ingest(), and
/// ViewState::tick() runs at least every 100 ms with or without messages. A second thread looks
/// the topics up (a lookup can wait behind a fetch for fetch.wait.max.ms); a topic that does not
/// exist yet is looked up again every half second (said once in the log) and read from --from
/// once it appears. The broker's state goes to ViewState::setBroker(): librdkafka's error
/// callback says when every broker is down, its statistics (once a second) when one is up again.
class KafkaReader {
public:
  /// Creates the consumer; throws std::runtime_error naming a setting librdkafka refused.
  KafkaReader(ReaderOptions options, ViewState &state);
  /// Stops and joins the threads, closes the consumer.
  ~KafkaReader();
  KafkaReader(const KafkaReader &) = delete;
  KafkaReader &operator=(const KafkaReader &) = delete;

  void start();
  /// Asks the threads to stop and waits for them (at most one poll, 50 ms, or one metadata
  /// request: fetch.wait.max.ms + 500 ms, at least 1 s).
  void stop();

private:
  static void onError(rd_kafka_t *rk, int err, const char *reason, void *opaque);
  static int onStats(rd_kafka_t *rk, char *json, size_t length, void *opaque);
  void run();
  /// The lookup thread: looks the pending topics up every half second until each has
  /// partitions, then waits for stop() or a topic given back by a failed assignment.
  void lookUp();
  /// Assigns the partitions of the topics the lookup thread found since the last call.
  void assignFound();
  void tickIfDue();

  ReaderOptions options_;
  ViewState &state_;
  kafka::RdKafkaPtr<rd_kafka_t> rk_;
  std::mutex mutex_; ///< guards pending_ and found_, and stop_'s change for wake_
  std::condition_variable wake_;
  std::vector<std::string> pending_;               ///< topics to look up (again)
  std::vector<std::pair<std::string, int>> found_; ///< topics and partitions, to be assigned
  int lookupTimeoutMs_ = 0;                        ///< fetch.wait.max.ms + 500, at least 1000
  std::string lastMessageError_;
  int64_t lastTickNs_ = 0;  ///< monotonic
  bool connected_ = false;  ///< as last told to the state (reader thread only)
  bool errorShown_ = false; ///< an error was told to the state since the last "connected"
  std::atomic<bool> stop_{false};
  std::thread thread_;       ///< consumes
  std::thread lookupThread_; ///< looks the pending topics up
};

} // namespace efu::tools::view
