// SPDX-License-Identifier: BSD-2-Clause
// efu-broker: a loopback Kafka-protocol broker for development and tests (librdkafka mock cluster).
#include "common/system/CliAliases.h"
#include "common/system/Log.h"
#include "efu/tools/broker/TopicSpec.h"

#include <CLI/CLI.hpp>
#include "common/kafka/RdKafka.h"
#include "common/system/CliExit.h"

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <spdlog/spdlog.h>

#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr int kMaxBrokers = 16;
constexpr int kSelfCheckTimeoutMs = 5000;

constexpr const char *kLimits =
    "Limits (librdkafka's mock cluster):\n"
    "  - listens on 127.0.0.1 only, on random ports: read the address from stdout or\n"
    "    --bootstrap-file;\n"
    "  - keeps messages in memory and only the newest ~5 MiB (or 100000 produce batches)\n"
    "    per partition: older messages are dropped, so consume while producing;\n"
    "  - topics not given with --topic are created on first use by a producer (or any\n"
    "    client allowing auto-creation), with the mock's default partition count;\n"
    "  - no admin API (CreateTopics/DeleteTopics/configs), no persistence, no security;\n"
    "    the mock is experimental in librdkafka.\n"
    "Production uses a real Kafka cluster: point efu -b at it instead.";

using efu::kafka::logToSpdlog;
template <typename T> using KafkaPtr = efu::kafka::RdKafkaPtr<T>;

// The handle that owns the mock cluster never connects anywhere; its complaint about having no
// bootstrap.servers is noise.
extern "C" void logFromOwner(const rd_kafka_t *rk, int level, const char *facility,
                             const char *text) {
  if (std::string_view(facility) != "CONFWARN" ||
      std::string_view(text).find("bootstrap.servers") == std::string_view::npos) {
    logToSpdlog(rk, level, facility, text);
  }
}

KafkaPtr<rd_kafka_t> createClient(const std::string &bootstrap) {
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  char errstr[512];
  rd_kafka_conf_set_log_cb(conf, bootstrap.empty() ? logFromOwner : logToSpdlog);
  if (!bootstrap.empty() && rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap.c_str(), errstr,
                                              sizeof(errstr)) != RD_KAFKA_CONF_OK) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("bootstrap.servers: ") + errstr);
  }
  rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(std::string("cannot create a librdkafka handle: ") + errstr);
  }
  return KafkaPtr<rd_kafka_t>(rk);
}

/// Talks to the cluster through its listeners, as any client will, before announcing it.
void selfCheck(const std::string &bootstrap, int brokers) {
  auto client = createClient(bootstrap);
  const rd_kafka_metadata_t *raw = nullptr;
  const auto err = rd_kafka_metadata(client.get(), 1, nullptr, &raw, kSelfCheckTimeoutMs);
  KafkaPtr<const rd_kafka_metadata_t> md(raw);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw std::runtime_error("self-check: no metadata from " + bootstrap + ": " +
                             rd_kafka_err2str(err));
  }
  if (md->broker_cnt != brokers) {
    throw std::runtime_error("self-check: " + bootstrap + " reports " +
                             std::to_string(md->broker_cnt) + " brokers, expected " +
                             std::to_string(brokers));
  }
}

void writeFileAtomically(const std::string &path, const std::string &content) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << content << '\n';
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error("--bootstrap-file: cannot write '" + tmp + "'");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("--bootstrap-file: cannot rename '" + tmp + "' to '" + path + "'");
  }
}

int run(int brokers, const std::vector<efu::tools::TopicSpec> &topics,
        const std::string &bootstrapFile) {
  // Signals are taken by sigwait() below; librdkafka's threads inherit the blocked mask.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGTERM);
  sigaddset(&stopSignals, SIGUSR1);
  sigaddset(&stopSignals, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);

  auto owner = createClient("");
  KafkaPtr<rd_kafka_mock_cluster_t> cluster(rd_kafka_mock_cluster_new(owner.get(), brokers));
  if (!cluster) {
    throw std::runtime_error("cannot create the mock cluster (see the librdkafka log above)");
  }
  const std::string bootstrap = rd_kafka_mock_cluster_bootstraps(cluster.get());
  for (const auto &topic : topics) {
    const auto err =
        rd_kafka_mock_topic_create(cluster.get(), topic.name.c_str(), topic.partitions, 1);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw std::runtime_error("cannot create topic '" + topic.name +
                               "': " + rd_kafka_err2str(err));
    }
    spdlog::info("topic {} with {} partition{}", topic.name, topic.partitions,
                 topic.partitions == 1 ? "" : "s");
  }
  selfCheck(bootstrap, brokers);

  if (!bootstrapFile.empty()) {
    writeFileAtomically(bootstrapFile, bootstrap);
  }
  std::printf("%s\n", bootstrap.c_str());
  std::fflush(stdout);
  spdlog::info("{} mock broker{} listening at {}; SIGUSR1 takes them down, SIGUSR2 up again, "
               "SIGINT/SIGTERM stops",
               brokers, brokers == 1 ? "" : "s", bootstrap);

  int signal = 0;
  for (;;) {
    if (sigwait(&stopSignals, &signal) != 0) {
      continue;
    }
    if (signal == SIGUSR1) {
      // An outage at the same address: connections are cut and refused until SIGUSR2.
      rd_kafka_mock_broker_set_down(cluster.get(), -1);
      spdlog::info("SIGUSR1: brokers down (connections refused)");
    } else if (signal == SIGUSR2) {
      rd_kafka_mock_broker_set_up(cluster.get(), -1);
      spdlog::info("SIGUSR2: brokers up again");
    } else {
      break;
    }
  }
  spdlog::info("stopping on {}", signal == SIGINT ? "SIGINT" : "SIGTERM");
  if (!bootstrapFile.empty()) {
    std::remove(bootstrapFile.c_str()); // a stale address would mislead the next reader
  }
  cluster.reset();
  owner.reset();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  int brokers = 1;
  std::vector<std::string> topicArgs;
  std::string bootstrapFile;
  std::string logLevel = "info";

  CLI::App app{"efu-broker: a loopback Kafka-protocol broker for development and tests.\n"
               "Prints its bootstrap address (one line) on stdout once it serves clients,\n"
               "then runs until SIGINT/SIGTERM (exit 0). SIGUSR1 takes the brokers down\n"
               "(an outage: connections cut and refused at the same address), SIGUSR2 up again."};
  app.footer(kLimits);
  auto *brokerCount = app.add_option("--broker-count", brokers, "Number of brokers in the cluster")
                          ->check(CLI::Range(1, kMaxBrokers))
                          ->capture_default_str();
  efu::cli::addDeprecatedAlias(app, "--brokers", brokerCount); // before docs/tools.md's vocabulary
  app.add_option("-t,--topic", topicArgs,
                 "Create topic NAME[:PARTITIONS] up front (repeatable; 1 partition by default)")
      ->check(
          [](const std::string &value) {
            try {
              efu::tools::parseTopicSpec(value);
              return std::string();
            } catch (const std::invalid_argument &e) {
              return std::string(e.what());
            }
          },
          "")
      ->type_name("NAME[:PARTITIONS]");
  app.add_option("--bootstrap-file", bootstrapFile,
                 "Also write the bootstrap address to PATH (atomically; removed on exit)")
      ->type_name("PATH");
  app.add_option("-l,--log-level", logLevel, std::string("One of: ") + efu::kLogLevels)
      ->capture_default_str();
  app.set_version_flag("--version", EFU_VERSION);
  if (const auto code = efu::cli::parseCommandLine(app, argc, argv)) {
    return *code;
  }

  try {
    efu::setupLogging("efu-broker", logLevel, "");
    std::vector<efu::tools::TopicSpec> topics;
    for (const auto &arg : topicArgs) {
      topics.push_back(efu::tools::parseTopicSpec(arg));
    }
    return run(brokers, topics, bootstrapFile);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "efu-broker: %s\n", e.what());
    return 1;
  }
}
