// SPDX-License-Identifier: BSD-2-Clause
// Round trips of the ev44, f144 and x5f2 builders, decoded with the generated code and by slot.
#include "common/serialize/Ev44Builder.h"
#include "common/serialize/F144.h"
#include "common/serialize/X5f2.h"

#include "schemas/ev44_generated.h"
#include "schemas/f144_generated.h"
#include "schemas/x5f2_generated.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace {

using efu::serialize::Ev44Builder;

/// vtable offset of field slot n (what flatc generates as VT_<FIELD>).
constexpr flatbuffers::voffset_t slot(int n) {
  return static_cast<flatbuffers::voffset_t>(4 + 2 * n);
}

std::vector<uint8_t> copy(std::span<const uint8_t> bytes) {
  return {bytes.begin(), bytes.end()};
}

/// The builder's message, in memory of its own (operator new's alignment: 16 bytes).
std::vector<uint8_t> finish(Ev44Builder &builder, int64_t messageId) {
  std::vector<uint8_t> out(builder.messageBytes());
  builder.finishInto(messageId, out);
  return out;
}

const efu::fb::Event44Message *verifiedEv44(const std::vector<uint8_t> &buffer) {
  flatbuffers::Verifier verifier(buffer.data(), buffer.size());
  EXPECT_TRUE(efu::fb::VerifyEvent44MessageBuffer(verifier));
  EXPECT_TRUE(flatbuffers::BufferHasIdentifier(buffer.data(), "ev44"));
  return efu::fb::GetEvent44Message(buffer.data());
}

template <typename T> std::vector<T> values(const flatbuffers::Vector<T> *vector) {
  return vector == nullptr ? std::vector<T>{} : std::vector<T>(vector->begin(), vector->end());
}

// The hand-laid flatbuffer, over many shapes: source names of every length mod 8 (the padding
// before the 8-byte reference times), 0..n pulses and events. Each message passes the
// flatbuffers verifier (alignment included), reads back what was added, fits maxMessageBytes(),
// and finishInto() writes every one of its messageBytes() bytes and none beyond.
TEST(Ev44Builder, EveryShapeVerifiesAndReadsBack) {
  std::mt19937_64 rng(7);
  for (size_t sourceBytes = 0; sourceBytes < 12; ++sourceBytes) {
    for (int round = 0; round < 40; ++round) {
      const size_t maxEvents = 1 + rng() % 40;
      const size_t maxPulses = 1 + rng() % maxEvents;
      Ev44Builder builder(maxEvents, maxPulses);
      builder.setSource(std::string(sourceBytes, static_cast<char>('a' + round % 26)));
      std::vector<int64_t> times;
      std::vector<int32_t> indices;
      std::vector<int32_t> tofs;
      std::vector<int32_t> pixels;
      const size_t events = rng() % (maxEvents + 1);
      int64_t pulse = static_cast<int64_t>(rng());
      for (size_t e = 0; e < events; ++e) {
        if (e > 0 && rng() % 3 == 0 && times.size() < maxPulses) {
          pulse = static_cast<int64_t>(rng()); // a new pulse while there is room for one
        }
        const auto tof = static_cast<int32_t>(rng());
        const auto pixel = static_cast<int32_t>(rng());
        ASSERT_TRUE(builder.add(pulse, tof, pixel));
        if (times.empty() || pulse != times.back()) {
          times.push_back(pulse);
          indices.push_back(static_cast<int32_t>(e));
        }
        tofs.push_back(tof);
        pixels.push_back(pixel);
      }
      const size_t bytes = builder.messageBytes();
      EXPECT_LE(bytes, Ev44Builder::maxMessageBytes(maxEvents, maxPulses, sourceBytes));
      // Written twice at an 8-aligned offset into buffers filled with different bytes: equal
      // results leave no byte unset, and the fill after the message must be untouched.
      std::vector<uint64_t> a(bytes / 8 + 4, 0xAAAAAAAAAAAAAAAAu);
      std::vector<uint64_t> b(bytes / 8 + 4, 0x5555555555555555u);
      const std::span<uint8_t> outA(reinterpret_cast<uint8_t *>(a.data()) + 8, bytes);
      const std::span<uint8_t> outB(reinterpret_cast<uint8_t *>(b.data()) + 8, bytes);
      builder.finishInto(round, outA);
      EXPECT_EQ(builder.events(), 0u);
      for (size_t e = 0; e < events; ++e) { // the same events again
        ASSERT_TRUE(
            builder.add(times[static_cast<size_t>(std::upper_bound(indices.begin(), indices.end(),
                                                                   static_cast<int32_t>(e)) -
                                                  indices.begin() - 1)],
                        tofs[e], pixels[e]));
      }
      builder.finishInto(round, outB);
      ASSERT_TRUE(std::equal(outA.begin(), outA.end(), outB.begin()))
          << "source " << sourceBytes << ", round " << round;
      const auto *afterA = reinterpret_cast<const uint8_t *>(a.data()) + 8 + bytes;
      EXPECT_TRUE(std::all_of(afterA, reinterpret_cast<const uint8_t *>(a.data() + a.size()),
                              [](uint8_t v) { return v == 0xAA; }));

      const std::vector<uint8_t> buffer(outA.begin(), outA.end());
      const auto *message = verifiedEv44(buffer);
      ASSERT_NE(message, nullptr);
      EXPECT_EQ(message->source_name()->str(), std::string(sourceBytes, 'a' + round % 26));
      EXPECT_EQ(message->message_id(), round);
      EXPECT_EQ(values(message->reference_time()), times);
      const auto timesAt = reinterpret_cast<const uint8_t *>(message->reference_time()->data());
      EXPECT_EQ((timesAt - buffer.data()) % 8, 0) << "the 8-byte reference times 8-aligned";
      EXPECT_EQ(values(message->reference_time_index()), indices);
      EXPECT_EQ(values(message->time_of_flight()), tofs);
      EXPECT_EQ(values(message->pixel_id()), pixels);
    }
  }
}

TEST(Ev44Builder, SeveralPulsesRoundTrip) {
  Ev44Builder builder(100);
  builder.setSource("freia");
  EXPECT_TRUE(builder.add(1000, 10, 1));
  EXPECT_TRUE(builder.add(1000, 20, 2));
  EXPECT_TRUE(builder.add(2000, 5, 3));
  EXPECT_TRUE(builder.add(3000, 7, 4));
  EXPECT_TRUE(builder.add(3000, 8, 5));
  EXPECT_TRUE(builder.add(3000, 9, 6));
  EXPECT_EQ(builder.events(), 6u);
  EXPECT_EQ(builder.pulses(), 3u);

  const auto buffer = finish(builder, 42);
  EXPECT_EQ(builder.events(), 0u);
  EXPECT_EQ(builder.pulses(), 0u);
  const auto *message = verifiedEv44(buffer);
  EXPECT_EQ(message->source_name()->str(), "freia");
  EXPECT_EQ(message->message_id(), 42);
  EXPECT_EQ(values(message->reference_time()), (std::vector<int64_t>{1000, 2000, 3000}));
  EXPECT_EQ(values(message->reference_time_index()), (std::vector<int32_t>{0, 2, 3}));
  EXPECT_EQ(values(message->time_of_flight()), (std::vector<int32_t>{10, 20, 5, 7, 8, 9}));
  EXPECT_EQ(values(message->pixel_id()), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(Ev44Builder, PulseThatComesBackOpensANewReferenceTime) {
  Ev44Builder builder(10);
  builder.add(1000, 1, 1);
  builder.add(2000, 2, 2);
  builder.add(1000, 3, 3);
  const auto buffer = finish(builder, 0);
  const auto *message = verifiedEv44(buffer);
  EXPECT_EQ(values(message->reference_time()), (std::vector<int64_t>{1000, 2000, 1000}));
  EXPECT_EQ(values(message->reference_time_index()), (std::vector<int32_t>{0, 1, 2}));
}

TEST(Ev44Builder, EmptyMessageHasRequiredFields) {
  Ev44Builder builder(8);
  builder.setSource("empty");
  const auto buffer = finish(builder, 7);
  const auto *message = verifiedEv44(buffer);
  EXPECT_EQ(message->source_name()->str(), "empty");
  EXPECT_EQ(message->message_id(), 7);
  ASSERT_NE(message->reference_time(), nullptr);
  ASSERT_NE(message->reference_time_index(), nullptr);
  EXPECT_EQ(message->reference_time()->size(), 0u);
  EXPECT_EQ(message->reference_time_index()->size(), 0u);
  EXPECT_EQ(values(message->time_of_flight()).size(), 0u);
  EXPECT_EQ(values(message->pixel_id()).size(), 0u);
}

TEST(Ev44Builder, ReuseStartsEachMessageEmpty) {
  Ev44Builder builder(4);
  builder.setSource("reuse");
  for (int32_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(builder.add(100, i, i));
  }
  const auto first = finish(builder, 1);
  EXPECT_TRUE(builder.add(200, 99, 98));
  const auto second = finish(builder, 2);

  const auto *one = verifiedEv44(first);
  EXPECT_EQ(one->message_id(), 1);
  EXPECT_EQ(values(one->pixel_id()), (std::vector<int32_t>{0, 1, 2, 3}));
  const auto *two = verifiedEv44(second);
  EXPECT_EQ(two->message_id(), 2);
  EXPECT_EQ(values(two->reference_time()), (std::vector<int64_t>{200}));
  EXPECT_EQ(values(two->reference_time_index()), (std::vector<int32_t>{0}));
  EXPECT_EQ(values(two->time_of_flight()), (std::vector<int32_t>{99}));
  EXPECT_EQ(values(two->pixel_id()), (std::vector<int32_t>{98}));
}

TEST(Ev44Builder, RefusesEventsWhenFull) {
  Ev44Builder builder(3, 2);
  EXPECT_TRUE(builder.add(1, 0, 0));
  EXPECT_TRUE(builder.add(2, 0, 0));
  EXPECT_FALSE(builder.add(3, 0, 0)) << "third pulse exceeds maxPulses";
  EXPECT_TRUE(builder.add(2, 0, 0)) << "same pulse needs no new reference time";
  EXPECT_TRUE(builder.full());
  EXPECT_FALSE(builder.add(2, 0, 0));
  EXPECT_EQ(builder.events(), 3u);
  (void)finish(builder, 0);
  EXPECT_TRUE(builder.add(3, 0, 0));
}

TEST(Ev44Builder, RejectsBadSizes) {
  EXPECT_THROW(Ev44Builder(0), std::invalid_argument);
  EXPECT_THROW(Ev44Builder(2, 3), std::invalid_argument);
}

TEST(Ev44Builder, WorstCaseFitsTheAdvertisedBound) {
  const size_t maxEvents = 1000;
  const std::string source(37, 's');
  Ev44Builder builder(maxEvents);
  builder.setSource(source);
  for (size_t i = 0; i < maxEvents; ++i) {
    ASSERT_TRUE(builder.add(static_cast<int64_t>(i), 1, 2)) << i;
  }
  const auto bytes = finish(builder, INT64_MAX);
  EXPECT_LE(bytes.size(), Ev44Builder::maxMessageBytes(maxEvents, maxEvents, source.size()));
  EXPECT_GE(bytes.size(), maxEvents * 20);
}

TEST(Ev44Builder, FieldsSitInTheEssSlots) {
  Ev44Builder builder(10);
  builder.setSource("slots");
  builder.add(5000, 11, 21);
  builder.add(6000, 12, 22);
  const auto buffer = finish(builder, 0);
  // message_id 0 is written (not elided as a default) so that slot readers find it.
  const auto *table = flatbuffers::GetRoot<flatbuffers::Table>(buffer.data());
  ASSERT_NE(table->GetPointer<const flatbuffers::String *>(slot(0)), nullptr);
  EXPECT_EQ(table->GetPointer<const flatbuffers::String *>(slot(0))->str(), "slots");
  EXPECT_TRUE(table->CheckField(slot(1)));
  EXPECT_EQ(table->GetField<int64_t>(slot(1), -1), 0);
  const auto *times = table->GetPointer<const flatbuffers::Vector<int64_t> *>(slot(2));
  EXPECT_EQ(values(times), (std::vector<int64_t>{5000, 6000}));
  const auto *indices = table->GetPointer<const flatbuffers::Vector<int32_t> *>(slot(3));
  EXPECT_EQ(values(indices), (std::vector<int32_t>{0, 1}));
  const auto *tofs = table->GetPointer<const flatbuffers::Vector<int32_t> *>(slot(4));
  EXPECT_EQ(values(tofs), (std::vector<int32_t>{11, 12}));
  const auto *pixels = table->GetPointer<const flatbuffers::Vector<int32_t> *>(slot(5));
  EXPECT_EQ(values(pixels), (std::vector<int32_t>{21, 22}));
  EXPECT_FALSE(table->CheckField(slot(6))) << "no field beyond the six of ev44";
}

TEST(F144, LongRoundTripAndSlots) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto buffer =
      copy(efu::serialize::buildF144Long(fbb, "efu.udp.receive.packets", 1'700'000'000'123'456'789, -5));
  flatbuffers::Verifier verifier(buffer.data(), buffer.size());
  ASSERT_TRUE(efu::fb::Verifyf144_LogDataBuffer(verifier));
  ASSERT_TRUE(flatbuffers::BufferHasIdentifier(buffer.data(), "f144"));
  const auto *log = efu::fb::Getf144_LogData(buffer.data());
  EXPECT_EQ(log->source_name()->str(), "efu.udp.receive.packets");
  EXPECT_EQ(log->timestamp(), 1'700'000'000'123'456'789);
  ASSERT_EQ(log->value_type(), efu::fb::Value::Long);
  EXPECT_EQ(log->value_as_Long()->value(), -5);

  // ESS f144: slot 0 source_name, 1 timestamp, 2 value type (Long is union member 7), 3 value.
  const auto *table = flatbuffers::GetRoot<flatbuffers::Table>(buffer.data());
  EXPECT_EQ(table->GetPointer<const flatbuffers::String *>(slot(0))->str(), "efu.udp.receive.packets");
  EXPECT_EQ(table->GetField<int64_t>(slot(1), 0), 1'700'000'000'123'456'789);
  EXPECT_EQ(table->GetField<uint8_t>(slot(2), 0), 7);
  const auto *value = table->GetPointer<const flatbuffers::Table *>(slot(3));
  ASSERT_NE(value, nullptr);
  EXPECT_EQ(value->GetField<int64_t>(slot(0), 0), -5);
}

TEST(F144, ZeroValueIsWrittenAndBuilderIsReused) {
  flatbuffers::FlatBufferBuilder fbb;
  (void)efu::serialize::buildF144Long(fbb, "first.counter.with.a.long.name", 1, 123456);
  const auto buffer = copy(efu::serialize::buildF144Long(fbb, "b", 0, 0));
  const auto *log = efu::fb::Getf144_LogData(buffer.data());
  EXPECT_EQ(log->source_name()->str(), "b");
  const auto *value = flatbuffers::GetRoot<flatbuffers::Table>(buffer.data())
                          ->GetPointer<const flatbuffers::Table *>(slot(3));
  EXPECT_TRUE(value->CheckField(slot(0)));
  EXPECT_EQ(log->value_as_Long()->value(), 0);
}

TEST(X5f2, RoundTripAndSlots) {
  efu::serialize::StatusInfo info{"efu", "0.1.0", "udp", "daq-host", 4321, 1000};
  const std::string json = R"({"module":"udp","uptime_s":12})";
  flatbuffers::FlatBufferBuilder fbb;
  const auto buffer = copy(efu::serialize::buildX5f2(fbb, info, json));
  flatbuffers::Verifier verifier(buffer.data(), buffer.size());
  ASSERT_TRUE(efu::fb::VerifyStatusBuffer(verifier));
  ASSERT_TRUE(flatbuffers::BufferHasIdentifier(buffer.data(), "x5f2"));
  const auto *status = efu::fb::GetStatus(buffer.data());
  EXPECT_EQ(status->software_name()->str(), "efu");
  EXPECT_EQ(status->software_version()->str(), "0.1.0");
  EXPECT_EQ(status->service_id()->str(), "udp");
  EXPECT_EQ(status->host_name()->str(), "daq-host");
  EXPECT_EQ(status->process_id(), 4321u);
  EXPECT_EQ(status->update_interval(), 1000u);
  EXPECT_EQ(status->status_json()->str(), json);

  const auto *table = flatbuffers::GetRoot<flatbuffers::Table>(buffer.data());
  auto text = [&](int n) { return table->GetPointer<const flatbuffers::String *>(slot(n))->str(); };
  EXPECT_EQ(text(0), "efu");
  EXPECT_EQ(text(1), "0.1.0");
  EXPECT_EQ(text(2), "udp");
  EXPECT_EQ(text(3), "daq-host");
  EXPECT_EQ(table->GetField<uint32_t>(slot(4), 0), 4321u);
  EXPECT_EQ(table->GetField<uint32_t>(slot(5), 0), 1000u);
  EXPECT_EQ(text(6), json);
}

} // namespace
