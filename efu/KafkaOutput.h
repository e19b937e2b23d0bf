// SPDX-License-Identifier: BSD-2-Clause
// Kafka output of the daemon: ev44 events, f144 counters and x5f2 status, all on one thread.
#pragma once

#include "common/kafka/Da00Sink.h"
#include "common/kafka/Ev44Sink.h"
#include "common/kafka/ForwardingProducer.h"
#include "common/kafka/KafkaOptions.h"
#include "common/kafka/KafkaProducer.h"
#include "common/kafka/RawSampler.h"
#include "common/kafka/StatsPublisher.h"
#include "efu/Runtime.h"

#include <atomic>
#include <deque>
#include <iterator>
#include <list>
#include <mutex>
#include <string>

namespace efu {

class PartitionOutput;

/// Owns the producer, the event sink and the stats publisher. They all run on the processing
/// thread (one producer user, one writer per kafka.* counter): the main thread only asks for a
/// stats publication with requestPublish().
class KafkaOutput final : public ProcessingHooks {
public:
  /// `eventSource`: the default ev44 source_name (--source-name, else the module's default).
  /// Throws kafka::KafkaConfigError on bad producer settings.
  KafkaOutput(const kafka::KafkaOptions &options, const std::string &serviceId,
              const std::string &eventSource, Stats &stats, spdlog::logger &log,
              uint32_t statsIntervalMs);

  [[nodiscard]] sdk::EventSink &events() noexcept { return sink_; }
  /// The sink of another ev44 source on the events topic (ModuleContext::events(name)):
  /// created on the first call for a name, before the processing thread starts.
  [[nodiscard]] sdk::EventSink &events(const std::string &sourceName);
  /// The da00 sink of a source on the events topic (ModuleContext::dataArrays(name)): created
  /// on the first call for a name, before the processing thread starts.
  [[nodiscard]] sdk::DataArraySink &dataArrays(const std::string &sourceName);
  [[nodiscard]] std::string describe() const;
  /// The Kafka side of a further partition of the module (--proc-threads), created before the
  /// processing threads start; its messages reach the producer at this output's tick().
  [[nodiscard]] PartitionOutput &addPartition(Stats &stats);
  /// The i-th partition added (partition i + 1 of the module).
  [[nodiscard]] PartitionOutput &partition(size_t i) {
    return *std::next(partitions_.begin(), static_cast<std::ptrdiff_t>(i));
  }

  /// Main thread: publish all counters and this status on the next tick.
  void requestPublish(std::string statusJson);

  kafka::RawSampler *sampler() noexcept override { return &sampler_; }
  /// Forwards the partitions' waiting messages, ticks the sinks, publishes when asked.
  void tick(int64_t nowNs) noexcept override;
  /// Flushes buffered events (the partitions' first: the runtime calls it once they finished),
  /// publishes the final counters and waits (bounded) for delivery.
  void finish() noexcept override;
  /// Any thread, before the stop: finish() waits for delivery at most until this
  /// CLOCK_MONOTONIC time (and never longer than --kafka-flush-timeout).
  void setFlushDeadline(int64_t monotonicNs) noexcept {
    flushDeadlineNs_.store(monotonicNs, std::memory_order_relaxed);
  }

  /// Any thread: stop waiting on a full producer queue (shutdown with the broker gone).
  void abortBlockedProduce() noexcept { producer_.abortBlockedProduce(); }
  /// Any thread: the producer hit a fatal error; nothing more will be delivered.
  [[nodiscard]] bool fatal() const noexcept { return producer_.fatal(); }
  [[nodiscard]] const std::string &fatalMessage() const noexcept {
    return producer_.fatalMessage();
  }

private:
  friend class PartitionOutput;
  void publish(int64_t nowNs) noexcept;
  /// Hands every partition's waiting messages to the producer.
  void forwardPartitions() noexcept;

  spdlog::logger &log_;
  int flushTimeoutMs_;
  kafka::KafkaProducer producer_;
  kafka::Ev44Sink sink_;
  std::deque<kafka::Ev44Sink> sources_; ///< further sources, in the order asked for
  Counter &da00Messages_;
  Counter &da00Invalid_;
  std::deque<kafka::Da00Sink> arrays_; ///< data array sources, in the order asked for
  kafka::StatsPublisher publisher_;
  kafka::RawSampler sampler_;
  std::mutex statusMutex_;
  std::string statusJson_;
  std::atomic<bool> publishRequested_{false};
  std::atomic<int64_t> flushDeadlineNs_{0}; ///< 0 = none
  std::list<PartitionOutput> partitions_; ///< std::list: may hold a type declared later
};

/// The Kafka side of partition p >= 1 of the module (efu --proc-threads), on that partition's
/// processing thread: sinks of its own for the same sources as partition 0's (same topic and
/// source names, message ids from partition 0's sequences, counters as parts of partition 0's),
/// producing into a ForwardingProducer that the KafkaOutput empties into the one producer on
/// partition 0's thread. So the producer, its counters and its callbacks stay on one thread.
class PartitionOutput final : public ProcessingHooks {
public:
  PartitionOutput(KafkaOutput &output, Stats &stats);
  [[nodiscard]] sdk::EventSink &events() noexcept { return sink_; }
  /// This partition's sink of source `sourceName` (partition 0's is made too if it has none).
  [[nodiscard]] sdk::EventSink &events(const std::string &sourceName);
  [[nodiscard]] sdk::DataArraySink &dataArrays(const std::string &sourceName);
  /// Closes messages whose first event waited the flush interval.
  void tick(int64_t nowNs) noexcept override;
  /// Produces what is buffered into the forwarding ring.
  void finish() noexcept override;
  [[nodiscard]] kafka::ForwardingProducer &forwarding() noexcept { return forward_; }

private:
  KafkaOutput &output_;
  kafka::ForwardingProducer forward_;
  kafka::Ev44Sink sink_;
  std::deque<kafka::Ev44Sink> sources_;
  Counter &da00Messages_;
  Counter &da00Invalid_;
  std::deque<kafka::Da00Sink> arrays_;
};

} // namespace efu
