// SPDX-License-Identifier: BSD-2-Clause
// Kafka output of the daemon: ev44 events, f144 counters and x5f2 status, all on one thread.
#include "efu/KafkaOutput.h"

#include "common/time/Time.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

namespace efu {
namespace {

std::string hostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

} // namespace

KafkaOutput::KafkaOutput(const kafka::KafkaOptions &options, const std::string &serviceId,
                         const std::string &eventSource, Stats &stats, spdlog::logger &log,
                         uint32_t statsIntervalMs)
    : log_(log), flushTimeoutMs_(options.flushTimeoutMs), producer_(options, stats, log),
      sink_(producer_, options.eventsTopicFor(serviceId), eventSource,
            options.maxEventsPerMessage, options.flushIntervalMs, stats,
            options.pulsesPerMessage),
      da00Messages_(stats.add("kafka.da00.messages")), da00Invalid_(stats.add("kafka.da00.invalid")),
      publisher_(producer_, stats, serviceId, options.statsTopicFor(serviceId),
                 options.statusTopicFor(serviceId),
                 serialize::StatusInfo{"efu", EFU_VERSION, serviceId, hostName(),
                                       static_cast<uint32_t>(getpid()), statsIntervalMs}),
      sampler_(producer_, options.samplesTopicFor(serviceId), options.sourceNameFor(serviceId),
               options.monitorEvery, options.monitorConsecutive, stats) {}

std::string KafkaOutput::describe() const {
  return fmt::format("events on '{}' (source '{}'), counters on '{}', status on '{}', raw "
                     "samples on '{}' via {}",
                     sink_.topic(), sink_.sourceName(), publisher_.statsTopic(),
                     publisher_.statusTopic(),
                     sampler_.topic(), producer_.setting("bootstrap.servers"));
}

sdk::EventSink &KafkaOutput::events(const std::string &sourceName) {
  for (kafka::Ev44Sink &source : sources_) {
    if (source.sourceName() == sourceName) {
      return source;
    }
  }
  return sources_.emplace_back(sink_, sourceName);
}

sdk::DataArraySink &KafkaOutput::dataArrays(const std::string &sourceName) {
  for (kafka::Da00Sink &source : arrays_) {
    if (source.sourceName() == sourceName) {
      return source;
    }
  }
  return arrays_.emplace_back(producer_, sink_.topic(), sourceName, da00Messages_, da00Invalid_,
                              producer_.maxPayloadBytes());
}

void KafkaOutput::requestPublish(std::string statusJson) {
  {
    std::lock_guard lock(statusMutex_);
    statusJson_ = std::move(statusJson);
  }
  publishRequested_.store(true, std::memory_order_release);
}

void KafkaOutput::publish(int64_t nowNs) noexcept {
  try {
    std::string status;
    {
      std::lock_guard lock(statusMutex_);
      status = statusJson_;
    }
    publisher_.publish(nowNs, status);
  } catch (const std::exception &e) {
    log_.error("publishing counters failed: {}", e.what());
  }
}

PartitionOutput &KafkaOutput::addPartition(Stats &stats) {
  return partitions_.emplace_back(*this, stats);
}

void KafkaOutput::forwardPartitions() noexcept {
  for (PartitionOutput &partition : partitions_) {
    partition.forwarding().forwardTo(producer_);
  }
}

void KafkaOutput::tick(int64_t nowNs) noexcept {
  forwardPartitions();
  sink_.tick(nowNs); // also polls the producer for delivery reports
  for (kafka::Ev44Sink &source : sources_) {
    source.tick(nowNs);
  }
  if (publishRequested_.exchange(false, std::memory_order_acquire)) {
    publish(nowNs);
  }
}

void KafkaOutput::finish() noexcept {
  forwardPartitions();
  sink_.flush();
  for (kafka::Ev44Sink &source : sources_) {
    source.flush();
  }
  publishRequested_.store(false);
  publish(realtimeNs());
  try {
    int timeoutMs = flushTimeoutMs_;
    if (const int64_t deadlineNs = flushDeadlineNs_.load(std::memory_order_relaxed);
        deadlineNs != 0) {
      const int64_t leftMs = (deadlineNs - monotonicNs()) / kNsPerMs;
      timeoutMs = static_cast<int>(std::clamp<int64_t>(leftMs, 0, flushTimeoutMs_));
    }
    const int left = producer_.flush(timeoutMs);
    if (left == 0 && producer_.failed() == 0) {
      log_.info("Kafka: all {} messages delivered", producer_.delivered());
    } else {
      log_.warn("Kafka: {} messages produced, {} delivered, {} failed, {} still queued",
                producer_.produced(), producer_.delivered(), producer_.failed(), left);
    }
  } catch (const std::exception &e) {
    log_.error("Kafka flush failed: {}", e.what());
  }
}

PartitionOutput::PartitionOutput(KafkaOutput &output, Stats &stats)
    : output_(output), forward_(256, output.producer_.maxPayloadBytes()),
      sink_(output.sink_, forward_, stats.addPart("kafka.ev44.messages"),
            stats.addPart("kafka.ev44.events")),
      da00Messages_(stats.addPart("kafka.da00.messages")),
      da00Invalid_(stats.addPart("kafka.da00.invalid")) {}

sdk::EventSink &PartitionOutput::events(const std::string &sourceName) {
  for (kafka::Ev44Sink &source : sources_) {
    if (source.sourceName() == sourceName) {
      return source;
    }
  }
  auto &peer = static_cast<kafka::Ev44Sink &>(output_.events(sourceName));
  return sources_.emplace_back(sink_, peer);
}

sdk::DataArraySink &PartitionOutput::dataArrays(const std::string &sourceName) {
  for (kafka::Da00Sink &source : arrays_) {
    if (source.sourceName() == sourceName) {
      return source;
    }
  }
  return arrays_.emplace_back(forward_, sink_.topic(), sourceName, da00Messages_, da00Invalid_,
                              output_.producer_.maxPayloadBytes());
}

void PartitionOutput::tick(int64_t nowNs) noexcept {
  sink_.tick(nowNs);
  for (kafka::Ev44Sink &source : sources_) {
    source.tick(nowNs);
  }
}

void PartitionOutput::finish() noexcept {
  sink_.flush();
  for (kafka::Ev44Sink &source : sources_) {
    source.flush();
  }
}

} // namespace efu
