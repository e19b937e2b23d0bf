// SPDX-License-Identifier: BSD-2-Clause
// KafkaProducer against librdkafka's in-process mock cluster: delivery, back-pressure, outages.
#include "common/kafka/KafkaProducer.h"
#include "common/kafka/Da00Sink.h"
#include "common/kafka/Ev44Sink.h"

#include "schemas/ev44_generated.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace efu::kafka;

/// Safety net only: tests synchronise on counters; this bounds a hang if something is broken.
constexpr auto kGiveUp = std::chrono::seconds(20);
constexpr int kFlushMs = 20000;

/// A mock Kafka cluster of `brokers` brokers on loopback, with one single-partition topic.
class MockCluster {
public:
  explicit MockCluster(const std::string &topic, int brokers = 1) {
    char error[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "2", error, sizeof(error));
    handle_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof(error));
    EXPECT_NE(handle_, nullptr) << error;
    cluster_ = rd_kafka_mock_cluster_new(handle_, brokers);
    EXPECT_NE(cluster_, nullptr);
    bootstraps_ = rd_kafka_mock_cluster_bootstraps(cluster_);
    EXPECT_EQ(rd_kafka_mock_topic_create(cluster_, topic.c_str(), 1, 1),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  ~MockCluster() {
    rd_kafka_mock_cluster_destroy(cluster_);
    rd_kafka_destroy(handle_);
  }
  MockCluster(const MockCluster &) = delete;
  MockCluster &operator=(const MockCluster &) = delete;

  [[nodiscard]] const std::string &bootstraps() const { return bootstraps_; }
  void setDown(int broker = 1) { rd_kafka_mock_broker_set_down(cluster_, broker); }
  void setUp(int broker = 1) { rd_kafka_mock_broker_set_up(cluster_, broker); }

  /// Reads partition 0 of `topic` from the beginning to its end; returns the payloads.
  std::vector<std::string> consumeAll(const std::string &topic, size_t atLeast) const {
    char error[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    for (const auto &[key, value] :
         std::vector<std::pair<std::string, std::string>>{{"bootstrap.servers", bootstraps_},
                                                          {"group.id", "efu-test"},
                                                          {"enable.partition.eof", "true"},
                                                          {"enable.auto.commit", "false"},
                                                          {"log_level", "2"}}) {
      EXPECT_EQ(rd_kafka_conf_set(conf, key.c_str(), value.c_str(), error, sizeof(error)),
                RD_KAFKA_CONF_OK)
          << error;
    }
    rd_kafka_t *consumer = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof(error));
    EXPECT_NE(consumer, nullptr) << error;
    rd_kafka_poll_set_consumer(consumer);
    rd_kafka_topic_partition_list_t *partitions = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(partitions, topic.c_str(), 0)->offset =
        RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_assign(consumer, partitions);
    rd_kafka_topic_partition_list_destroy(partitions);

    std::vector<std::string> payloads;
    const auto giveUp = std::chrono::steady_clock::now() + kGiveUp;
    bool atEnd = false;
    while (!(atEnd && payloads.size() >= atLeast) && std::chrono::steady_clock::now() < giveUp) {
      rd_kafka_message_t *message = rd_kafka_consumer_poll(consumer, 100);
      if (message == nullptr) {
        continue;
      }
      if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        atEnd = true;
      } else if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        atEnd = false;
        payloads.emplace_back(static_cast<const char *>(message->payload), message->len);
      }
      rd_kafka_message_destroy(message);
    }
    rd_kafka_consumer_close(consumer);
    rd_kafka_destroy(consumer);
    return payloads;
  }

private:
  rd_kafka_t *handle_ = nullptr;
  rd_kafka_mock_cluster_t *cluster_ = nullptr;
  std::string bootstraps_;
};

/// A logger that keeps its lines, to check what (and how often) the producer logs.
struct CapturedLog {
  CapturedLog()
      : sink(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000)), logger("kafka", sink) {
    logger.set_level(spdlog::level::info);
    sink->set_pattern("%l %v");
  }
  /// On failure (or with EFU_TEST_LOG set) the captured lines are printed, for diagnosis.
  ~CapturedLog() {
    if (::testing::Test::HasFailure() || std::getenv("EFU_TEST_LOG") != nullptr) {
      for (const auto &line : sink->last_formatted()) {
        std::fprintf(stderr, "  log: %s", line.c_str());
      }
    }
  }
  CapturedLog(const CapturedLog &) = delete;
  CapturedLog &operator=(const CapturedLog &) = delete;
  [[nodiscard]] size_t count(const std::string &prefix) const {
    size_t n = 0;
    for (const auto &line : sink->last_formatted()) {
      n += line.rfind(prefix, 0) == 0 ? 1 : 0;
    }
    return n;
  }
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink;
  spdlog::logger logger;
};

int64_t counter(const efu::Stats &stats, const char *name) {
  const auto *c = stats.find(name);
  EXPECT_NE(c, nullptr) << name;
  return c == nullptr ? -1 : c->get();
}

std::span<const uint8_t> bytes(const std::string &text) {
  return {reinterpret_cast<const uint8_t *>(text.data()), text.size()};
}

/// Polls until `done()` or the safety deadline; returns done().
template <typename Done> bool pollUntil(Producer &producer, Done done) {
  const auto giveUp = std::chrono::steady_clock::now() + kGiveUp;
  while (!done() && std::chrono::steady_clock::now() < giveUp) {
    producer.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(5)); // pacing, not synchronisation
  }
  return done();
}

KafkaOptions optionsFor(const MockCluster &cluster) {
  KafkaOptions options;
  options.brokers = cluster.bootstraps();
  return options;
}

TEST(KafkaProducer, CountsDeliveries) {
  MockCluster cluster("delivery");
  CapturedLog log;
  efu::Stats stats;
  KafkaProducer producer(optionsFor(cluster), stats, log.logger);
  int64_t payloadBytes = 0;
  for (int i = 0; i < 100; ++i) {
    const std::string payload = "message-" + std::to_string(i);
    payloadBytes += static_cast<int64_t>(payload.size());
    EXPECT_TRUE(producer.produce("delivery", bytes(payload), 0));
  }
  EXPECT_EQ(producer.flush(kFlushMs), 0);
  EXPECT_EQ(counter(stats, "kafka.produced"), 100);
  EXPECT_EQ(counter(stats, "kafka.delivered"), 100);
  EXPECT_EQ(counter(stats, "kafka.failed"), 0);
  EXPECT_EQ(counter(stats, "kafka.bytes"), payloadBytes);
  EXPECT_EQ(counter(stats, "kafka.queue_full_retries"), 0);
  EXPECT_EQ(producer.inFlight(), 0);

  const auto payloads = cluster.consumeAll("delivery", 100);
  ASSERT_EQ(payloads.size(), 100u);
  for (int i = 0; i < 100; ++i) {
    EXPECT_EQ(payloads[static_cast<size_t>(i)], "message-" + std::to_string(i));
  }
}

TEST(KafkaProducer, AppliesDaqDefaultsAndOverrides) {
  MockCluster cluster("defaults");
  CapturedLog log;
  efu::Stats stats;
  KafkaOptions options = optionsFor(cluster);
  options.settings = {"linger.ms=7"};
  KafkaProducer producer(options, stats, log.logger);
  EXPECT_EQ(producer.setting("linger.ms"), "7");
  EXPECT_EQ(producer.setting("compression.codec"), "none");
  EXPECT_EQ(producer.setting("enable.idempotence"), "true");
  EXPECT_EQ(producer.setting("bootstrap.servers"), cluster.bootstraps());
  EXPECT_EQ(producer.setting("message.max.bytes"),
            std::to_string(std::max<size_t>(1'000'000, maxEv44MessageBytes(options) + 16 * 1024)));
  EXPECT_EQ(producer.setting("message.timeout.ms"), "0");
  EXPECT_EQ(producer.setting("log.queue"), "true");
}

TEST(KafkaProducer, BadSettingNamesKeyOriginAndReason) {
  CapturedLog log;
  efu::Stats stats;
  KafkaOptions options;
  options.settings = {"no.such.property=1"};
  try {
    KafkaProducer producer(options, stats, log.logger);
    FAIL() << "expected KafkaConfigError";
  } catch (const KafkaConfigError &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no.such.property"), std::string::npos) << what;
    EXPECT_NE(what.find("-X"), std::string::npos) << what;
    EXPECT_NE(what.find("No such configuration property"), std::string::npos) << what;
  }
  EXPECT_EQ(stats.size(), 0u) << "a refused configuration registers no counters";
  options.settings = {"linger.ms=soon"};
  try {
    KafkaProducer producer(options, stats, log.logger);
    FAIL() << "expected KafkaConfigError";
  } catch (const KafkaConfigError &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("linger.ms=soon"), std::string::npos) << what;
    EXPECT_NE(what.find("Invalid value"), std::string::npos) << what;
  }
  options.settings = {"acks=1"}; // contradicts the default enable.idempotence=true
  try {
    KafkaProducer producer(options, stats, log.logger);
    FAIL() << "expected KafkaConfigError";
  } catch (const KafkaConfigError &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("acks"), std::string::npos) << what;
  }
  EXPECT_EQ(stats.size(), 0u);
}

// The broker is down from the start and the queue holds 5 messages: produce() must wait (polling)
// instead of dropping, and everything arrives once the broker is up. Problems are logged once.
TEST(KafkaProducer, QueueFullIsBackPressureNotLoss) {
  MockCluster cluster("backpressure");
  cluster.setDown();
  CapturedLog log;
  efu::Stats stats;
  KafkaOptions options = optionsFor(cluster);
  options.settings = {"queue.buffering.max.messages=5"};
  options.errorLogIntervalMs = 3'600'000; // one problem line per hour
  KafkaProducer producer(options, stats, log.logger);
  const efu::Counter &retries = *stats.find("kafka.queue_full_retries");

  // Another thread brings the broker up once produce() has waited on a full queue a few times.
  std::thread operatorThread([&] {
    const auto giveUp = std::chrono::steady_clock::now() + kGiveUp;
    while (retries.get() < 5 && std::chrono::steady_clock::now() < giveUp) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    cluster.setUp();
  });
  constexpr int kMessages = 50;
  for (int i = 0; i < kMessages; ++i) {
    EXPECT_TRUE(producer.produce("backpressure", bytes("bp-" + std::to_string(i)), 0));
  }
  operatorThread.join();
  EXPECT_EQ(producer.flush(kFlushMs), 0);
  EXPECT_GE(counter(stats, "kafka.queue_full_retries"), 5);
  EXPECT_EQ(counter(stats, "kafka.delivered"), kMessages);
  EXPECT_EQ(counter(stats, "kafka.failed"), 0);
  EXPECT_EQ(log.count("warning") + log.count("error"), 1u)
      << "queue-full waits and broker errors share one rate-limited log line";

  const auto payloads = cluster.consumeAll("backpressure", kMessages);
  ASSERT_EQ(payloads.size(), static_cast<size_t>(kMessages));
  for (int i = 0; i < kMessages; ++i) {
    EXPECT_EQ(payloads[static_cast<size_t>(i)], "bp-" + std::to_string(i));
  }
}

// Problems swallowed by the rate limit are reported when their window closes, even if no
// further problem comes to carry the count.
TEST(KafkaProducer, SuppressedProblemsAreCountedWhenTheWindowCloses) {
  MockCluster cluster("quiet");
  cluster.setDown();
  CapturedLog log;
  efu::Stats stats;
  KafkaOptions options = optionsFor(cluster);
  options.settings = {"message.timeout.ms=50"}; // each message fails: one problem each
  options.errorLogIntervalMs = 300;
  KafkaProducer producer(options, stats, log.logger);
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(producer.produce("quiet", bytes("q"), 0));
  }
  ASSERT_TRUE(pollUntil(producer, [&] { return counter(stats, "kafka.failed") == 5; }));
  const auto reported = [&] {
    for (const auto &line : log.sink->last_formatted()) {
      if (line.find("further problem messages in the last 0.3 s were not logged") !=
          std::string::npos) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(pollUntil(producer, reported));
}

// The broker goes away in the middle of a run and comes back: nothing produced is lost or
// duplicated, and the producer says once that it delivers again.
TEST(KafkaProducer, BrokerDownThenUpLosesNothing) {
  MockCluster cluster("outage");
  CapturedLog log;
  efu::Stats stats;
  KafkaProducer producer(optionsFor(cluster), stats, log.logger);
  int next = 0;
  auto produceSome = [&](int n) {
    for (int i = 0; i < n; ++i) {
      EXPECT_TRUE(producer.produce("outage", bytes("out-" + std::to_string(next++)), 0));
    }
  };
  produceSome(20);
  ASSERT_TRUE(pollUntil(producer, [&] { return counter(stats, "kafka.delivered") == 20; }));

  const int64_t errorsBefore = counter(stats, "kafka.errors");
  cluster.setDown();
  produceSome(15);
  ASSERT_TRUE(pollUntil(producer, [&] { return counter(stats, "kafka.errors") > errorsBefore; }))
      << "the producer should notice the broker going away";
  produceSome(15);
  cluster.setUp();
  EXPECT_EQ(producer.flush(kFlushMs), 0);
  EXPECT_EQ(counter(stats, "kafka.produced"), 50);
  EXPECT_EQ(counter(stats, "kafka.delivered"), 50);
  EXPECT_EQ(counter(stats, "kafka.failed"), 0);
  EXPECT_EQ(log.count("info Kafka: delivering again"), 1u);

  const auto payloads = cluster.consumeAll("outage", 50);
  EXPECT_EQ(payloads.size(), 50u) << "idempotence: no duplicates after retries";
  std::set<std::string> unique(payloads.begin(), payloads.end());
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(unique.count("out-" + std::to_string(i)), 1u) << i;
  }
}

TEST(KafkaProducer, AbortReleasesAProduceBlockedOnAFullQueue) {
  MockCluster cluster("abort");
  cluster.setDown();
  CapturedLog log;
  efu::Stats stats;
  KafkaOptions options = optionsFor(cluster);
  options.settings = {"queue.buffering.max.messages=1"};
  auto producer = std::make_unique<KafkaProducer>(options, stats, log.logger);
  const efu::Counter &retries = *stats.find("kafka.queue_full_retries");
  EXPECT_TRUE(producer->produce("abort", bytes("first"), 0));
  std::thread stopper([&] {
    while (retries.get() == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    producer->abortBlockedProduce();
  });
  EXPECT_FALSE(producer->produce("abort", bytes("second"), 0));
  stopper.join();
  EXPECT_EQ(counter(stats, "kafka.failed"), 1);
  EXPECT_EQ(producer->flush(0), 1);
  producer.reset(); // purges "first"; its report counts it as failed
  EXPECT_EQ(counter(stats, "kafka.failed"), 2);
  EXPECT_EQ(counter(stats, "kafka.delivered"), 0);
}

// The shutdown lines of efu read kafka.queue.messages beside produced/delivered/failed: after
// flush() and after destruction the gauge must agree with them, not show the last poll's value.
TEST(KafkaProducer, QueueGaugeAgreesWithTheCountsAfterFlushAndDestruction) {
  MockCluster cluster("gauge");
  CapturedLog log;
  efu::Stats stats;
  auto producer = std::make_unique<KafkaProducer>(optionsFor(cluster), stats, log.logger);
  const efu::Counter &queued = *stats.find("kafka.queue.messages");
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(producer->produce("gauge", bytes("delivered-" + std::to_string(i)), 0));
  }
  producer->poll(); // the gauge as the processing thread sets it each tick
  EXPECT_EQ(producer->flush(kFlushMs), 0);
  EXPECT_EQ(counter(stats, "kafka.delivered"), 10);
  EXPECT_EQ(queued.get(), 0) << "all delivered, yet the gauge shows the last poll's count";

  cluster.setDown(); // the rest stays queued, then is discarded at shutdown
  for (int i = 0; i < 5; ++i) {
    EXPECT_TRUE(producer->produce("gauge", bytes("stuck-" + std::to_string(i)), 0));
  }
  producer->poll();
  EXPECT_EQ(queued.get(), 5);
  EXPECT_EQ(producer->flush(0), 5);
  EXPECT_EQ(queued.get(), 5);
  producer.reset();
  EXPECT_EQ(counter(stats, "kafka.discarded"), 5);
  EXPECT_EQ(counter(stats, "kafka.failed"), 5);
  EXPECT_EQ(counter(stats, "kafka.produced"),
            counter(stats, "kafka.delivered") + counter(stats, "kafka.failed"));
  EXPECT_EQ(queued.get(), 0) << "nothing is in flight once the producer is gone";
}

// Payloads from 64 KiB on go out of the producer's pool (no F_COPY): they arrive byte for byte,
// and blocks come back with the delivery reports, so a steady stream needs few of them.
TEST(KafkaProducer, LargePayloadsArriveIntactAndTheirBlocksAreReused) {
  MockCluster cluster("large");
  CapturedLog log;
  efu::Stats stats;
  KafkaOptions options = optionsFor(cluster);
  options.settings = {"message.max.bytes=1000000"};
  KafkaProducer producer(options, stats, log.logger);
  // 36 messages of 64-112 kB: 3.2 MB, within the 5 MB the mock cluster keeps per partition.
  constexpr int kBatches = 6;
  constexpr int kPerBatch = 6;
  const auto payloadOf = [](int i) {
    std::string text(static_cast<size_t>(64 * 1024 + (i % 4) * 16'000), ' ');
    for (size_t k = 0; k < text.size(); ++k) {
      text[k] = static_cast<char>('a' + (static_cast<size_t>(i) * 31 + k) % 26);
    }
    return text;
  };
  for (int batch = 0; batch < kBatches; ++batch) {
    for (int i = 0; i < kPerBatch; ++i) {
      EXPECT_TRUE(producer.produce("large", bytes(payloadOf(batch * kPerBatch + i)), 0));
    }
    EXPECT_EQ(producer.flush(kFlushMs), 0);
  }
  constexpr int kMessages = kBatches * kPerBatch;
  EXPECT_EQ(counter(stats, "kafka.delivered"), kMessages);
  EXPECT_EQ(counter(stats, "kafka.failed"), 0);
  EXPECT_EQ(producer.payloadPool().lent(), 0u) << "every delivery report gave its block back";
  EXPECT_LE(producer.payloadPool().allocations(), static_cast<uint64_t>(2 * kPerBatch))
      << "blocks of delivered messages serve the next ones";

  const auto payloads = cluster.consumeAll("large", kMessages);
  ASSERT_EQ(payloads.size(), static_cast<size_t>(kMessages));
  for (int i = 0; i < kMessages; ++i) {
    EXPECT_TRUE(payloads[static_cast<size_t>(i)] == payloadOf(i)) << "message " << i;
  }
}

// produceWritten(): the writer fills the producer's memory once (a pooled block from 64 KiB on,
// else a buffer librdkafka copies), 8-byte aligned and exactly as large as asked; the messages
// arrive byte for byte and the blocks come back with the delivery reports.
TEST(KafkaProducer, WrittenPayloadsArriveIntact) {
  MockCluster cluster("written");
  CapturedLog log;
  efu::Stats stats;
  KafkaOptions options = optionsFor(cluster);
  options.settings = {"message.max.bytes=1000000"};
  KafkaProducer producer(options, stats, log.logger);
  const std::vector<size_t> sizes{1000, 64 * 1024 - 1, 64 * 1024, 100'000, 8, 150'000};
  struct Writer {
    size_t index = 0;
    std::vector<size_t> seen;
    bool aligned = true;
  } writer;
  const auto fill = [](void *context, std::span<uint8_t> out) noexcept {
    auto *w = static_cast<Writer *>(context);
    w->seen.push_back(out.size());
    w->aligned = w->aligned && reinterpret_cast<uintptr_t>(out.data()) % 8 == 0;
    for (size_t k = 0; k < out.size(); ++k) {
      out[k] = static_cast<uint8_t>('a' + (w->index * 7 + k) % 26);
    }
  };
  for (size_t i = 0; i < sizes.size(); ++i) {
    writer.index = i;
    EXPECT_TRUE(producer.produceWritten("written", sizes[i], fill, &writer, 0));
  }
  EXPECT_EQ(producer.flush(kFlushMs), 0);
  EXPECT_EQ(writer.seen, sizes);
  EXPECT_TRUE(writer.aligned);
  EXPECT_EQ(counter(stats, "kafka.delivered"), static_cast<int64_t>(sizes.size()));
  EXPECT_EQ(producer.payloadPool().lent(), 0u) << "every delivery report gave its block back";
  EXPECT_GE(producer.payloadPool().allocations(), 1u) << "the large ones came from the pool";
  EXPECT_LE(producer.payloadPool().allocations(), 3u) << "only the three large ones";

  const auto payloads = cluster.consumeAll("written", sizes.size());
  ASSERT_EQ(payloads.size(), sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string expected(sizes[i], ' ');
    for (size_t k = 0; k < expected.size(); ++k) {
      expected[k] = static_cast<char>('a' + (i * 7 + k) % 26);
    }
    EXPECT_TRUE(payloads[i] == expected) << "message " << i;
  }
}

// Large messages still queued when the producer goes are purged: their reports give the blocks
// back, and what is not reported is freed with the pool (LeakSanitizer checks this in CI).
TEST(KafkaProducer, LargePayloadsQueuedAtShutdownAreCountedAndFreed) {
  MockCluster cluster("stuck");
  cluster.setDown();
  CapturedLog log;
  efu::Stats stats;
  auto producer = std::make_unique<KafkaProducer>(optionsFor(cluster), stats, log.logger);
  const std::string large(200 * 1024, 'x');
  for (int i = 0; i < 6; ++i) {
    EXPECT_TRUE(producer->produce("stuck", bytes(large), 0));
  }
  EXPECT_EQ(producer->payloadPool().lent(), 6u);
  producer.reset();
  EXPECT_EQ(counter(stats, "kafka.discarded"), 6);
  EXPECT_EQ(counter(stats, "kafka.failed"), 6);
}

// librdkafka takes a payload of message.max.bytes - 36 bytes and refuses one byte more at once
// (MSG_SIZE_TOO_LARGE): maxPayloadBytes() is that limit, as the options give it.
TEST(KafkaProducer, TakesMaxPayloadBytesAndRefusesOneByteMore) {
  MockCluster cluster("limit");
  CapturedLog log;
  efu::Stats stats;
  KafkaOptions options = optionsFor(cluster);
  options.settings = {"message.max.bytes=100000"};
  KafkaProducer producer(options, stats, log.logger);
  EXPECT_EQ(producer.maxPayloadBytes(), 100'000u - kRecordOverheadBytes);
  EXPECT_EQ(producer.maxPayloadBytes(), maxPayloadBytes(options));
  EXPECT_TRUE(producer.produce("limit", bytes(std::string(producer.maxPayloadBytes(), 'a')), 0));
  EXPECT_FALSE(
      producer.produce("limit", bytes(std::string(producer.maxPayloadBytes() + 1, 'b')), 0));
  EXPECT_EQ(counter(stats, "kafka.failed"), 1);
  EXPECT_EQ(producer.flush(kFlushMs), 0);
  EXPECT_EQ(counter(stats, "kafka.produced"), 2);
  EXPECT_EQ(counter(stats, "kafka.delivered"), 1);
  EXPECT_EQ(log.count("error Kafka: cannot produce to 'limit': Broker: Message size too large"),
            1U);
}

// Issue 37 item 3: a da00 message the producer refuses is not published: publish() says so and
// kafka.da00.messages does not count it (kafka.failed does); one that fits is delivered.
TEST(Da00Sink, AMessageTheProducerRefusesIsNotCountedAsPublished) {
  MockCluster cluster("cbm_detector");
  CapturedLog log;
  efu::Stats stats;
  KafkaOptions options = optionsFor(cluster);
  options.settings = {"message.max.bytes=10000"};
  KafkaProducer producer(options, stats, log.logger);
  efu::Counter &messages = stats.add("kafka.da00.messages");
  efu::Counter &invalid = stats.add("kafka.da00.invalid");
  Da00Sink sink(producer, "cbm_detector", "cbm1", messages, invalid, producer.maxPayloadBytes());
  EXPECT_EQ(sink.maxMessageBytes(), 10'000u - kRecordOverheadBytes);
  const auto publish = [&sink](size_t elements, int64_t declared) {
    const std::vector<int32_t> signal(elements, 7);
    const std::string_view axes[1] = {"frame_time"};
    const int64_t shape[1] = {declared};
    const efu::sdk::DataVariable v{"signal", "A", axes, shape, efu::sdk::DataType::Int32,
                                   {reinterpret_cast<const uint8_t *>(signal.data()),
                                    signal.size() * sizeof(int32_t)}};
    return sink.publish(1'000'000'000, std::span(&v, 1));
  };
  EXPECT_TRUE(publish(100, 100));
  EXPECT_FALSE(publish(3000, 3000)) << "12 kB: larger than message.max.bytes";
  EXPECT_FALSE(publish(10, 11)) << "data that do not fill the shape";
  EXPECT_EQ(messages.get(), 1);
  EXPECT_EQ(invalid.get(), 1);
  EXPECT_EQ(counter(stats, "kafka.failed"), 1);
  EXPECT_EQ(producer.flush(kFlushMs), 0);
  EXPECT_EQ(counter(stats, "kafka.delivered"), 1);
}

TEST(KafkaProducer, Ev44SinkEndToEnd) {
  MockCluster cluster("udp_detector");
  CapturedLog log;
  efu::Stats stats;
  KafkaProducer producer(optionsFor(cluster), stats, log.logger);
  Ev44Sink sink(producer, "udp_detector", "udp", 10, 200, stats);
  for (int32_t i = 0; i < 25; ++i) {
    sink.add(1'000'000'000 + (i / 7) * 71'000'000, i * 10, i);
  }
  sink.flush();
  EXPECT_EQ(producer.flush(kFlushMs), 0);
  // 7 events per pulse, one pulse per message: 7 + 7 + 7 + 4.
  EXPECT_EQ(counter(stats, "kafka.ev44.messages"), 4);
  EXPECT_EQ(counter(stats, "kafka.ev44.events"), 25);

  const auto payloads = cluster.consumeAll("udp_detector", 4);
  ASSERT_EQ(payloads.size(), 4u);
  std::vector<int32_t> pixels;
  for (size_t m = 0; m < payloads.size(); ++m) {
    const auto *data = reinterpret_cast<const uint8_t *>(payloads[m].data());
    flatbuffers::Verifier verifier(data, payloads[m].size());
    ASSERT_TRUE(efu::fb::VerifyEvent44MessageBuffer(verifier));
    const auto *message = efu::fb::GetEvent44Message(data);
    EXPECT_EQ(message->message_id(), static_cast<int64_t>(m));
    ASSERT_EQ(message->reference_time()->size(), 1u);
    EXPECT_EQ(message->reference_time()->Get(0), 1'000'000'000 + static_cast<int64_t>(m) * 71'000'000);
    pixels.insert(pixels.end(), message->pixel_id()->begin(), message->pixel_id()->end());
  }
  ASSERT_EQ(pixels.size(), 25u);
  for (int32_t i = 0; i < 25; ++i) {
    EXPECT_EQ(pixels[static_cast<size_t>(i)], i);
  }
}

} // namespace
