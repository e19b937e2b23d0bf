// SPDX-License-Identifier: BSD-2-Clause
// Small shared helpers for code that uses the librdkafka C API directly (tools, tests).
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <spdlog/spdlog.h>

#include <memory>

namespace efu::kafka {

/// Destroys librdkafka objects with the matching rd_kafka_*_destroy.
struct RdKafkaDeleter {
  void operator()(rd_kafka_t *rk) const { rd_kafka_destroy(rk); }
  void operator()(rd_kafka_topic_t *rkt) const { rd_kafka_topic_destroy(rkt); }
  void operator()(rd_kafka_topic_partition_list_t *list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
  void operator()(rd_kafka_message_t *msg) const { rd_kafka_message_destroy(msg); }
  void operator()(const rd_kafka_metadata_t *md) const { rd_kafka_metadata_destroy(md); }
  void operator()(rd_kafka_mock_cluster_t *mc) const { rd_kafka_mock_cluster_destroy(mc); }
};
template <typename T> using RdKafkaPtr = std::unique_ptr<T, RdKafkaDeleter>;

/// librdkafka's syslog levels (0..3 errors, 4 warning, 5..6 notice/info, 7 debug) as spdlog's.
inline spdlog::level::level_enum spdlogLevel(int syslogLevel) noexcept {
  return syslogLevel <= 3   ? spdlog::level::err
         : syslogLevel == 4 ? spdlog::level::warn
         : syslogLevel <= 6 ? spdlog::level::info
                            : spdlog::level::debug;
}

/// A log callback (rd_kafka_conf_set_log_cb) that writes to spdlog's default logger.
inline void logToSpdlog(const rd_kafka_t * /*rk*/, int level, const char *facility,
                        const char *text) {
  spdlog::log(spdlogLevel(level), "librdkafka {}: {}", facility, text);
}

} // namespace efu::kafka
