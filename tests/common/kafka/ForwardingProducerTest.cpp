// SPDX-License-Identifier: BSD-2-Clause
// A further partition's event sinks (efu --proc-threads): messages through a ForwardingProducer to
// the one producer, message ids gap-free per source over the partitions, counters as parts.
#include "common/kafka/Ev44Sink.h"
#include "common/kafka/ForwardingProducer.h"
#include "tests/common/kafka/FakeProducer.h"

#include "schemas/ev44_generated.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>
#include <vector>

namespace {

using namespace efu::kafka;
using efu::kafka::test::FakeProducer;

const efu::fb::Event44Message *ev44(const FakeProducer::Message &message) {
  flatbuffers::Verifier verifier(message.payload.data(), message.payload.size());
  EXPECT_TRUE(efu::fb::VerifyEvent44MessageBuffer(verifier));
  return efu::fb::GetEvent44Message(message.payload.data());
}

TEST(ForwardingProducer, MessagesReachTheRealProducerOnlyWhenForwardedInOrder) {
  ForwardingProducer forward(4);
  FakeProducer real;
  const std::vector<uint8_t> a{1, 2, 3};
  const std::vector<uint8_t> b(100000, 7);
  ASSERT_TRUE(forward.produce("t1", a, 11));
  ASSERT_TRUE(forward.produceWritten(
      "t2", b.size(),
      [](void *context, std::span<uint8_t> out) noexcept {
        const auto *src = static_cast<const std::vector<uint8_t> *>(context);
        std::copy(src->begin(), src->end(), out.begin());
      },
      const_cast<std::vector<uint8_t> *>(&b), 22));
  EXPECT_TRUE(real.messages.empty());
  EXPECT_EQ(forward.flush(0), 2) << "two waiting";
  EXPECT_EQ(forward.forwardTo(real), 2U);
  ASSERT_EQ(real.messages.size(), 2U);
  EXPECT_EQ(real.messages[0].topic, "t1");
  EXPECT_EQ(real.messages[0].payload, a);
  EXPECT_EQ(real.messages[0].timestampMs, 11);
  EXPECT_EQ(real.messages[1].topic, "t2");
  EXPECT_EQ(real.messages[1].payload, b);
  EXPECT_EQ(forward.forwardTo(real), 0U);
}

// A message above the real producer's limit: refused at once, as the real producer would, and
// still forwarded so that the real producer refuses it and counts it as failed.
TEST(ForwardingProducer, AMessageAboveTheLimitIsRefusedAndStillForwarded) {
  ForwardingProducer forward(4, 10);
  FakeProducer real;
  EXPECT_TRUE(forward.produce("t", std::vector<uint8_t>(10, 1), 0));
  EXPECT_FALSE(forward.produce("t", std::vector<uint8_t>(11, 1), 0));
  EXPECT_EQ(forward.forwardTo(real), 2U);
  EXPECT_EQ(real.messages.size(), 2U);
}

TEST(ForwardingProducer, AFullRingWaitsForForwardingAndDropsNothing) {
  ForwardingProducer forward(2);
  FakeProducer real;
  const std::vector<uint8_t> payload{9};
  std::atomic<bool> stop{false};
  std::thread owner([&] {
    while (!stop.load()) {
      forward.forwardTo(real);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    forward.forwardTo(real);
  });
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(forward.produce("t", payload, i));
  }
  stop = true;
  owner.join();
  EXPECT_GE(real.messages.size(), 50U);
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(real.messages[static_cast<size_t>(i)].timestampMs, i);
  }
  EXPECT_GT(forward.fullWaits(), 0U);

  ForwardingProducer small(2);
  EXPECT_TRUE(small.tryProduce("t", payload, 0));
  EXPECT_TRUE(small.tryProduce("t", payload, 0));
  EXPECT_FALSE(small.tryProduce("t", payload, 0)) << "tryProduce never waits";
}

// Two partitions' sinks of one source: one sequence of message ids, each partition's counters a
// part of the published ones.
TEST(Ev44SinkPartitions, OneSourceKeepsOneGapFreeIdSequenceOverThePartitions) {
  FakeProducer real;
  efu::Stats stats;
  Ev44Sink first(real, "loki_detector", "caen", 1000, 1000, stats);
  Ev44Sink bank(first, "loki_bank1");
  ForwardingProducer forward;
  Ev44Sink second(first, forward, stats.addPart("kafka.ev44.messages"),
                  stats.addPart("kafka.ev44.events"));
  Ev44Sink secondBank(second, bank);
  EXPECT_EQ(second.sourceName(), "caen");
  EXPECT_EQ(secondBank.sourceName(), "loki_bank1");
  EXPECT_EQ(second.topic(), "loki_detector");
  for (int pulse = 0; pulse < 3; ++pulse) {
    first.add(1000 * (pulse + 1), 1, 1);
    second.add(1000 * (pulse + 1), 2, 2);
    second.add(1000 * (pulse + 1), 3, 3);
    bank.add(1000 * (pulse + 1), 4, 4);
    secondBank.add(1000 * (pulse + 1), 5, 5);
  }
  first.flush();
  second.flush();
  bank.flush();
  secondBank.flush();
  forward.forwardTo(real);
  std::map<std::string, std::vector<int64_t>> ids;
  int64_t events = 0;
  for (const auto &m : real.messages) {
    const auto *message = ev44(m);
    ids[message->source_name()->str()].push_back(message->message_id());
    EXPECT_EQ(message->reference_time()->size(), 1U) << "one pulse per message";
    events += message->pixel_id()->size();
  }
  for (auto &[source, list] : ids) {
    std::sort(list.begin(), list.end());
    EXPECT_EQ(list, (std::vector<int64_t>{0, 1, 2, 3, 4, 5})) << source;
  }
  EXPECT_EQ(events, 15);
  EXPECT_EQ(stats.find("kafka.ev44.messages")->get(), 12);
  EXPECT_EQ(stats.find("kafka.ev44.events")->get(), 15);
}

} // namespace
