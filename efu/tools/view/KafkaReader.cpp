// SPDX-License-Identifier: BSD-2-Clause
// efu-view's Kafka reader thread (librdkafka's C API).
#include "efu/tools/view/KafkaReader.h"

#include "common/time/Time.h"
#include "efu/tools/dump/Consumer.h"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <span>

namespace efu::tools::view {

namespace {

constexpr int kPollMs = 50;
constexpr int64_t kTickNs = 50 * kNsPerMs; // ViewState wants one at least every 100 ms
// The shortest timeout of a topic lookup. Once a topic is assigned, the consumer's fetch waits at
// the broker for up to fetch.wait.max.ms (500 ms by default) and a metadata request on the same
// connection is answered after it: a lookup must outlast that wait (lookupTimeoutMs()), so the
// lookups run on a thread of their own.
constexpr int kLookupTimeoutMs = 1000;
constexpr int64_t kLookupEveryNs = 500 * kNsPerMs; // a missing topic is asked for again
constexpr int64_t kQuietNs = 2 * kNsPerSec;        // lookups that merely time out, not reported

/// The timeout of a topic lookup on `rk`: its fetch.wait.max.ms (as -X may have set it) and
/// half a second more, at least kLookupTimeoutMs.
int lookupTimeoutMs(rd_kafka_t *rk) {
  char value[32];
  size_t size = sizeof(value);
  int fetchWaitMs = 500;
  if (rd_kafka_conf_get(rd_kafka_conf(rk), "fetch.wait.max.ms", value, &size) == RD_KAFKA_CONF_OK) {
    fetchWaitMs = std::atoi(value);
  }
  return std::max(kLookupTimeoutMs, fetchWaitMs + 500);
}

} // namespace

KafkaReader::KafkaReader(ReaderOptions options, ViewState &state)
    : options_(std::move(options)), state_(state) {
  rk_ = createConsumer(
      {options_.brokers, "efu-view", options_.settings, [this](rd_kafka_conf_t *conf) {
         char errstr[256];
         // The broker's state for the page, from the statistics; -X may override the interval.
         rd_kafka_conf_set(conf, "statistics.interval.ms", "1000", errstr, sizeof(errstr));
         rd_kafka_conf_set_opaque(conf, this);
         rd_kafka_conf_set_error_cb(conf, &KafkaReader::onError);
         rd_kafka_conf_set_stats_cb(conf, &KafkaReader::onStats);
       }});
  // Error and statistics callbacks are served by rd_kafka_consumer_poll() on the reader thread.
  rd_kafka_poll_set_consumer(rk_.get());
  lookupTimeoutMs_ = lookupTimeoutMs(rk_.get());
  pending_ = options_.topics;
  std::sort(pending_.begin(), pending_.end());
  pending_.erase(std::unique(pending_.begin(), pending_.end()), pending_.end());
}

KafkaReader::~KafkaReader() {
  stop();
  rd_kafka_consumer_close(rk_.get());
}

void KafkaReader::start() {
  thread_ = std::thread([this] { run(); });
  lookupThread_ = std::thread([this] { lookUp(); });
}

void KafkaReader::stop() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread *t : {&lookupThread_, &thread_}) {
    if (t->joinable()) {
      t->join();
    }
  }
}

void KafkaReader::onError(rd_kafka_t * /*rk*/, int err, const char *reason, void *opaque) {
  auto *self = static_cast<KafkaReader *>(opaque);
  const int64_t nowNs = realtimeNs();
  if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) {
    spdlog::warn("Kafka: {}; reading resumes when a broker is back", reason);
    self->connected_ = false;
  }
  // One connection's trouble (librdkafka reconnects by itself) is shown, not taken as down; the
  // next statistics with a broker up clear it.
  self->state_.setBroker(self->connected_, reason, nowNs);
  self->errorShown_ = true;
}

int KafkaReader::onStats(rd_kafka_t * /*rk*/, char *json, size_t length, void *opaque) {
  auto *self = static_cast<KafkaReader *>(opaque);
  const auto stats = nlohmann::json::parse(json, json + length, nullptr, false);
  if (stats.is_discarded() || !stats.contains("brokers") || !stats["brokers"].is_object()) {
    return 0;
  }
  bool up = false;
  for (const auto &broker : stats["brokers"]) {
    up = up || (broker.is_object() && broker.value("state", "") == "UP");
  }
  if (up && (!self->connected_ || self->errorShown_)) {
    if (!self->connected_) {
      spdlog::info("Kafka: connected to {}", self->options_.brokers);
    }
    self->connected_ = true;
    self->errorShown_ = false;
    self->state_.setBroker(true, "", realtimeNs());
  } else if (!up && self->connected_) {
    self->connected_ = false;
    self->state_.setBroker(false, "no connection to any broker of " + self->options_.brokers,
                           realtimeNs());
  }
  return 0; // librdkafka frees the text
}

void KafkaReader::tickIfDue() {
  const int64_t nowNs = monotonicNs();
  if (nowNs - lastTickNs_ >= kTickNs) {
    lastTickNs_ = nowNs;
    state_.tick(realtimeNs());
  }
}

void KafkaReader::lookUp() {
  const int64_t startNs = monotonicNs();
  std::vector<std::string> reported; // topics already warned about
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (pending_.empty()) {
      // Until stop(), or an assignment that failed gives a topic back: looked up again half a
      // second later.
      wake_.wait(lock, [this] { return stop_.load() || !pending_.empty(); });
      wake_.wait_for(lock, std::chrono::nanoseconds(kLookupEveryNs),
                     [this] { return stop_.load(); });
      continue;
    }
    const std::vector<std::string> topics = pending_;
    lock.unlock();
    // A round's topics are handed over together: the first round, before any fetch waits at the
    // broker, then finds every topic that exists at start without waiting behind one.
    std::vector<std::pair<std::string, int>> found;
    for (const std::string &topic : topics) {
      if (stop_) {
        break;
      }
      const auto lookup = lookupPartitions(rk_.get(), topic, options_.brokers, lookupTimeoutMs_);
      if (lookup.partitions > 0) {
        found.emplace_back(topic, lookup.partitions);
        continue;
      }
      const bool quiet =
          lookup.err == RD_KAFKA_RESP_ERR__TIMED_OUT && monotonicNs() - startNs < kQuietNs;
      if (!quiet && std::find(reported.begin(), reported.end(), topic) == reported.end()) {
        spdlog::warn("{}; trying again every {} ms", lookup.problem, kLookupEveryNs / kNsPerMs);
        reported.push_back(topic);
      }
    }
    lock.lock();
    for (const auto &f : found) {
      std::erase(pending_, f.first);
      found_.push_back(f);
    }
    if (!pending_.empty()) {
      wake_.wait_for(lock, std::chrono::nanoseconds(kLookupEveryNs),
                     [this] { return stop_.load(); });
    }
  }
}

// The found topics' partitions, in one assignment: a partition assigned after the others would
// wait for their fetch (up to fetch.wait.max.ms) before its first.
void KafkaReader::assignFound() {
  std::vector<std::pair<std::string, int>> found;
  {
    const std::lock_guard lock(mutex_);
    if (found_.empty()) {
      return;
    }
    found.swap(found_);
  }
  const int64_t offset =
      options_.from == "beginning" ? RD_KAFKA_OFFSET_BEGINNING : RD_KAFKA_OFFSET_END;
  kafka::RdKafkaPtr<rd_kafka_topic_partition_list_t> list(
      rd_kafka_topic_partition_list_new(static_cast<int>(found.size())));
  for (const auto &[topic, partitions] : found) {
    for (int p = 0; p < partitions; ++p) {
      rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), p)->offset = offset;
    }
  }
  // Adds to what is assigned already (no group: librdkafka allows it outside a rebalance).
  if (rd_kafka_error_t *error = rd_kafka_incremental_assign(rk_.get(), list.get())) {
    const std::lock_guard lock(mutex_);
    for (const auto &f : found) {
      spdlog::error("cannot assign the partitions of {}: {}; trying again", f.first,
                    rd_kafka_error_string(error));
      pending_.push_back(f.first); // looked up again after the next half second
    }
    rd_kafka_error_destroy(error);
    wake_.notify_all();
    return;
  }
  for (const auto &[topic, partitions] : found) {
    spdlog::info("reading {} ({} partition{}) from the {}", topic, partitions,
                 partitions == 1 ? "" : "s", options_.from);
  }
  if (!connected_) {
    connected_ = true;
    state_.setBroker(true, "", realtimeNs());
  }
}

void KafkaReader::run() {
  state_.tick(realtimeNs());
  lastTickNs_ = monotonicNs();
  while (!stop_) {
    assignFound();
    kafka::RdKafkaPtr<rd_kafka_message_t> msg(rd_kafka_consumer_poll(rk_.get(), kPollMs));
    if (msg && msg->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      const auto *payload = static_cast<const uint8_t *>(msg->payload);
      state_.ingest(rd_kafka_topic_name(msg->rkt),
                    std::span<const uint8_t>(payload, payload == nullptr ? 0 : msg->len),
                    realtimeNs());
      lastMessageError_.clear();
      if (!connected_) {
        connected_ = true;
        state_.setBroker(true, "", realtimeNs());
      }
    } else if (msg && msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      std::string error = rd_kafka_message_errstr(msg.get());
      if (error != lastMessageError_) {
        spdlog::warn("consumer: {}", error);
        lastMessageError_ = std::move(error);
      }
    }
    tickIfDue();
  }
}

} // namespace efu::tools::view
