// SPDX-License-Identifier: BSD-2-Clause
// Producer on librdkafka.
#include "common/kafka/KafkaProducer.h"

#include "common/time/Time.h"

#include <librdkafka/rdkafka.h>

#include <memory>

namespace efu::kafka {

namespace {

/// How long produce() waits for delivery reports before retrying a full queue.
constexpr int kQueueFullPollMs = 10;
/// Payloads from this size on are copied into the PayloadPool instead of by librdkafka (the
/// smaller ones come from malloc's heap, which reuses memory without mapping it). 64 KiB is
/// above librdkafka's message.copy.max.bytes default, so the broker thread sends them in place.
constexpr size_t kPooledPayloadBytes = 64 * 1024;
/// Spare payload blocks kept for reuse: enough for the messages in flight at LoKI's link rate
/// (160-kB ev44 messages, 20 ms linger), little next to the 32 MiB producer queue.
constexpr size_t kSparePayloadBytes = 8 * 1024 * 1024;
/// How long the destructor serves the reports of purged messages.
constexpr int kPurgeReportMs = 1000;

// librdkafka uses syslog levels: 0 emergency ... 3 error, 4 warning, 5 notice, 6 info, 7 debug.
constexpr int kSyslogError = 3;
constexpr int kSyslogWarning = 4;
constexpr int kSyslogInfo = 6;

using ConfPtr = std::unique_ptr<rd_kafka_conf_t, decltype(&rd_kafka_conf_destroy)>;

/// Applies one setting; throws KafkaConfigError naming it, where it came from and librdkafka's
/// reason.
void apply(rd_kafka_conf_t *conf, const KafkaSetting &setting) {
  char error[512];
  if (rd_kafka_conf_set(conf, setting.key.c_str(), setting.value.c_str(), error, sizeof(error)) !=
      RD_KAFKA_CONF_OK) {
    throw KafkaConfigError("Kafka setting '" + setting.key + "=" + setting.value + "' (from " +
                           setting.origin + "): " + error);
  }
}

/// The value of a property as librdkafka holds it; empty if unknown.
std::string valueOf(const rd_kafka_conf_t *conf, const std::string &key) {
  char value[1024];
  size_t size = sizeof(value);
  if (rd_kafka_conf_get(conf, key.c_str(), value, &size) != RD_KAFKA_CONF_OK) {
    return {};
  }
  return value;
}

/// message.max.bytes (librdkafka keeps it in 1000..1000000000) less the record's overhead.
size_t payloadLimit(const rd_kafka_conf_t *conf) {
  return std::stoull(valueOf(conf, "message.max.bytes")) - kRecordOverheadBytes;
}

} // namespace

size_t maxPayloadBytes(const KafkaOptions &options) {
  const ConfPtr conf(rd_kafka_conf_new(), rd_kafka_conf_destroy);
  for (const auto &setting : producerSettings(options)) {
    if (setting.key == "message.max.bytes") {
      apply(conf.get(), setting);
    }
  }
  return payloadLimit(conf.get());
}

KafkaProducer::HandlePtr KafkaProducer::createHandle(const KafkaOptions &options) {
  ConfPtr conf(rd_kafka_conf_new(), rd_kafka_conf_destroy);
  char error[512];
  for (const auto &setting : producerSettings(options)) {
    apply(conf.get(), setting);
  }
  // Not overridable: every callback must run on the producing thread (single-writer counters).
  apply(conf.get(), {"log.queue", "true", "efu"});
  // Callbacks run only inside poll/produce/flush, i.e. after construction has finished.
  rd_kafka_conf_set_opaque(conf.get(), this);
  rd_kafka_conf_set_dr_msg_cb(conf.get(), &KafkaProducer::onDelivery);
  rd_kafka_conf_set_error_cb(conf.get(), &KafkaProducer::onError);
  rd_kafka_conf_set_log_cb(conf.get(), &KafkaProducer::onLog);

  // rd_kafka_new also refuses inconsistent combinations (e.g. idempotence with acks=1).
  HandlePtr handle(rd_kafka_new(RD_KAFKA_PRODUCER, conf.get(), error, sizeof(error)),
                   rd_kafka_destroy);
  if (!handle) {
    throw KafkaConfigError(std::string("cannot create the Kafka producer: ") + error);
  }
  conf.release(); // owned by the handle now
  rd_kafka_set_log_queue(handle.get(), nullptr);
  return handle;
}

// The handle is created (and the configuration checked) before the counters are registered, so a
// refused configuration leaves `stats` untouched.
KafkaProducer::KafkaProducer(const KafkaOptions &options, Stats &stats, spdlog::logger &log)
    : log_(log), pool_(kSparePayloadBytes, kPooledPayloadBytes),
      smallPayload_(std::make_unique<uint64_t[]>(kPooledPayloadBytes / 8)),
      rk_(createHandle(options)), produced_(stats.add("kafka.produced")),
      delivered_(stats.add("kafka.delivered")), failed_(stats.add("kafka.failed")),
      bytes_(stats.add("kafka.bytes")), queueFullRetries_(stats.add("kafka.queue_full_retries")),
      errors_(stats.add("kafka.errors")), discarded_(stats.add("kafka.discarded")),
      queued_(stats.add("kafka.queue.messages", CounterKind::Gauge)),
      maxPayloadBytes_(payloadLimit(rd_kafka_conf(rk_.get()))),
      problemLog_{static_cast<int64_t>(options.errorLogIntervalMs) * kNsPerMs, 0, false, 0, {}} {
  log_.info("Kafka producer for {} (compression {}, linger {} ms, message.max.bytes {})",
            setting("bootstrap.servers"), setting("compression.codec"), setting("linger.ms"),
            setting("message.max.bytes"));
}

KafkaProducer::~KafkaProducer() {
  const int64_t left = inFlight();
  if (left > 0) {
    log_.warn("Kafka: discarding {} undelivered messages at shutdown", left);
    discarded_.add(left);
    rd_kafka_purge(rk_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_flush(rk_.get(), kPurgeReportMs); // serves the purge reports: they count as failed
    // Reports that did not come back in time are failures too: nothing is left in flight.
    if (const int64_t unreported = inFlight(); unreported > 0) {
      failed_.add(unreported);
    }
  }
  queued_.set(inFlight()); // 0: whatever was left is failed (and discarded) now
  if (problemLog_.suppressed > 0) {
    log_.warn("Kafka: {} further problem messages were not logged (at most one per {} s)",
              problemLog_.suppressed, problemLog_.intervalNs / kNsPerSec);
  }
  for (auto &[name, handle] : topics_) {
    rd_kafka_topic_destroy(handle);
  }
}

std::string KafkaProducer::setting(const std::string &key) const {
  return valueOf(rd_kafka_conf(rk_.get()), key);
}

std::string KafkaProducer::metadataProblem(int timeoutMs) {
  const rd_kafka_metadata_t *metadata = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk_.get(), 0, nullptr, &metadata, timeoutMs);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return rd_kafka_err2str(err);
  }
  const int brokers = metadata->broker_cnt;
  rd_kafka_metadata_destroy(metadata);
  return brokers > 0 ? std::string() : std::string("the cluster named no brokers");
}

int64_t KafkaProducer::inFlight() const noexcept {
  return produced_.get() - delivered_.get() - failed_.get();
}

rd_kafka_topic_s *KafkaProducer::topicHandle(std::string_view topic) noexcept {
  for (auto &[name, handle] : topics_) {
    if (name == topic) {
      return handle;
    }
  }
  try {
    std::string name(topic);
    rd_kafka_topic_t *handle = rd_kafka_topic_new(rk_.get(), name.c_str(), nullptr);
    if (handle == nullptr) {
      problem(kSyslogError, "cannot create a handle for topic '" + name +
                                "': " + rd_kafka_err2str(rd_kafka_last_error()));
      return nullptr;
    }
    topics_.emplace_back(std::move(name), handle);
    return handle;
  } catch (...) {
    return nullptr; // out of memory: the caller counts the message as failed
  }
}

bool KafkaProducer::produce(std::string_view topic, std::span<const uint8_t> payload,
                            int64_t timestampMs) noexcept {
  return send(topic, payload, timestampMs, true);
}

bool KafkaProducer::tryProduce(std::string_view topic, std::span<const uint8_t> payload,
                               int64_t timestampMs) noexcept {
  return send(topic, payload, timestampMs, false);
}

bool KafkaProducer::produceWritten(std::string_view topic, size_t bytes, PayloadWriter write,
                                   void *context, int64_t timestampMs) noexcept {
  if (bytes < kPooledPayloadBytes) {
    // Written into a buffer of ours, then copied by librdkafka as any small payload.
    const std::span<uint8_t> out(reinterpret_cast<uint8_t *>(smallPayload_.get()), bytes);
    write(context, out);
    return send(topic, out, timestampMs, true);
  }
  rd_kafka_topic_t *handle = topicHandle(topic);
  if (handle == nullptr) {
    return refuse();
  }
  PayloadPool::Block *block = pool_.take(bytes);
  if (block == nullptr) {
    return noMemory(topic, bytes);
  }
  const std::span<uint8_t> out(PayloadPool::data(block), bytes);
  write(context, out);
  return enqueue(handle, topic, out, block, timestampMs, true);
}

bool KafkaProducer::send(std::string_view topic, std::span<const uint8_t> payload,
                         int64_t timestampMs, bool wait) noexcept {
  rd_kafka_topic_t *handle = topicHandle(topic);
  if (handle == nullptr) {
    return refuse();
  }
  // A large payload is copied into a pooled block that its delivery report gives back; a small
  // one is copied by librdkafka (F_COPY). Either way the caller may reuse its buffer at once.
  PayloadPool::Block *block = nullptr;
  if (payload.size() >= kPooledPayloadBytes) {
    block = pool_.take(payload);
    if (block == nullptr) {
      return noMemory(topic, payload.size());
    }
  }
  return enqueue(handle, topic,
                 block != nullptr
                     ? std::span<const uint8_t>(PayloadPool::data(block), payload.size())
                     : payload,
                 block, timestampMs, wait);
}

bool KafkaProducer::refuse() noexcept {
  produced_.add(1);
  failed_.add(1);
  return false;
}

bool KafkaProducer::noMemory(std::string_view topic, size_t bytes) noexcept {
  problem(kSyslogError, "Kafka: no memory for a message of " + std::to_string(bytes) +
                            " bytes to '" + std::string(topic) + "'");
  return refuse();
}

bool KafkaProducer::enqueue(rd_kafka_topic_t *handle, std::string_view topic,
                            std::span<const uint8_t> payload, PayloadPool::Block *block,
                            int64_t timestampMs, bool wait) noexcept {
  // Counted as produced once taken (delivery reports come later, on this thread), or refused
  // for good; a message not taken from a full queue without waiting is not counted here.
  const int flags = block != nullptr ? 0 : RD_KAFKA_MSG_F_COPY;
  for (;;) {
    const rd_kafka_resp_err_t err = rd_kafka_producev(
        rk_.get(), RD_KAFKA_V_RKT(handle), RD_KAFKA_V_PARTITION(RD_KAFKA_PARTITION_UA),
        RD_KAFKA_V_MSGFLAGS(flags),
        RD_KAFKA_V_VALUE(const_cast<uint8_t *>(payload.data()), payload.size()),
        RD_KAFKA_V_OPAQUE(block), RD_KAFKA_V_TIMESTAMP(timestampMs), RD_KAFKA_V_END);
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      produced_.add(1);
      rd_kafka_poll(rk_.get(), 0);
      return true;
    }
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL && !wait) {
      giveBack(block);
      return false;
    }
    if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL && !abort_.load(std::memory_order_relaxed)) {
      // Back-pressure: wait for delivery reports to make room, never drop.
      queueFullRetries_.add(1);
      problem(kSyslogWarning, "Kafka producer queue full (broker slow or away): waiting", false);
      rd_kafka_poll(rk_.get(), kQueueFullPollMs);
      queued_.set(inFlight());
      continue;
    }
    giveBack(block);
    problem(kSyslogError, std::string("Kafka: cannot produce to '") + std::string(topic) +
                              "': " + rd_kafka_err2str(err));
    return refuse();
  }
}

void KafkaProducer::giveBack(PayloadPool::Block *block) noexcept {
  if (block != nullptr) {
    pool_.give(block);
  }
}

void KafkaProducer::poll() noexcept {
  rd_kafka_poll(rk_.get(), 0);
  queued_.set(inFlight());
  reportSuppressed(monotonicNs());
}

void KafkaProducer::reportSuppressed(int64_t nowNs) noexcept {
  // When the window closes with lines swallowed and no new problem to carry the count, say so
  // now rather than at the next problem, which may never come.
  if (!problemLog_.dueReport(nowNs)) {
    return;
  }
  try {
    log_.warn("Kafka: {} further problem messages in the last {:g} s were not logged (the last "
              "was: {})",
              problemLog_.suppressed, static_cast<double>(problemLog_.intervalNs) / 1e9,
              problemLog_.last);
  } catch (...) {
  }
  problemLog_.reported(); // the next problem is logged at once
}

int KafkaProducer::flush(int timeoutMs) {
  rd_kafka_flush(rk_.get(), timeoutMs);
  const int64_t left = inFlight();
  queued_.set(left); // the gauge agrees with the counts the shutdown lines print
  if (left > 0) {
    log_.warn("Kafka: {} messages still undelivered after waiting {} ms", left, timeoutMs);
  }
  return static_cast<int>(left);
}

void KafkaProducer::problem(int level, std::string_view what, bool brokerTrouble) noexcept {
  try {
    troubled_ = troubled_ || brokerTrouble;
    if (!problemLog_.allow(monotonicNs())) {
      problemLog_.last.assign(what);
      return;
    }
    const auto spdLevel = level <= kSyslogError ? spdlog::level::err : spdlog::level::warn;
    if (problemLog_.suppressed > 0) {
      log_.log(spdLevel, "{} ({} similar Kafka messages suppressed in the last {} s)", what,
               problemLog_.suppressed, problemLog_.intervalNs / kNsPerSec);
      problemLog_.suppressed = 0;
    } else {
      log_.log(spdLevel, "{}", what);
    }
  } catch (...) {
    // Logging must never throw into librdkafka or the processing loop.
  }
}

void KafkaProducer::onDelivery(rd_kafka_t *, const rd_kafka_message_t *message, void *opaque) {
  auto *self = static_cast<KafkaProducer *>(opaque);
  // The message's own opaque: its pooled payload block, if it has one (librdkafka is done with it).
  self->giveBack(static_cast<PayloadPool::Block *>(message->_private));
  if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    self->delivered_.add(1);
    self->bytes_.add(static_cast<int64_t>(message->len));
    if (self->troubled_) {
      self->troubled_ = false;
      try {
        self->log_.info("Kafka: delivering again ({} delivered, {} failed so far)",
                        self->delivered_.get(), self->failed_.get());
      } catch (...) {
        // never throw through librdkafka
      }
    }
    return;
  }
  self->failed_.add(1);
  self->problem(kSyslogError, std::string("Kafka: delivery to '") +
                                  rd_kafka_topic_name(message->rkt) +
                                  "' failed: " + rd_kafka_err2str(message->err));
}

void KafkaProducer::onError(rd_kafka_t *rk, int err, const char *reason, void *opaque) {
  auto *self = static_cast<KafkaProducer *>(opaque);
  self->errors_.add(1);
  const auto code = static_cast<rd_kafka_resp_err_t>(err);
  if (code == RD_KAFKA_RESP_ERR__FATAL) {
    char fatal[512];
    const auto original = rd_kafka_fatal_error(rk, fatal, sizeof(fatal));
    try {
      std::string message = std::string("Kafka producer fatal error (") +
                            rd_kafka_err2name(original) + "): " + fatal;
      if (self->setting("enable.idempotence") == "true") {
        message += "; a broker older than Kafka 0.11 cannot take the idempotent producer: run "
                   "with -X enable.idempotence=false";
      }
      self->fatalMessage_ = message;
      self->fatal_.store(true, std::memory_order_release);
      self->log_.critical("{}", message);
    } catch (...) {
      // never throw through librdkafka
    }
    return;
  }
  self->problem(kSyslogError, std::string("Kafka: ") + rd_kafka_err2name(code) + ": " + reason);
}

void KafkaProducer::onLog(const rd_kafka_t *rk, int level, const char *facility, const char *text) {
  auto *self = static_cast<KafkaProducer *>(rd_kafka_opaque(rk));
  if (self == nullptr) {
    return;
  }
  if (level <= kSyslogWarning) {
    self->problem(level, std::string("librdkafka ") + facility + ": " + text, false);
    return;
  }
  try {
    self->log_.log(level <= kSyslogInfo ? spdlog::level::debug : spdlog::level::trace,
                   "librdkafka {}: {}", facility, text);
  } catch (...) {
    // never throw through librdkafka
  }
}

} // namespace efu::kafka
