// SPDX-License-Identifier: BSD-2-Clause
// Kafka command-line options (kcat-style -b / -X, --kafka-config) and the producer defaults.
#pragma once

#include "common/system/CliFwd.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace efu::kafka {

/// A Kafka setting that cannot be used: unknown key, bad value, unreadable or malformed config
/// file. The message names the key or the file and line, and librdkafka's own explanation.
class KafkaConfigError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Everything the user can say about Kafka. Filled by addKafkaOptions(); plain data.
struct KafkaOptions {
  std::string brokers = "localhost:9092"; ///< -b: bootstrap.servers
  std::vector<std::string> settings;      ///< -X key=value, in command-line order
  std::string configFile;                 ///< --kafka-config: key=value lines, # comments
  int flushTimeoutMs = 5000;              ///< --kafka-flush-timeout: bound of the shutdown flush
  std::string eventsTopic;                ///< -t: empty means <service>_detector
  std::string statsTopic;                 ///< empty means <service>_stats
  std::string statusTopic;                ///< empty means <service>_status
  std::string samplesTopic;               ///< --ar51-topic: empty means <service>_samples
  uint32_t monitorEvery = 0;              ///< --monitor-every: sample 1 datagram in N (0 = off)
  uint32_t monitorConsecutive = 1;        ///< --monitor-consecutive: K in a row per N
  uint32_t maxEventsPerMessage = 50000;   ///< events per ev44 message
  uint32_t pulsesPerMessage = 1;          ///< pulses (reference times) per ev44; 0 = no limit
  uint32_t flushIntervalMs = 200;         ///< longest an event waits in the ev44 batch
  std::string sourceName;                 ///< --source-name; empty: the module's default
  int errorLogIntervalMs = 10000;         ///< at most one broker-problem log line per interval

  [[nodiscard]] std::string eventsTopicFor(std::string_view serviceId) const;
  [[nodiscard]] std::string statsTopicFor(std::string_view serviceId) const;
  [[nodiscard]] std::string statusTopicFor(std::string_view serviceId) const;
  [[nodiscard]] std::string samplesTopicFor(std::string_view serviceId) const;
  /// --source-name, else `fallback` (ev44: the module's default, ModuleLoader.h
  /// defaultSourceName(); ar51: the service id).
  [[nodiscard]] std::string sourceNameFor(std::string_view fallback) const;
};

/// Registers -b/--broker, -X, --kafka-config, --kafka-flush-timeout, -t/--topic, --stats-topic,
/// --status-topic, --max-events-per-message, --pulses-per-message, --flush-interval-ms and --source-name on `app`,
/// storing into `options` (which must outlive parsing). Current values are the shown defaults.
/// Appends kafkaDefaultsHelp() to the app's footer.
void addKafkaOptions(CLI::App &app, KafkaOptions &options);

/// One librdkafka property and where it came from ("default", "-b", "-X", "FILE:LINE").
struct KafkaSetting {
  std::string key;
  std::string value;
  std::string origin;
};

/// Checks the three topic names efu will produce to (as given, or derived from `serviceId`):
/// Kafka accepts 1-249 characters of a-z A-Z 0-9 '.' '_' '-', and not "." or "..". Throws
/// KafkaConfigError naming the option and the name, so a typo stops efu at start instead of
/// failing every message.
void checkTopicNames(const KafkaOptions &options, std::string_view serviceId);

/// Splits "key=value" (value may be empty or contain '='). Throws KafkaConfigError naming
/// `origin` when there is no '=' or the key is empty. Whitespace around key and value is removed.
KafkaSetting parseKafkaSetting(std::string_view text, std::string_view origin);

/// Reads a --kafka-config file: key=value lines; blank lines and lines starting with '#' are
/// ignored. Throws KafkaConfigError("FILE:LINE: ...: 'text'") on a malformed line, or naming the
/// file when it cannot be read.
std::vector<KafkaSetting> readKafkaConfigFile(const std::string &path);

/// The settings a producer gets, in the order they are applied (later ones win): efu's defaults,
/// then -b, then --kafka-config, then -X. Reads the config file; throws KafkaConfigError.
std::vector<KafkaSetting> producerSettings(const KafkaOptions &options);

/// efu's producer defaults only (depend on maxEventsPerMessage and the source name's length).
std::vector<KafkaSetting> producerDefaults(const KafkaOptions &options);

/// Largest ev44 message these options can produce, in bytes.
[[nodiscard]] size_t maxEv44MessageBytes(const KafkaOptions &options);

/// Human-readable list of the producer defaults and how to override them (the --help footer).
std::string kafkaDefaultsHelp(const KafkaOptions &options = {});

} // namespace efu::kafka
