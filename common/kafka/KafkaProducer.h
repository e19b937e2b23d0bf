// SPDX-License-Identifier: BSD-2-Clause
// Producer on librdkafka: DAQ defaults, back-pressure on QUEUE_FULL, delivery counters.
#pragma once

#include "common/kafka/KafkaOptions.h"
#include "common/kafka/PayloadPool.h"
#include "common/kafka/Producer.h"
#include "common/stats/Stats.h"
#include "common/system/LogRateLimit.h"

#include <spdlog/logger.h>

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

struct rd_kafka_s;
struct rd_kafka_topic_s;
struct rd_kafka_message_s;

namespace efu::kafka {

/// Bytes of librdkafka's record framing that share message.max.bytes with a payload (a
/// MessageV2 record's largest overhead, without key and headers): produce() takes a payload of
/// message.max.bytes - 36 bytes and refuses one byte more (MSG_SIZE_TOO_LARGE; tested).
inline constexpr size_t kRecordOverheadBytes = 36;

/// The largest payload a producer made from `options` takes: message.max.bytes as it would be
/// in effect (efu's default, then --kafka-config, then -X, parsed by librdkafka) less
/// kRecordOverheadBytes. Needs no broker; reads --kafka-config. Throws KafkaConfigError for a
/// message.max.bytes librdkafka refuses. What the data array sinks say with --no-kafka.
[[nodiscard]] size_t maxPayloadBytes(const KafkaOptions &options);

/// A librdkafka producer configured from KafkaOptions (defaults, then --kafka-config, then -X).
///
/// Counters registered in `stats` (written only by the thread that uses the producer):
///   kafka.produced           messages handed to produce()
///   kafka.delivered          messages acknowledged by the broker
///   kafka.failed             messages refused by produce() or reported failed by the broker
///   kafka.bytes              payload bytes delivered
///   kafka.queue_full_retries produce() attempts that found the local queue full and waited
///   kafka.errors             client-level errors reported by librdkafka (broker down, ...)
///   kafka.discarded          messages still queued when the producer was destroyed (also in
///                            kafka.failed: they were never delivered)
/// produced - delivered - failed is what is in flight (queued or unacknowledged).
///
/// Broker trouble: with the default message.timeout.ms=0 messages never expire; while the broker
/// is away they stay queued and go out when it returns. When the queue is full, produce() polls
/// and retries (back-pressure) instead of dropping. Problems are logged at most once per
/// options.errorLogIntervalMs, with a count of the suppressed ones.
///
/// Thread rules: one thread calls produce/poll/flush and destroys the producer; all librdkafka
/// callbacks (delivery reports, errors, logs) run on that thread inside poll/produce/flush.
/// abortBlockedProduce() may be called from any thread. `log` and `stats` must outlive it.
class KafkaProducer final : public Producer {
public:
  /// Throws KafkaConfigError for an unknown key or bad value (naming the key, where it came from
  /// and librdkafka's explanation), or when librdkafka cannot create the producer.
  KafkaProducer(const KafkaOptions &options, Stats &stats, spdlog::logger &log);
  ~KafkaProducer() override;
  KafkaProducer(const KafkaProducer &) = delete;
  KafkaProducer &operator=(const KafkaProducer &) = delete;

  bool produce(std::string_view topic, std::span<const uint8_t> payload,
               int64_t timestampMs) noexcept override;
  bool tryProduce(std::string_view topic, std::span<const uint8_t> payload,
                  int64_t timestampMs) noexcept override;
  /// A message of 64 KiB or more is written into a pooled block and sent from there; a smaller
  /// one into a buffer of the producer's, then copied by librdkafka.
  bool produceWritten(std::string_view topic, size_t bytes, PayloadWriter write, void *context,
                      int64_t timestampMs) noexcept override;
  void poll() noexcept override;
  /// Logs a warning with the number left undelivered when the timeout expires.
  int flush(int timeoutMs) override;

  /// Makes a produce() that is waiting on a full queue give up (the message counts as failed),
  /// and all later ones fail instead of waiting. For shutdown when the broker never returns.
  void abortBlockedProduce() noexcept { abort_.store(true, std::memory_order_relaxed); }

  /// Messages handed to produce() and neither delivered nor failed yet.
  [[nodiscard]] int64_t inFlight() const noexcept;
  [[nodiscard]] int64_t produced() const noexcept { return produced_.get(); }
  [[nodiscard]] int64_t delivered() const noexcept { return delivered_.get(); }
  [[nodiscard]] int64_t failed() const noexcept { return failed_.get(); }
  /// True after librdkafka reported a fatal error: nothing will be delivered any more.
  /// Any thread.
  [[nodiscard]] bool fatal() const noexcept { return fatal_.load(std::memory_order_acquire); }
  /// What the fatal error was and what to do about it; valid once fatal() is true.
  [[nodiscard]] const std::string &fatalMessage() const noexcept { return fatalMessage_; }
  /// The pool of large payload copies (for tests).
  [[nodiscard]] const PayloadPool &payloadPool() const noexcept { return pool_; }
  /// The largest payload produce() takes: message.max.bytes in effect less
  /// kRecordOverheadBytes (a larger one is refused at once and counted in kafka.failed).
  [[nodiscard]] size_t maxPayloadBytes() const noexcept { return maxPayloadBytes_; }
  /// The effective value of a librdkafka property (for logs and tests); empty if unknown.
  [[nodiscard]] std::string setting(const std::string &key) const;
  /// Asks the cluster for its broker list, waiting at most timeoutMs: "" when a broker answered,
  /// else librdkafka's reason (for `efu --check`; the producer itself never waits for this).
  [[nodiscard]] std::string metadataProblem(int timeoutMs);

private:
  using HandlePtr = std::unique_ptr<rd_kafka_s, void (*)(rd_kafka_s *)>;
  /// Applies producerSettings(options) and creates the librdkafka handle; throws KafkaConfigError.
  HandlePtr createHandle(const KafkaOptions &options);

  /// At most one log line per interval; counts what it swallowed (shared with GraphiteOutput).
  using RateLimit = LogRateLimit;

  rd_kafka_topic_s *topicHandle(std::string_view topic) noexcept;
  /// produce() and tryProduce(): `wait` = retry on a full queue (back-pressure).
  bool send(std::string_view topic, std::span<const uint8_t> payload, int64_t timestampMs,
            bool wait) noexcept;
  /// Hands `payload` (in `block`, or nullptr: librdkafka copies it) to librdkafka.
  bool enqueue(rd_kafka_topic_s *handle, std::string_view topic, std::span<const uint8_t> payload,
               PayloadPool::Block *block, int64_t timestampMs, bool wait) noexcept;
  /// Counts a message refused for good; returns false.
  bool refuse() noexcept;
  /// Logs and counts a message with no block to hold it; returns false.
  bool noMemory(std::string_view topic, size_t bytes) noexcept;
  /// Returns a pooled payload block (nullptr: none) once librdkafka no longer needs it.
  void giveBack(PayloadPool::Block *block) noexcept;
  /// Rate-limited log of a problem; brokerTrouble arms the "delivering again" message.
  void problem(int level, std::string_view what, bool brokerTrouble = true) noexcept;
  /// Logs the count of suppressed problem lines once their window has closed.
  void reportSuppressed(int64_t nowNs) noexcept;
  static void onDelivery(rd_kafka_s *rk, const rd_kafka_message_s *message, void *opaque);
  static void onError(rd_kafka_s *rk, int err, const char *reason, void *opaque);
  static void onLog(const rd_kafka_s *rk, int level, const char *facility, const char *text);

  spdlog::logger &log_;
  /// Large payloads, copied or written in (declared before rk_: librdkafka may point into them
  /// until the handle is gone).
  PayloadPool pool_;
  /// produceWritten()'s messages below the pooled size, before librdkafka copies them.
  std::unique_ptr<uint64_t[]> smallPayload_;
  HandlePtr rk_; // declared before the counters: created (and checked) before they are registered
  Counter &produced_;
  Counter &delivered_;
  Counter &failed_;
  Counter &bytes_;
  Counter &queueFullRetries_;
  Counter &errors_;
  Counter &discarded_;
  Counter &queued_; ///< gauge: inFlight() at the last poll() or flush(); 0 once destroyed
  size_t maxPayloadBytes_ = 0;
  RateLimit problemLog_;
  bool troubled_ = false; // a problem was logged; log once when deliveries succeed again
  std::atomic<bool> abort_{false};
  std::string fatalMessage_;      ///< written once, before fatal_ is set
  std::atomic<bool> fatal_{false};
  std::vector<std::pair<std::string, rd_kafka_topic_s *>> topics_;
};

} // namespace efu::kafka
