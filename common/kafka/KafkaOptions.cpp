// SPDX-License-Identifier: BSD-2-Clause
// Kafka command-line options, config file parsing and the producer defaults.
#include "common/kafka/KafkaOptions.h"

#include "common/serialize/Ev44Builder.h"
#include "common/system/CliChecks.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace efu::kafka {

namespace {

/// Room above the largest ev44 for Kafka's record and request framing.
constexpr size_t kProtocolOverheadBytes = 16 * 1024;
/// librdkafka's own message.max.bytes default; we never go below it.
constexpr size_t kLibrdkafkaMessageMaxBytes = 1'000'000;
/// Producer queue bound: 32 MiB keeps efu's resident memory under 64 MiB while the broker is
/// away (scripts/soak); it buffers ~0.8 s of 5 M events/s, ~200 s of 20 k events/s.
constexpr const char *kQueueMaxKbytes = "32768";

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = text.find_last_not_of(" \t\r\n");
  return text.substr(first, last - first + 1);
}

std::string orDefault(const std::string &value, std::string_view serviceId,
                      std::string_view suffix) {
  if (!value.empty()) {
    return value;
  }
  std::string name(serviceId);
  name += suffix;
  return name;
}

} // namespace

std::string KafkaOptions::eventsTopicFor(std::string_view serviceId) const {
  return orDefault(eventsTopic, serviceId, "_detector");
}
std::string KafkaOptions::statsTopicFor(std::string_view serviceId) const {
  return orDefault(statsTopic, serviceId, "_stats");
}
std::string KafkaOptions::statusTopicFor(std::string_view serviceId) const {
  return orDefault(statusTopic, serviceId, "_status");
}
std::string KafkaOptions::samplesTopicFor(std::string_view serviceId) const {
  return orDefault(samplesTopic, serviceId, "_samples");
}
std::string KafkaOptions::sourceNameFor(std::string_view fallback) const {
  return orDefault(sourceName, fallback, "");
}

KafkaSetting parseKafkaSetting(std::string_view text, std::string_view origin) {
  const auto equals = text.find('=');
  const auto key = trim(text.substr(0, equals));
  if (equals == std::string_view::npos || key.empty()) {
    throw KafkaConfigError(std::string(origin) + ": expected key=value, got '" + std::string(text) +
                           "'");
  }
  return {std::string(key), std::string(trim(text.substr(equals + 1))), std::string(origin)};
}

std::vector<KafkaSetting> readKafkaConfigFile(const std::string &path) {
  std::ifstream in(path);
  if (!in) {
    throw KafkaConfigError("cannot read Kafka config file '" + path + "': " + std::strerror(errno));
  }
  std::vector<KafkaSetting> settings;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const auto text = trim(line);
    if (text.empty() || text.front() == '#') {
      continue;
    }
    settings.push_back(parseKafkaSetting(text, path + ":" + std::to_string(number)));
  }
  if (in.bad()) {
    throw KafkaConfigError("error reading Kafka config file '" + path + "'");
  }
  return settings;
}

size_t maxEv44MessageBytes(const KafkaOptions &options) {
  const size_t events = std::max<size_t>(options.maxEventsPerMessage, 1);
  // The source name defaults to the module's, unknown here: allow a generous 256 bytes.
  const size_t sourceBytes = std::max<size_t>(options.sourceName.size(), 256);
  return serialize::Ev44Builder::maxMessageBytes(events, events, sourceBytes);
}

std::vector<KafkaSetting> producerDefaults(const KafkaOptions &options) {
  const size_t messageMaxBytes =
      std::max(kLibrdkafkaMessageMaxBytes, maxEv44MessageBytes(options) + kProtocolOverheadBytes);
  return {
      {"client.id", "efu", "default"},
      {"linger.ms", "20", "default"},
      // None, as the ESS EFU: event data barely compresses, and lz4 cost LoKI 1.5 of 13 us
      // per datagram (docs/kafka.md, "At the link rate").
      {"compression.codec", "none", "default"},
      {"message.max.bytes", std::to_string(messageMaxBytes), "default"},
      {"queue.buffering.max.messages", "100000", "default"},
      {"queue.buffering.max.kbytes", kQueueMaxKbytes, "default"},
      {"message.timeout.ms", "0", "default"},
      {"enable.idempotence", "true", "default"},
      {"reconnect.backoff.ms", "100", "default"},
      {"reconnect.backoff.max.ms", "1000", "default"},
      {"socket.keepalive.enable", "true", "default"},
  };
}

std::vector<KafkaSetting> producerSettings(const KafkaOptions &options) {
  auto settings = producerDefaults(options);
  settings.push_back({"bootstrap.servers", options.brokers, "-b"});
  if (!options.configFile.empty()) {
    auto fromFile = readKafkaConfigFile(options.configFile);
    settings.insert(settings.end(), fromFile.begin(), fromFile.end());
  }
  for (const auto &text : options.settings) {
    settings.push_back(parseKafkaSetting(text, "-X " + text));
  }
  return settings;
}

void checkTopicNames(const KafkaOptions &options, std::string_view serviceId) {
  const std::pair<std::string, const char *> topics[] = {
      {options.eventsTopicFor(serviceId), "--topic"},
      {options.statsTopicFor(serviceId), "--stats-topic"},
      {options.statusTopicFor(serviceId), "--status-topic"},
      {options.samplesTopicFor(serviceId), "--ar51-topic"}};
  for (const auto &[name, option] : topics) {
    const bool legal =
        !name.empty() && name.size() <= 249 && name != "." && name != ".." &&
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
            std::string::npos;
    if (!legal) {
      throw KafkaConfigError(std::string(option) + " '" + name +
                             "': not a Kafka topic name (1-249 characters of a-z A-Z 0-9 . _ -; "
                             "the default is derived from the service id)");
    }
  }
}

std::string kafkaDefaultsHelp(const KafkaOptions &options) {
  std::ostringstream out;
  out << "Kafka producer defaults (librdkafka properties; override with --kafka-config FILE,\n"
         "then -X key=value, which wins; see docs/kafka.md):\n";
  for (const auto &setting : producerDefaults(options)) {
    out << "  " << setting.key << '=' << setting.value;
    if (setting.key == "message.max.bytes") {
      out << "  (largest ev44 for --max-events-per-message + 16 KiB, at least 1000000)";
    } else if (setting.key == "message.timeout.ms") {
      out << "  (never expire: hold messages while the broker is away)";
    } else if (setting.key == "queue.buffering.max.kbytes") {
      out << "  (when full, efu waits: back-pressure, nothing dropped)";
    }
    out << '\n';
  }
  out << "  log.queue=true  (fixed: librdkafka logs go through efu's log, rate limited)\n";
  return out.str();
}

void addKafkaOptions(CLI::App &app, KafkaOptions &options) {
  const std::string group = "Kafka";
  app.add_option("-b,--broker", options.brokers, "Kafka bootstrap brokers, host:port[,host:port]")
      ->capture_default_str()
      ->check(cli::kNotEmpty)
      ->group(group);
  app.add_option("-X", options.settings,
                 "librdkafka producer property key=value (repeatable; as kcat -X; wins over "
                 "--kafka-config and the defaults below)")
      ->allow_extra_args(false)
      ->type_name("KEY=VALUE")
      ->check(CLI::Validator(
          [](std::string &text) -> std::string {
            const auto equals = text.find('=');
            if (equals == std::string::npos || trim(text.substr(0, equals)).empty()) {
              return "expected key=value, got '" + text + "'";
            }
            return {};
          },
          ""))
      ->group(group);
  app.add_option("--kafka-config", options.configFile,
                 "File of librdkafka key=value lines (# comments), applied before -X")
      ->check(cli::kRegularFile)
      ->group(group);
  app.add_option("--kafka-flush-timeout", options.flushTimeoutMs,
                 "At shutdown, wait at most this many ms for undelivered messages")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber)
      ->type_name("MS")
      ->group(group);
  app.add_option("-t,--topic", options.eventsTopic,
                 "ev44 events topic (default <service>_detector)")
      ->group(group);
  app.add_option("--stats-topic", options.statsTopic,
                 "f144 counters topic (default <service>_stats)")
      ->group(group);
  app.add_option("--status-topic", options.statusTopic,
                 "x5f2 status topic (default <service>_status)")
      ->group(group);
  app.add_option("--ar51-topic", options.samplesTopic,
                 "ar51 raw-readout samples topic (default <service>_samples)")
      ->group(group);
  app.add_option("--monitor-every", options.monitorEvery,
                 "Send a copy of 1 datagram in N, byte for byte, as ar51 (0 = off; CALIB_MODE_SET "
                 "1 on the control port sends every datagram); samples never stall receiving")
      ->capture_default_str()
      ->check(CLI::Range(0u, 1'000'000'000u))
      ->group(group);
  app.add_option("--monitor-consecutive", options.monitorConsecutive,
                 "With --monitor-every N: this many datagrams in a row per N")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1'000'000'000u))
      ->group(group);
  app.add_option("--max-events-per-message", options.maxEventsPerMessage,
                 "Events per ev44 message (8 bytes each; sizes message.max.bytes)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100'000'000u))
      ->group(group);
  app.add_option("--pulses-per-message", options.pulsesPerMessage,
                 "Pulses per ev44 message (0 = no limit). 1 is what ESS consumers expect: "
                 "just-bin-it reads only the first pulse time of a message; kafka-to-nexus "
                 "handles more")
      ->capture_default_str()
      ->check(CLI::Range(0u, 100'000'000u))
      ->group(group);
  app.add_option("--flush-interval-ms", options.flushIntervalMs,
                 "Send a partial ev44 message once its first event is this old (ms)")
      ->capture_default_str()
      ->group(group);
  app.add_option("--source-name", options.sourceName,
                 "ev44 source_name (default: the module's, the ESS EFU's name, e.g. caen; else the "
                 "service id); also the ar51 source_name (default: the service id)")
      ->group(group);
  std::string footer = app.get_footer();
  if (!footer.empty()) {
    footer += "\n\n";
  }
  app.footer(footer + kafkaDefaultsHelp(options));
}

} // namespace efu::kafka
