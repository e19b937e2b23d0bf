// SPDX-License-Identifier: BSD-2-Clause
// efu --metrics-port: every counter of the control port in /metrics with its value, read by a
// real Prometheus server, and the text accepted by promtool.
#include "efu/metrics/PrometheusText.h"
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace efu::testkit;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

using Values = std::map<std::string, int64_t>;

/// Every counter over the control port, by name (one connection, STAT_GET 1..n).
Values controlCounters(uint16_t cmdPort) {
  const std::string countReply = control(cmdPort, "STAT_GET_COUNT");
  const std::string prefix = "STAT_GET_COUNT ";
  if (countReply.rfind(prefix, 0) != 0) {
    return {};
  }
  const int count = std::stoi(countReply.substr(prefix.size()));
  std::string request;
  for (int i = 1; i <= count; ++i) {
    request += i == 1 ? "STAT_GET " : "\nSTAT_GET ";
    request += std::to_string(i);
  }
  Values values;
  std::istringstream lines(control(cmdPort, request));
  for (std::string word, name, value; lines >> word >> name >> value;) {
    values[name] = std::stoll(value);
  }
  return values;
}

/// The samples of an exposition, "name{labels}" -> value, and the TYPE of each family.
struct Scrape {
  Values samples;
  std::map<std::string, std::string> types;
};

Scrape parseExposition(const std::string &text) {
  Scrape scrape;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      scrape.types[name] = type;
    } else if (!line.empty() && line.front() != '#') {
      const auto space = line.rfind(' ');
      scrape.samples[line.substr(0, space)] = std::stoll(line.substr(space + 1));
    }
  }
  return scrape;
}

/// The sample key efu's counter `name` has in the exposition, whichever its kind; "" if absent.
std::string sampleOf(const Scrape &scrape, const std::string &name, const std::string &labels) {
  for (const auto kind : {efu::CounterKind::Counter, efu::CounterKind::Gauge}) {
    const auto series = efu::metrics::seriesOf(name, kind);
    std::string key = series.metric + "{" + labels;
    if (!series.queue.empty()) {
      key += ",queue=\"" + series.queue + "\"";
    }
    if (!series.outputQueue.empty()) {
      key += ",output_queue=\"" + series.outputQueue + "\"";
    }
    key += "}";
    if (scrape.samples.contains(key)) {
      return key;
    }
  }
  return {};
}

class EfuMetrics : public ::testing::Test {
protected:
  void start(const std::vector<std::string> &extra) {
    udpPort_ = freeUdpPort();
    cmdPort_ = freeTcpPort();
    metricsPort_ = freeTcpPort();
    std::vector<std::string> argv{EFU_BINARY,
                                  "-d",
                                  "udp",
                                  "-i",
                                  "127.0.0.1",
                                  "-p",
                                  std::to_string(udpPort_),
                                  "-m",
                                  std::to_string(cmdPort_),
                                  "--metrics-port",
                                  std::to_string(metricsPort_),
                                  "--stats-interval",
                                  "0.2",
                                  "--no-kafka"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    efu_ = std::make_unique<Process>(argv);
    ASSERT_TRUE(eventually([&] { return httpGet(metricsPort_, "/metrics").status == 200; }))
        << efu_->output();
  }

  /// udpgen sends `count` datagrams; waits until the module has counted all of them.
  void send(int count) {
    Process generator({UDPGEN_BINARY, "-p", std::to_string(udpPort_), "--quiet", "-n",
                       std::to_string(count), "-s", "200", "--rate", "100M"});
    ASSERT_EQ(generator.wait(60s).value_or(-1), 0) << generator.output();
    ASSERT_TRUE(eventually([&] { return counter(cmdPort_, "udp.seq.expected") == count; }))
        << efu_->output();
  }

  void stop() {
    efu_->signal(SIGTERM);
    EXPECT_EQ(efu_->wait(10s).value_or(-1), 0) << efu_->output();
  }

  uint16_t udpPort_ = 0;
  uint16_t cmdPort_ = 0;
  uint16_t metricsPort_ = 0;
  std::unique_ptr<Process> efu_;
};

TEST_F(EfuMetrics, EveryControlCounterIsInMetricsWithItsValue) {
  start({"--instrument", "loki", "-r", "7"});
  constexpr int kCount = 20000;
  send(kCount);
  const std::string labels = R"(instrument="loki",region="7")";

  const auto response = httpGet(metricsPort_, "/metrics");
  ASSERT_EQ(response.status, 200);
  EXPECT_EQ(response.header("Content-Type"), "text/plain; version=0.0.4");
  const Scrape first = parseExposition(response.body);
  const Values names = controlCounters(cmdPort_);
  ASSERT_GT(names.size(), 20U);
  for (const auto &[name, value] : names) {
    EXPECT_NE(sampleOf(first, name, labels), "") << name << " missing in\n" << response.body;
  }
  EXPECT_EQ(first.samples.size(), names.size()) << "a series for each counter, no more";
  EXPECT_EQ(first.samples.at(R"(efu_udp_seq_expected_total{instrument="loki",region="7"})"),
            kCount);
  EXPECT_EQ(first.types.at("efu_udp_seq_expected_total"), "counter");
  EXPECT_EQ(first.types.at("efu_udp_seq_lost"), "gauge"); // net of late arrivals: it can fall
  EXPECT_EQ(first.types.at("efu_main_uptime"), "gauge");
  EXPECT_EQ(first.types.at("efu_process_rss_bytes"), "gauge");
  EXPECT_EQ(first.types.at("efu_metrics_scrapes_total"), "counter");

  // Values move (uptime, CPU shares, the control port's own counters): a scrape taken between
  // two control-port readings must lie between them, counter by counter. Polled, because a
  // gauge may move both ways in between.
  std::string mismatch;
  EXPECT_TRUE(eventually([&] {
    const Values before = controlCounters(cmdPort_);
    const Scrape scrape = parseExposition(httpGet(metricsPort_, "/metrics").body);
    const Values after = controlCounters(cmdPort_);
    mismatch.clear();
    for (const auto &[name, low] : before) {
      const std::string key = sampleOf(scrape, name, labels);
      const int64_t high = after.count(name) ? after.at(name) : low;
      const int64_t value = key.empty() ? INT64_MIN : scrape.samples.at(key);
      if (value < std::min(low, high) || value > std::max(low, high)) {
        mismatch += name + ": control " + std::to_string(low) + ".." + std::to_string(high) +
                    ", metrics " + std::to_string(value) + "\n";
      }
    }
    return !before.empty() && mismatch.empty();
  })) << mismatch;
  EXPECT_GE(counter(cmdPort_, "metrics.scrapes").value_or(0), 2);
  stop();
}

TEST_F(EfuMetrics, AMetricsAddressOffLoopbackIsWarnedAbout) {
  start({"--metrics-addr", "0.0.0.0"});
  EXPECT_NE(efu_->output().find("is reachable from the network: anyone who connects reads every "
                                "counter"),
            std::string::npos)
      << efu_->output();
  stop();
}

TEST_F(EfuMetrics, ARealPrometheusScrapesEfuAndPromtoolAcceptsTheText) {
  if (std::system("command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null "
                  "2>&1") != 0) {
    GTEST_SKIP() << "prometheus or promtool not installed (Debian package prometheus)";
  }
  start({});
  constexpr int kCount = 3000;
  send(kCount);

  const fs::path dir = fs::temp_directory_path() / ("efu-prometheus-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "data");
  std::ofstream(dir / "prometheus.yml")
      << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
      << "scrape_configs:\n  - job_name: efu\n    static_configs:\n"
      << "      - targets: ['127.0.0.1:" << metricsPort_ << "']\n";
  const uint16_t webPort = freeTcpPort();
  Process prometheus({"/usr/bin/env", "prometheus",
                      "--config.file=" + (dir / "prometheus.yml").string(),
                      "--storage.tsdb.path=" + (dir / "data").string(),
                      "--web.listen-address=127.0.0.1:" + std::to_string(webPort)});

  // Prometheus's own HTTP API gives back what it scraped.
  nlohmann::json result;
  const bool scraped = eventually(
      [&] {
        const auto reply = httpGet(webPort, "/api/v1/query?query=efu_udp_seq_expected_total");
        if (reply.status != 200) {
          return false;
        }
        const auto json = nlohmann::json::parse(reply.body, nullptr, false);
        if (json.is_discarded() || json.value("status", "") != "success" ||
            json["data"]["result"].empty()) {
          return false;
        }
        result = json["data"]["result"][0];
        return result["value"][1] == std::to_string(kCount);
      },
      60s);
  EXPECT_TRUE(scraped) << result.dump() << "\n" << prometheus.output();
  if (scraped) {
    EXPECT_EQ(result["metric"]["instrument"], "udp");
    EXPECT_EQ(result["metric"]["region"], "0");
    EXPECT_EQ(result["metric"]["job"], "efu");
  }
  EXPECT_TRUE(prometheus.running()) << prometheus.output();
  prometheus.signal(SIGTERM);
  EXPECT_TRUE(prometheus.wait(30s).has_value()) << "prometheus did not stop";

  // promtool, Prometheus's own parser and linter, on one scrape: exit 1 is a format error,
  // 3 lint findings (names, units, suffixes). efu's exposition has none.
  const fs::path scrape = dir / "scrape.txt";
  const std::string text = httpGet(metricsPort_, "/metrics").body;
  std::ofstream(scrape) << text;
  EXPECT_NE(text.find("efu_udp_delay_max_seconds{"), std::string::npos) << text;
  Process promtool({"/bin/sh", "-c", "promtool check metrics < '" + scrape.string() + "'"});
  EXPECT_EQ(promtool.wait(60s).value_or(-1), 0) << promtool.output();
  stop();
  fs::remove_all(dir);
}

} // namespace
