// SPDX-License-Identifier: BSD-2-Clause
// IntervalReport: the receiver line and its JSON from counter values, with and without Kafka.
#include "efu/IntervalReport.h"

#include <gtest/gtest.h>

namespace efu {
namespace {

struct ReceiverCounters {
  explicit ReceiverCounters(Stats &stats)
      : packets(stats.add("receive.packets")), bytes(stats.add("receive.bytes")),
        ringFull(stats.add("receive.ring_full_waits")), kernel(stats.add("receive.dropped")),
        truncated(stats.add("receive.truncated")), unread(stats.add("receive.unread")),
        rcvbuf(stats.add("kernel.udp.rcvbuf_errors")) {}
  Counter &packets, &bytes, &ringFull, &kernel, &truncated, &unread, &rcvbuf;
};

TEST(IntervalReport, RatesDropsAndLossFromCounters) {
  Stats stats;
  ReceiverCounters rx(stats);
  Counter lost;
  Counter expected;
  IntervalReport report(stats, &lost, &expected);
  rx.packets.set(1000);
  rx.bytes.set(1'000'000);
  rx.kernel.set(3);
  rx.unread.set(2);
  lost.set(5);
  expected.set(1000);
  const std::string line = report.total(2'000'000'000);
  EXPECT_NE(line.find("(1000 total) | lost 5 PER 0.005 | drops kernel 3 trunc 0 unread 2 |"),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find("kafka"), std::string::npos) << "no producer, no kafka part: " << line;
}

TEST(IntervalReport, KafkaDeliveryIsInTheLineAndTheJson) {
  Stats stats;
  ReceiverCounters rx(stats);
  stats.add("kafka.delivered").set(40);
  stats.add("kafka.failed").set(2);
  stats.add("kafka.queue.messages").set(7);
  IntervalReport report(stats, nullptr, nullptr);
  const std::string line = report.line(1);
  EXPECT_NE(line.find(" | kafka delivered 40 failed 2 queued 7"), std::string::npos) << line;
  EXPECT_NE(report.json().find(R"("kafka_delivered":40,"kafka_failed":2,"kafka_queued":7)"),
            std::string::npos)
      << report.json();
}

TEST(IntervalReport, RuntimeStatusBitsFollowTheLastInterval) {
  Stats stats;
  ReceiverCounters rx(stats);
  Counter &failed = stats.add("kafka.failed");
  stats.add("kafka.delivered");
  stats.add("kafka.queue.messages");
  Counter lost;
  Counter expected;
  IntervalReport report(stats, &lost, &expected);
  (void)report.line(1);
  EXPECT_EQ(report.runtimeStatus(), 0U) << "nothing arrived";
  rx.packets.set(10);
  (void)report.line(2);
  EXPECT_EQ(report.runtimeStatus(), IntervalReport::kReceiving);
  rx.packets.set(20);
  lost.set(1);
  failed.set(3);
  (void)report.line(3);
  EXPECT_EQ(report.runtimeStatus(), IntervalReport::kReceiving | IntervalReport::kLosing |
                                        IntervalReport::kKafkaFailing);
  rx.kernel.set(1);
  (void)report.line(4);
  EXPECT_EQ(report.runtimeStatus(), IntervalReport::kLosing) << "drops without new datagrams";
  (void)report.line(5);
  EXPECT_EQ(report.runtimeStatus(), 0U) << "each bit is about the last interval only";
}

} // namespace
} // namespace efu
