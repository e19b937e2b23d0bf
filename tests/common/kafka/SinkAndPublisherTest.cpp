// SPDX-License-Identifier: BSD-2-Clause
// Ev44Sink batching and StatsPublisher output, against a recording fake producer.
#include "common/kafka/Ev44Sink.h"
#include "common/kafka/RawSampler.h"
#include "schemas/ar51_generated.h"
#include "common/kafka/StatsPublisher.h"
#include "tests/common/kafka/FakeProducer.h"

#include "schemas/ev44_generated.h"
#include "schemas/f144_generated.h"
#include "schemas/x5f2_generated.h"

#include <gtest/gtest.h>

namespace {

using namespace efu::kafka;
using efu::kafka::test::FakeProducer;

constexpr int64_t kMs = 1'000'000;

const efu::fb::Event44Message *ev44(const FakeProducer::Message &message) {
  flatbuffers::Verifier verifier(message.payload.data(), message.payload.size());
  EXPECT_TRUE(efu::fb::VerifyEvent44MessageBuffer(verifier));
  return efu::fb::GetEvent44Message(message.payload.data());
}

TEST(Ev44Sink, FlushesOnSizeWithConsecutiveMessageIds) {
  FakeProducer producer;
  efu::Stats stats;
  Ev44Sink sink(producer, "udp_detector", "udp", 3, 1000, stats, 0); // pulses packed
  for (int32_t i = 0; i < 7; ++i) {
    sink.add(1000 + (i / 2) * 100, i, 100 + i);
  }
  ASSERT_EQ(producer.messages.size(), 2u);
  EXPECT_EQ(sink.buffered(), 1u);
  sink.flush();
  ASSERT_EQ(producer.messages.size(), 3u);
  sink.flush();
  EXPECT_EQ(producer.messages.size(), 3u) << "no empty messages";
  EXPECT_EQ(producer.written, 3) << "written into the producer's memory, not copied in";

  std::vector<int32_t> pixels;
  for (size_t m = 0; m < producer.messages.size(); ++m) {
    EXPECT_EQ(producer.messages[m].topic, "udp_detector");
    const auto *message = ev44(producer.messages[m]);
    EXPECT_EQ(message->message_id(), static_cast<int64_t>(m));
    EXPECT_EQ(message->source_name()->str(), "udp");
    pixels.insert(pixels.end(), message->pixel_id()->begin(), message->pixel_id()->end());
  }
  EXPECT_EQ(pixels, (std::vector<int32_t>{100, 101, 102, 103, 104, 105, 106}));
  // Second message: events 3,4,5 with pulses 1100 (event 3) and 1200 (events 4,5).
  const auto *second = ev44(producer.messages[1]);
  EXPECT_EQ(
      std::vector<int64_t>(second->reference_time()->begin(), second->reference_time()->end()),
      (std::vector<int64_t>{1100, 1200}));
  EXPECT_EQ(std::vector<int32_t>(second->reference_time_index()->begin(),
                                 second->reference_time_index()->end()),
            (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(stats.find("kafka.ev44.messages")->get(), 3);
  EXPECT_EQ(stats.find("kafka.ev44.events")->get(), 7);
}

TEST(Ev44Sink, OnePulsePerMessageByDefault) {
  FakeProducer producer;
  efu::Stats stats;
  Ev44Sink sink(producer, "t", "s", 100, 1000, stats);
  // Pulses 1000 (3 events), 2000 (1), 1000 again (1, a late event of the earlier pulse), 3000 (2).
  const std::vector<std::pair<int64_t, int32_t>> events{
      {1000, 1}, {1000, 2}, {1000, 3}, {2000, 4}, {1000, 5}, {3000, 6}, {3000, 7}};
  for (const auto &[pulse, pixel] : events) {
    sink.add(pulse, pixel * 10, pixel);
  }
  sink.flush();
  ASSERT_EQ(producer.messages.size(), 4u);
  const std::vector<std::pair<int64_t, std::vector<int32_t>>> expected{
      {1000, {1, 2, 3}}, {2000, {4}}, {1000, {5}}, {3000, {6, 7}}};
  for (size_t m = 0; m < expected.size(); ++m) {
    const auto *message = ev44(producer.messages[m]);
    ASSERT_EQ(message->reference_time()->size(), 1u) << "message " << m;
    EXPECT_EQ(message->reference_time()->Get(0), expected[m].first);
    EXPECT_EQ(message->reference_time_index()->Get(0), 0);
    EXPECT_EQ(std::vector<int32_t>(message->pixel_id()->begin(), message->pixel_id()->end()),
              expected[m].second);
  }

  FakeProducer packedProducer;
  efu::Stats packedStats;
  Ev44Sink packed(packedProducer, "t", "s", 100, 1000, packedStats, 2);
  for (const auto &[pulse, pixel] : events) {
    packed.add(pulse, pixel * 10, pixel);
  }
  packed.flush();
  ASSERT_EQ(packedProducer.messages.size(), 2u) << "--pulses-per-message 2: 1000+2000, 1000+3000";
  EXPECT_EQ(ev44(packedProducer.messages[0])->reference_time()->size(), 2u);
  EXPECT_EQ(ev44(packedProducer.messages[1])->reference_time()->size(), 2u);
}

// The inline path for an event of the current pulse (Ev44Builder::appendToPulse) must leave the
// message edges to the full path: the event that fills a message sends it at once, and the
// first event after a send opens its pulse even when the pulse time is the one before.
TEST(Ev44Sink, EventsOfOnePulseFillAndReopenMessages) {
  FakeProducer producer;
  efu::Stats stats;
  Ev44Sink sink(producer, "t", "s", 4, 1000, stats);
  for (int32_t pixel = 1; pixel <= 4; ++pixel) {
    sink.add(5000, pixel * 10, pixel);
  }
  ASSERT_EQ(producer.messages.size(), 1u) << "the fourth event fills the message and sends it";
  EXPECT_EQ(sink.buffered(), 0u);
  for (int32_t pixel = 5; pixel <= 7; ++pixel) {
    sink.add(5000, pixel * 10, pixel);
  }
  EXPECT_EQ(producer.messages.size(), 1u);
  EXPECT_EQ(sink.buffered(), 3u);
  sink.flush();
  sink.add(5000, 80, 8); // the same pulse again, after a flush
  sink.flush();
  ASSERT_EQ(producer.messages.size(), 3u);
  const std::vector<std::vector<int32_t>> pixels{{1, 2, 3, 4}, {5, 6, 7}, {8}};
  for (size_t m = 0; m < pixels.size(); ++m) {
    const auto *message = ev44(producer.messages[m]);
    ASSERT_EQ(message->reference_time()->size(), 1u) << "message " << m;
    EXPECT_EQ(message->reference_time()->Get(0), 5000);
    EXPECT_EQ(message->reference_time_index()->Get(0), 0);
    EXPECT_EQ(std::vector<int32_t>(message->pixel_id()->begin(), message->pixel_id()->end()),
              pixels[m]);
    std::vector<int32_t> tofs(pixels[m]);
    for (int32_t &tof : tofs) {
      tof *= 10;
    }
    EXPECT_EQ(
        std::vector<int32_t>(message->time_of_flight()->begin(), message->time_of_flight()->end()),
        tofs);
  }
}

TEST(Ev44Sink, FlushesOnTime) {
  FakeProducer producer;
  efu::Stats stats;
  Ev44Sink sink(producer, "t", "s", 1000, 100, stats);
  sink.tick(0);
  sink.add(1, 2, 3);
  sink.tick(10 * kMs); // first seen here
  sink.tick(60 * kMs);
  EXPECT_TRUE(producer.messages.empty());
  sink.tick(110 * kMs - 1);
  EXPECT_TRUE(producer.messages.empty());
  sink.tick(110 * kMs);
  ASSERT_EQ(producer.messages.size(), 1u);
  EXPECT_EQ(producer.polls, 5) << "tick() polls the producer";
  // The clock restarts with the next batch.
  sink.add(1, 2, 4);
  sink.tick(150 * kMs);
  sink.tick(249 * kMs);
  EXPECT_EQ(producer.messages.size(), 1u);
  sink.tick(250 * kMs);
  EXPECT_EQ(producer.messages.size(), 2u);
  EXPECT_EQ(ev44(producer.messages[1])->message_id(), 1);
}

TEST(Ev44Sink, ZeroIntervalFlushesAtEveryTick) {
  FakeProducer producer;
  efu::Stats stats;
  Ev44Sink sink(producer, "t", "s", 1000, 0, stats);
  sink.add(1, 2, 3);
  sink.tick(5);
  EXPECT_EQ(producer.messages.size(), 1u);
}

/// The raw bytes of an ar51 message, after checking its identifier, source and id.
std::vector<uint8_t> ar51Payload(const FakeProducer::Message &message, int64_t messageId) {
  flatbuffers::Verifier verifier(message.payload.data(), message.payload.size());
  EXPECT_TRUE(efu::fb::VerifyRawReadoutMessageBuffer(verifier));
  const auto *raw = efu::fb::GetRawReadoutMessage(message.payload.data());
  EXPECT_EQ(raw->source_name()->str(), "loki");
  EXPECT_EQ(raw->message_id(), messageId);
  return {raw->raw_data()->begin(), raw->raw_data()->end()};
}

TEST(RawSampler, EveryNthWithConsecutiveByteForByte) {
  FakeProducer producer;
  efu::Stats stats;
  efu::kafka::RawSampler sampler(producer, "loki_samples", "loki", 5, 2, stats);
  for (uint8_t i = 0; i < 12; ++i) {
    const std::vector<uint8_t> datagram{i, static_cast<uint8_t>(i * 3), 0xFF, 0x00};
    sampler.offer(datagram);
  }
  // Datagrams 0, 1 of every 5: 0 1 5 6 10 11.
  ASSERT_EQ(producer.messages.size(), 6u);
  const uint8_t expected[] = {0, 1, 5, 6, 10, 11};
  for (size_t m = 0; m < producer.messages.size(); ++m) {
    EXPECT_EQ(producer.messages[m].topic, "loki_samples");
    EXPECT_EQ(ar51Payload(producer.messages[m], static_cast<int64_t>(m)),
              (std::vector<uint8_t>{expected[m], static_cast<uint8_t>(expected[m] * 3), 0xFF, 0}));
  }
  EXPECT_EQ(stats.find("kafka.ar51.messages")->get(), 6);
  EXPECT_EQ(stats.find("kafka.ar51.dropped")->get(), 0);
}

TEST(RawSampler, OffUnlessCalibrationModeThenEverythingAndAFullQueueDrops) {
  FakeProducer producer;
  efu::Stats stats;
  efu::kafka::RawSampler sampler(producer, "t", "loki", 0, 1, stats);
  const std::vector<uint8_t> datagram{1, 2, 3};
  sampler.offer(datagram);
  EXPECT_TRUE(producer.messages.empty()) << "--monitor-every 0: off";
  sampler.setAll(true);
  EXPECT_TRUE(sampler.all());
  for (int i = 0; i < 3; ++i) {
    sampler.offer(datagram);
  }
  producer.full = true;
  sampler.offer(datagram); // never waits: dropped and counted
  producer.full = false;
  sampler.offer(datagram);
  sampler.setAll(false);
  sampler.offer(datagram);
  ASSERT_EQ(producer.messages.size(), 4u);
  EXPECT_EQ(ar51Payload(producer.messages[3], 4), datagram) << "message_id 3 was the dropped one";
  EXPECT_EQ(stats.find("kafka.ar51.messages")->get(), 4);
  EXPECT_EQ(stats.find("kafka.ar51.dropped")->get(), 1);
}

TEST(StatsPublisher, OneF144PerCounterAndOneX5f2) {
  FakeProducer producer;
  efu::Stats stats;
  stats.add("receive.packets").add(12345);
  stats.add("udp.seq.lost");
  efu::serialize::StatusInfo info{"efu", "0.1.0", "", "host", 77, 1000};
  StatsPublisher publisher(producer, stats, "udp", "udp_stats", "udp_status", info);
  const int64_t nowNs = 1'700'000'000'987'654'321;
  EXPECT_EQ(publisher.publish(nowNs, R"({"module":"udp"})"), 3u);
  ASSERT_EQ(producer.messages.size(), 3u);

  const std::vector<std::pair<std::string, int64_t>> expected{{"efu.udp.receive.packets", 12345},
                                                              {"efu.udp.udp.seq.lost", 0}};
  for (size_t i = 0; i < expected.size(); ++i) {
    const auto &message = producer.messages[i];
    EXPECT_EQ(message.topic, "udp_stats");
    EXPECT_EQ(message.timestampMs, nowNs / kMs);
    flatbuffers::Verifier verifier(message.payload.data(), message.payload.size());
    ASSERT_TRUE(efu::fb::Verifyf144_LogDataBuffer(verifier));
    const auto *log = efu::fb::Getf144_LogData(message.payload.data());
    EXPECT_EQ(log->source_name()->str(), expected[i].first);
    EXPECT_EQ(log->timestamp(), nowNs);
    ASSERT_EQ(log->value_type(), efu::fb::Value::Long);
    EXPECT_EQ(log->value_as_Long()->value(), expected[i].second);
  }
  const auto &status = producer.messages[2];
  EXPECT_EQ(status.topic, "udp_status");
  flatbuffers::Verifier verifier(status.payload.data(), status.payload.size());
  ASSERT_TRUE(efu::fb::VerifyStatusBuffer(verifier));
  const auto *x5f2 = efu::fb::GetStatus(status.payload.data());
  EXPECT_EQ(x5f2->service_id()->str(), "udp");
  EXPECT_EQ(x5f2->process_id(), 77u);
  EXPECT_EQ(x5f2->update_interval(), 1000u);
  EXPECT_EQ(x5f2->status_json()->str(), R"({"module":"udp"})");
}

} // namespace
