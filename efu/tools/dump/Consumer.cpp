// SPDX-License-Identifier: BSD-2-Clause
// The tools' Kafka consumer and their partition lookup (librdkafka's C API).
#include "efu/tools/dump/Consumer.h"

#include <unistd.h>

#include <stdexcept>

namespace efu::tools {

kafka::RdKafkaPtr<rd_kafka_t> createConsumer(const ConsumerSettings &settings) {
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  char errstr[512];
  auto set = [&](const std::string &key, const std::string &value, const std::string &origin) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), errstr, sizeof(errstr)) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw std::runtime_error(origin + " '" + key + "=" + value + "': " + errstr);
    }
  };
  set("bootstrap.servers", settings.brokers, "-b/--broker");
  set("client.id", settings.clientId, "default");
  // Partitions are assigned directly and nothing is committed; librdkafka still wants a group.
  set("group.id", settings.clientId + "-" + std::to_string(getpid()), "default");
  set("enable.auto.commit", "false", "default");
  set("enable.auto.offset.store", "false", "default");
  // If the broker trimmed the log under us (efu-broker keeps ~5 MiB), lose as little as possible.
  set("auto.offset.reset", "earliest", "default");
  if (settings.configure) {
    settings.configure(conf);
  }
  for (const auto &setting : settings.settings) {
    const auto eq = setting.find('=');
    set(setting.substr(0, eq), setting.substr(eq + 1), "-X");
  }
  rd_kafka_conf_set_log_cb(conf, kafka::logToSpdlog);
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("cannot create Kafka consumer: ") + errstr);
  }
  return kafka::RdKafkaPtr<rd_kafka_t>(rk);
}

PartitionLookup lookupPartitions(rd_kafka_t *rk, const std::string &topic,
                                 const std::string &brokers, int timeoutMs) {
  kafka::RdKafkaPtr<rd_kafka_topic_t> rkt(rd_kafka_topic_new(rk, topic.c_str(), nullptr));
  const rd_kafka_metadata_t *raw = nullptr;
  PartitionLookup out;
  out.err = rd_kafka_metadata(rk, 0, rkt.get(), &raw, timeoutMs);
  kafka::RdKafkaPtr<const rd_kafka_metadata_t> md(raw);
  if (out.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    out.problem = "cannot get metadata from " + brokers + ": " + rd_kafka_err2str(out.err);
  } else if (md->topic_cnt != 1 || md->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    out.problem = "topic '" + topic + "': " +
                  (md->topic_cnt == 1 ? rd_kafka_err2str(md->topics[0].err) : "not in metadata");
  } else if (md->topics[0].partition_cnt > 0) {
    out.partitions = md->topics[0].partition_cnt;
  } else {
    out.problem = "topic '" + topic + "' has no partitions yet";
  }
  return out;
}

} // namespace efu::tools
