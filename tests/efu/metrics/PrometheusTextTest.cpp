// SPDX-License-Identifier: BSD-2-Clause
// Counter names to Prometheus series: names, queue labels, types, families, escaping.
#include "efu/metrics/PrometheusText.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace efu::metrics {
namespace {

constexpr CounterKind kCounter = CounterKind::Counter;
constexpr CounterKind kGauge = CounterKind::Gauge;

TEST(PrometheusSeries, DotsBecomeUnderscoresAndCountersGetTotal) {
  EXPECT_EQ(seriesOf("rx.packets", kCounter).metric, "efu_rx_packets_total");
  EXPECT_EQ(seriesOf("kafka.queue.messages", kGauge).metric, "efu_kafka_queue_messages");
  EXPECT_EQ(seriesOf("main.uptime", kGauge).metric, "efu_main_uptime");
  EXPECT_EQ(seriesOf("rx.dropped.kernel", kCounter).pattern, "rx.dropped.kernel");
}

TEST(PrometheusSeries, QueueSegmentsBecomeLabelsWhateverThePrefix) {
  for (const char *prefix : {"rx", "receive", "anything.else"}) {
    const Series series = seriesOf(std::string(prefix) + ".q1.packets", kCounter);
    EXPECT_EQ(series.queue, "1") << prefix;
    EXPECT_EQ(series.outputQueue, "") << prefix;
    EXPECT_EQ(series.pattern, std::string(prefix) + ".q<queue>.packets");
  }
  EXPECT_EQ(seriesOf("receive.q1.packets", kCounter).metric, "efu_receive_packets_total");
  EXPECT_EQ(seriesOf("rx.q12.dropped.kernel", kCounter).metric, "efu_rx_dropped_kernel_total");
  EXPECT_EQ(seriesOf("rx.q12.dropped.kernel", kCounter).queue, "12");
  EXPECT_EQ(seriesOf("rx.q007.bytes", kCounter).queue, "7");
  EXPECT_EQ(seriesOf("rx.q0.bytes", kCounter).queue, "0");
}

TEST(PrometheusSeries, OutputQueuePairsBecomeLabels) {
  const Series series = seriesOf("parser.essheader.oq.03.packets", kCounter);
  EXPECT_EQ(series.metric, "efu_parser_essheader_packets_total");
  EXPECT_EQ(series.outputQueue, "3");
  EXPECT_EQ(series.queue, "");
  EXPECT_EQ(series.pattern, "parser.essheader.oq.<output_queue>.packets");
  EXPECT_EQ(seriesOf("x.oq.00.packets", kCounter).outputQueue, "0");
  const Series both = seriesOf("receive.q2.oq.11.packets", kCounter);
  EXPECT_EQ(both.metric, "efu_receive_packets_total");
  EXPECT_EQ(both.queue, "2");
  EXPECT_EQ(both.outputQueue, "11");
}

TEST(PrometheusSeries, LookAlikesStayInTheName) {
  EXPECT_EQ(seriesOf("rx.q.packets", kCounter).metric, "efu_rx_q_packets_total");
  EXPECT_EQ(seriesOf("rx.qa1.packets", kCounter).metric, "efu_rx_qa1_packets_total");
  EXPECT_EQ(seriesOf("rx.q1x.packets", kCounter).metric, "efu_rx_q1x_packets_total");
  EXPECT_EQ(seriesOf("a.oq.packets", kCounter).metric, "efu_a_oq_packets_total");
  EXPECT_EQ(seriesOf("a.oq", kCounter).metric, "efu_a_oq_total");
  EXPECT_EQ(seriesOf("readouts.queue.03.packets", kCounter).metric,
            "efu_readouts_queue_03_packets_total");
  // Only the first of each kind becomes a label (a second would repeat the label name).
  const Series twice = seriesOf("a.q1.b.q2", kCounter);
  EXPECT_EQ(twice.queue, "1");
  EXPECT_EQ(twice.metric, "efu_a_b_q2_total");
}

TEST(PrometheusSeries, CharactersOutsideTheMetricAlphabetBecomeUnderscores) {
  EXPECT_EQ(seriesOf("a-b.c d.e/f.Ok_9", kGauge).metric, "efu_a_b_c_d_e_f_Ok_9");
  EXPECT_EQ(seriesOf("caf\xc3\xa9", kGauge).metric, "efu_caf__");
}

TEST(PrometheusSeries, LabelValuesEscapeBackslashQuoteAndNewline) {
  EXPECT_EQ(escapeLabelValue("loki"), "loki");
  EXPECT_EQ(escapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
}

std::vector<Stats::Entry> entries(std::vector<Stats::Entry> list) {
  return list;
}

TEST(PrometheusExposition, OneHelpAndTypePerFamilyWithEverySeriesLabelled) {
  const std::string text = exposition(entries({{"rx.packets", 10, kCounter},
                                               {"process.rss_bytes", 4096, kGauge},
                                               {"rx.q0.packets", 4, kCounter},
                                               {"rx.q1.packets", 6, kCounter}}),
                                      {"loki", "7"});
  EXPECT_EQ(text, "# HELP efu_rx_packets_total efu counter rx.packets, rx.q<queue>.packets\n"
                  "# TYPE efu_rx_packets_total counter\n"
                  "efu_rx_packets_total{instrument=\"loki\",region=\"7\"} 10\n"
                  "efu_rx_packets_total{instrument=\"loki\",region=\"7\",queue=\"0\"} 4\n"
                  "efu_rx_packets_total{instrument=\"loki\",region=\"7\",queue=\"1\"} 6\n"
                  "# HELP efu_process_rss_bytes efu gauge process.rss_bytes\n"
                  "# TYPE efu_process_rss_bytes gauge\n"
                  "efu_process_rss_bytes{instrument=\"loki\",region=\"7\"} 4096\n");
}

TEST(PrometheusExposition, OutputQueueLabelAndNegativeGauges) {
  const std::string text = exposition(
      entries({{"parser.essheader.oq.03.packets", 5, kCounter}, {"thread.rx.cpu_pct", -1, kGauge}}),
      {"freia", "0"});
  EXPECT_NE(text.find("efu_parser_essheader_packets_total{instrument=\"freia\",region=\"0\","
                      "output_queue=\"3\"} 5\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("efu_thread_rx_cpu_pct{instrument=\"freia\",region=\"0\"} -1\n"),
            std::string::npos)
      << text;
}

TEST(PrometheusExposition, InstrumentAndRegionAreEscaped) {
  const std::string text = exposition(entries({{"a", 1, kCounter}}), {"lo\"ki\\", "r\n1"});
  EXPECT_NE(text.find("efu_a_total{instrument=\"lo\\\"ki\\\\\",region=\"r\\n1\"} 1\n"),
            std::string::npos)
      << text;
}

TEST(PrometheusExposition, CollidingSeriesAreLeftOutFirstWins) {
  // a.b_c and a_b.c are both efu_a_b_c; a gauge x.total would share a counter x's family.
  const std::string text = exposition(
      entries(
          {{"a.b_c", 1, kGauge}, {"a_b.c", 2, kGauge}, {"x", 3, kCounter}, {"x.total", 4, kGauge}}),
      {"i", "r"});
  EXPECT_NE(text.find("efu_a_b_c{instrument=\"i\",region=\"r\"} 1\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("} 2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("efu_x_total{instrument=\"i\",region=\"r\"} 3\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("} 4\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("# TYPE efu_x_total gauge"), std::string::npos) << text;
}

TEST(PrometheusExposition, EmptyRegistryIsEmptyText) {
  EXPECT_EQ(exposition({}, {"i", "r"}), "");
}

TEST(PrometheusExposition, KindsComeFromTheRegistry) {
  Stats stats;
  stats.add("rx.packets").set(3);
  stats.add("process.fds", CounterKind::Gauge).set(12);
  const std::string text = exposition(stats.snapshot(), {"udp", "0"});
  EXPECT_NE(text.find("# TYPE efu_rx_packets_total counter\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# TYPE efu_process_fds gauge\n"), std::string::npos) << text;
}

TEST(PrometheusSeries, AbbreviatedTimeUnitsBecomeSeconds) {
  const Series delay = seriesOf("udp.delay.p50_us", kGauge);
  EXPECT_EQ(delay.metric, "efu_udp_delay_p50_seconds");
  EXPECT_EQ(delay.unitsPerSecond, 1000000U);
  EXPECT_EQ(seriesOf("a.wait_ms", kCounter).metric, "efu_a_wait_seconds_total");
  EXPECT_EQ(seriesOf("a.max_tof_ns", kGauge).unitsPerSecond, 1000000000U);
  EXPECT_EQ(seriesOf("a.status", kGauge).unitsPerSecond, 0U); // no unit suffix
  EXPECT_EQ(seriesOf("a.bus", kGauge).metric, "efu_a_bus");   // not "_us"
}

TEST(PrometheusExposition, TimeValuesAreWrittenExactlyInSeconds) {
  const std::string text =
      exposition({{"d.a_us", 1500, kGauge},
                  {"d.b_us", 2000000, kGauge},
                  {"d.c_us", -250, kGauge},
                  {"d.e_ms", 0, kGauge},
                  {"d.f_ns", 1, kGauge}},
                 {"i", "0"});
  EXPECT_NE(text.find("efu_d_a_seconds{instrument=\"i\",region=\"0\"} 0.0015\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("efu_d_b_seconds{instrument=\"i\",region=\"0\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("efu_d_c_seconds{instrument=\"i\",region=\"0\"} -0.00025\n"),
            std::string::npos);
  EXPECT_NE(text.find("efu_d_e_seconds{instrument=\"i\",region=\"0\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("efu_d_f_seconds{instrument=\"i\",region=\"0\"} 0.000000001\n"),
            std::string::npos);
}

} // namespace
} // namespace efu::metrics
