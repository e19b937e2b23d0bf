// SPDX-License-Identifier: BSD-2-Clause
// A librdkafka producer for the tools' integration tests: produces to partition 0 and waits for
// every delivery report.
#pragma once

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <string>
#include <vector>

namespace efu::test {

/// Produces with librdkafka and waits for every delivery report.
class TestProducer {
public:
  explicit TestProducer(const std::string &bootstrap) {
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    char errstr[512];
    rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), errstr, sizeof(errstr));
    rd_kafka_conf_set(conf, "linger.ms", "5", errstr, sizeof(errstr));
    rd_kafka_conf_set_dr_msg_cb(conf, onDelivery);
    rd_kafka_conf_set_opaque(conf, this);
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    if (rk_ == nullptr) {
      rd_kafka_conf_destroy(conf);
      ADD_FAILURE() << "producer: " << errstr;
    }
  }
  TestProducer(const TestProducer &) = delete;
  TestProducer &operator=(const TestProducer &) = delete;
  ~TestProducer() {
    if (rk_ != nullptr) {
      rd_kafka_destroy(rk_);
    }
  }

  void produce(const std::string &topic, const std::vector<uint8_t> &payload) {
    ASSERT_NE(rk_, nullptr);
    const auto err =
        rd_kafka_producev(rk_, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(0),
                          RD_KAFKA_V_VALUE(const_cast<uint8_t *>(payload.data()), payload.size()),
                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    ASSERT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
    ++produced_;
  }

  /// Flushes; true when every message was delivered without error.
  bool flushAll() {
    rd_kafka_flush(rk_, 10000);
    return delivered_ == produced_ && failed_ == 0;
  }

private:
  static void onDelivery(rd_kafka_t *, const rd_kafka_message_t *msg, void *opaque) {
    auto *self = static_cast<TestProducer *>(opaque);
    ++(msg->err == RD_KAFKA_RESP_ERR_NO_ERROR ? self->delivered_ : self->failed_);
  }

  rd_kafka_t *rk_ = nullptr;
  int produced_ = 0;
  int delivered_ = 0;
  int failed_ = 0;
};

} // namespace efu::test
