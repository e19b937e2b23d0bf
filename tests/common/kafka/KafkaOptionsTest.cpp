// SPDX-License-Identifier: BSD-2-Clause
// Command-line options, config file parsing and the order in which settings apply.
#include "common/kafka/KafkaOptions.h"
#include "common/kafka/KafkaProducer.h"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

using namespace efu::kafka;

struct TempFile {
  explicit TempFile(const std::string &text) {
    path =
        std::filesystem::temp_directory_path() / ("efu-kafka-test-" + std::to_string(::getpid()) +
                                                  "-" + std::to_string(counter++) + ".conf");
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
  std::filesystem::path path;
  static inline int counter = 0;
};

void parse(CLI::App &app, std::vector<std::string> args) {
  std::vector<const char *> argv{"efu"};
  for (const auto &arg : args) {
    argv.push_back(arg.c_str());
  }
  app.parse(static_cast<int>(argv.size()), argv.data());
}

std::string valueOf(const std::vector<KafkaSetting> &settings, const std::string &key) {
  std::string value;
  for (const auto &setting : settings) {
    if (setting.key == key) {
      value = setting.value; // the last one wins, as in the producer
    }
  }
  return value;
}

TEST(KafkaOptions, ParsesTheCommandLine) {
  CLI::App app;
  KafkaOptions options;
  addKafkaOptions(app, options);
  parse(app, {"-b",
              "host1:9092,host2:9092",
              "-X",
              "linger.ms=5",
              "-X",
              "acks = all",
              "--kafka-flush-timeout",
              "1234",
              "-t",
              "ev",
              "--stats-topic",
              "st",
              "--status-topic",
              "su",
              "--max-events-per-message",
              "1000",
              "--flush-interval-ms",
              "50",
              "--source-name",
              "src"});
  EXPECT_EQ(options.brokers, "host1:9092,host2:9092");
  EXPECT_EQ(options.settings, (std::vector<std::string>{"linger.ms=5", "acks = all"}));
  EXPECT_EQ(options.flushTimeoutMs, 1234);
  EXPECT_EQ(options.eventsTopicFor("udp"), "ev");
  EXPECT_EQ(options.statsTopicFor("udp"), "st");
  EXPECT_EQ(options.statusTopicFor("udp"), "su");
  EXPECT_EQ(options.maxEventsPerMessage, 1000u);
  EXPECT_EQ(options.flushIntervalMs, 50u);
  EXPECT_EQ(options.sourceNameFor("udp"), "src");
}

TEST(KafkaOptions, TopicsDefaultToTheService) {
  KafkaOptions options;
  EXPECT_EQ(options.eventsTopicFor("freia"), "freia_detector");
  EXPECT_EQ(options.statsTopicFor("freia"), "freia_stats");
  EXPECT_EQ(options.statusTopicFor("freia"), "freia_status");
  EXPECT_EQ(options.sourceNameFor("freia"), "freia");
}

TEST(KafkaOptions, TopicNamesMustBeLegalKafkaNames) {
  KafkaOptions options;
  EXPECT_NO_THROW(checkTopicNames(options, "loki-2.bank_0"));
  for (const char *bad : {"a b", "x/y", "caen!"}) {
    EXPECT_THROW(checkTopicNames(options, bad), KafkaConfigError) << "service id " << bad;
  }
  options.eventsTopic = "bad topic!";
  try {
    checkTopicNames(options, "caen");
    FAIL() << "accepted 'bad topic!'";
  } catch (const KafkaConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("--topic 'bad topic!': not a Kafka topic name"),
              std::string::npos)
        << e.what();
  }
  options.eventsTopic = std::string(250, 'x');
  EXPECT_THROW(checkTopicNames(options, "caen"), KafkaConfigError);
  options.eventsTopic = "..";
  EXPECT_THROW(checkTopicNames(options, "caen"), KafkaConfigError);
  options.eventsTopic = "";
  options.statsTopic = "ok_stats";
  options.statusTopic = "st@tus";
  EXPECT_THROW(checkTopicNames(options, "caen"), KafkaConfigError);
}

TEST(KafkaOptions, RejectsXWithoutEquals) {
  CLI::App app;
  KafkaOptions options;
  addKafkaOptions(app, options);
  EXPECT_THROW(parse(app, {"-X", "linger.ms"}), CLI::ValidationError);
}

TEST(KafkaOptions, XTakesOneValuePerFlag) {
  CLI::App app;
  KafkaOptions options;
  addKafkaOptions(app, options);
  std::vector<std::string> rest;
  app.add_option("rest", rest);
  parse(app, {"-X", "a=1", "positional"});
  EXPECT_EQ(options.settings, (std::vector<std::string>{"a=1"}));
  EXPECT_EQ(rest, (std::vector<std::string>{"positional"}));
}

TEST(KafkaOptions, HelpShowsRealDefaults) {
  CLI::App app;
  KafkaOptions options;
  addKafkaOptions(app, options);
  const std::string help = app.help();
  EXPECT_NE(help.find("localhost:9092"), std::string::npos) << help;
  EXPECT_NE(help.find("50000"), std::string::npos) << help;
  EXPECT_NE(help.find("5000"), std::string::npos) << help;
  for (const auto &setting : producerDefaults(options)) {
    EXPECT_NE(help.find(setting.key + "=" + setting.value), std::string::npos) << setting.key;
  }
}

TEST(KafkaOptions, MessageMaxBytesCoversTheLargestEv44) {
  KafkaOptions options;
  options.maxEventsPerMessage = 1'000'000;
  const auto bytes = std::stoull(valueOf(producerDefaults(options), "message.max.bytes"));
  EXPECT_GE(bytes, maxEv44MessageBytes(options));
  EXPECT_GE(maxEv44MessageBytes(options), 1'000'000u * 8);
  KafkaOptions small;
  small.maxEventsPerMessage = 10;
  EXPECT_EQ(valueOf(producerDefaults(small), "message.max.bytes"), "1000000");
}

TEST(KafkaOptions, FileThenXOverrideDefaults) {
  TempFile file("# DAQ settings\n\n  linger.ms = 5\ncompression.codec=zstd\n# acks=1\n");
  KafkaOptions options;
  options.brokers = "b:1";
  options.configFile = file.path.string();
  auto settings = producerSettings(options);
  EXPECT_EQ(valueOf(settings, "linger.ms"), "5");
  EXPECT_EQ(valueOf(settings, "compression.codec"), "zstd");
  EXPECT_EQ(valueOf(settings, "bootstrap.servers"), "b:1");
  EXPECT_EQ(valueOf(settings, "acks"), "");
  options.settings = {"linger.ms=7", "bootstrap.servers=c:2"};
  settings = producerSettings(options);
  EXPECT_EQ(valueOf(settings, "linger.ms"), "7");
  EXPECT_EQ(valueOf(settings, "bootstrap.servers"), "c:2");
  EXPECT_EQ(settings.back().origin, "-X bootstrap.servers=c:2");
}

// The limit the data array sinks say (issue 37 item 3), also with --no-kafka: message.max.bytes
// as the producer would have it (default, then --kafka-config, then -X) less 36 bytes.
TEST(KafkaOptions, MaxPayloadBytesIsMessageMaxBytesInEffectLessTheRecordOverhead) {
  KafkaOptions options;
  EXPECT_EQ(maxPayloadBytes(options), 1'016'896u - 36) << "efu's default, in docs/kafka.md";
  TempFile file("message.max.bytes=2000000\n");
  options.configFile = file.path.string();
  EXPECT_EQ(maxPayloadBytes(options), 2'000'000u - 36);
  options.settings = {"message.max.bytes=1500000"};
  EXPECT_EQ(maxPayloadBytes(options), 1'500'000u - 36);
  options.settings = {"message.max.bytes=lots"};
  try {
    (void)maxPayloadBytes(options);
    FAIL() << "expected KafkaConfigError";
  } catch (const KafkaConfigError &e) {
    EXPECT_NE(std::string(e.what()).find("'message.max.bytes=lots' (from -X"), std::string::npos)
        << e.what();
  }
}

TEST(KafkaOptions, ConfigFileErrorNamesFileLineAndText) {
  TempFile file("linger.ms=5\n# fine\nthis line is wrong\n");
  try {
    (void)readKafkaConfigFile(file.path.string());
    FAIL() << "expected KafkaConfigError";
  } catch (const KafkaConfigError &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(file.path.string() + ":3"), std::string::npos) << what;
    EXPECT_NE(what.find("this line is wrong"), std::string::npos) << what;
  }
  EXPECT_THROW((void)readKafkaConfigFile("/nonexistent/efu.conf"), KafkaConfigError);
}

TEST(KafkaOptions, SettingValueMayContainEquals) {
  const auto setting = parseKafkaSetting("sasl.jaas.config=a=b", "-X");
  EXPECT_EQ(setting.key, "sasl.jaas.config");
  EXPECT_EQ(setting.value, "a=b");
  EXPECT_THROW((void)parseKafkaSetting("=value", "-X"), KafkaConfigError);
}

} // namespace
