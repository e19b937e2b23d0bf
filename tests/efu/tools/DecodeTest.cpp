// SPDX-License-Identifier: BSD-2-Clause
// Unit tests of efu-dump's decoder: ev44, f144, x5f2 and bad buffers.
#include "efu/tools/dump/Decode.h"
#include "tests/efu/tools/Messages.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

namespace {

using efu::test::Bytes;
using efu::tools::decodeMessage;

nlohmann::json decodeOk(const Bytes &bytes) {
  std::string error;
  auto decoded = decodeMessage(bytes, error);
  EXPECT_TRUE(decoded.has_value()) << error;
  EXPECT_TRUE(error.empty());
  return decoded.value_or(nlohmann::json());
}

std::string decodeError(const Bytes &bytes) {
  std::string error;
  const auto decoded = decodeMessage(bytes, error);
  EXPECT_FALSE(decoded.has_value());
  EXPECT_FALSE(error.empty());
  return error;
}

TEST(DumpDecode, Ev44SeveralPulses) {
  const auto msg = decodeOk(efu::test::makeEv44("loki", 17, {1000, 2000, 3000}, {0, 2, 2},
                                                {10, 20, 30, 40, 50}, {1, 2, 3, 4, 5}));
  EXPECT_EQ(msg["kind"], "ev44");
  EXPECT_EQ(msg["source_name"], "loki");
  EXPECT_EQ(msg["message_id"], 17);
  EXPECT_EQ(msg["reference_time"], nlohmann::json({1000, 2000, 3000}));
  EXPECT_EQ(msg["reference_time_index"], nlohmann::json({0, 2, 2}));
  EXPECT_EQ(msg["event_count"], 5);
  EXPECT_EQ(msg["time_of_flight"], nlohmann::json({10, 20, 30, 40, 50}));
  EXPECT_EQ(msg["pixel_id"], nlohmann::json({1, 2, 3, 4, 5}));
  EXPECT_FALSE(msg.contains("warnings"));
}

TEST(DumpDecode, Ev44Empty) {
  const auto msg = decodeOk(efu::test::makeEv44("loki", 0, {}, {}, {}, {}));
  EXPECT_EQ(msg["event_count"], 0);
  EXPECT_TRUE(msg["reference_time"].empty());
  EXPECT_TRUE(msg["time_of_flight"].empty());
  EXPECT_TRUE(msg["pixel_id"].empty());
  EXPECT_FALSE(msg.contains("warnings"));
}

TEST(DumpDecode, Ev44WithoutPixelsCountsTimeOfFlight) {
  const auto msg = decodeOk(efu::test::makeEv44("m", 1, {5}, {0}, {7, 8, 9}, {}));
  EXPECT_EQ(msg["event_count"], 3);
  EXPECT_FALSE(msg.contains("warnings"));
}

TEST(DumpDecode, Ev44InconsistentArraysAreWarnedAbout) {
  const auto msg = decodeOk(efu::test::makeEv44("m", 1, {5, 6}, {0, 9}, {7, 8}, {1}));
  ASSERT_TRUE(msg.contains("warnings"));
  const std::string text = msg["warnings"].dump();
  EXPECT_NE(text.find("pixel_id has 1 entries but time_of_flight has 2"), std::string::npos);
  EXPECT_NE(text.find("reference_time_index[1] = 9"), std::string::npos);
}

// Issue 37 item 14: events with no reference_time (no pulse to add their tof to) said nothing.
TEST(DumpDecode, Ev44EventsWithoutAReferenceTimeAreWarnedAbout) {
  const auto msg = decodeOk(efu::test::makeEv44("m", 1, {}, {}, {7, 8}, {1, 2}));
  ASSERT_TRUE(msg.contains("warnings"));
  EXPECT_NE(msg["warnings"].dump().find("2 events but no reference_time"), std::string::npos)
      << msg.dump();
}

TEST(DumpDecode, F144Long) {
  const auto msg = decodeOk(efu::test::makeF144Long("efu.udp.receive.packets", 123456789, -42));
  EXPECT_EQ(msg["kind"], "f144");
  EXPECT_EQ(msg["source_name"], "efu.udp.receive.packets");
  EXPECT_EQ(msg["timestamp"], 123456789);
  EXPECT_EQ(msg["value_type"], "Long");
  EXPECT_EQ(msg["value"], -42);
}

TEST(DumpDecode, F144Double) {
  const auto msg = decodeOk(efu::test::makeF144Double("temp", 1, 2.5));
  EXPECT_EQ(msg["value_type"], "Double");
  EXPECT_DOUBLE_EQ(msg["value"].get<double>(), 2.5);
}

TEST(DumpDecode, F144ArrayInt) {
  const auto msg = decodeOk(efu::test::makeF144ArrayInt("hist", 1, {3, -1, 4}));
  EXPECT_EQ(msg["value_type"], "ArrayInt");
  EXPECT_EQ(msg["value"], nlohmann::json({3, -1, 4}));
}

TEST(DumpDecode, F144UnknownUnionTypeIsAnError) {
  flatbuffers::FlatBufferBuilder fbb;
  auto name = fbb.CreateString("future");
  auto payload = efu::fb::CreateLong(fbb, 1);
  auto root =
      efu::fb::Createf144_LogData(fbb, name, 1, static_cast<efu::fb::Value>(42), payload.Union());
  efu::fb::Finishf144_LogDataBuffer(fbb, root);
  const auto error = decodeError(efu::test::finished(fbb));
  EXPECT_NE(error.find("unknown value type 42"), std::string::npos) << error;
}

TEST(DumpDecode, X5f2WithJsonStatus) {
  const auto msg = decodeOk(efu::test::makeX5f2(R"({"module":"udp","uptime_s":12})"));
  EXPECT_EQ(msg["kind"], "x5f2");
  EXPECT_EQ(msg["software_name"], "efu");
  EXPECT_EQ(msg["software_version"], "0.1.0");
  EXPECT_EQ(msg["service_id"], "udp");
  EXPECT_EQ(msg["host_name"], "daq01");
  EXPECT_EQ(msg["process_id"], 4242);
  EXPECT_EQ(msg["update_interval"], 1000);
  ASSERT_TRUE(msg["status_json"].is_object());
  EXPECT_EQ(msg["status_json"]["module"], "udp");
  EXPECT_EQ(msg["status_json"]["uptime_s"], 12);
}

TEST(DumpDecode, X5f2WithTextStatusKeepsTheString) {
  const auto msg = decodeOk(efu::test::makeX5f2("not {json"));
  EXPECT_EQ(msg["status_json"], "not {json");
}

TEST(DumpDecode, X5f2WithDeeplyNestedStatusKeepsTheStringAndLives) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const auto msg = decodeOk(efu::test::makeX5f2(deep));
  ASSERT_TRUE(msg["status_json"].is_string());
  EXPECT_EQ(msg["status_json"].get<std::string>().size(), deep.size());
  EXPECT_FALSE(msg.dump().empty()); // printing it does not recurse 100000 levels
}

TEST(DumpDecode, X5f2AbsentStringsAreNull) {
  flatbuffers::FlatBufferBuilder fbb;
  efu::fb::FinishStatusBuffer(fbb, efu::fb::CreateStatus(fbb));
  const auto msg = decodeOk(efu::test::finished(fbb));
  EXPECT_TRUE(msg["software_name"].is_null());
  EXPECT_TRUE(msg["status_json"].is_null());
  EXPECT_EQ(msg["process_id"], 0);
}

TEST(DumpDecode, UnalignedBufferDecodes) {
  const Bytes bytes = efu::test::makeF144Long("x", 99, 7);
  std::vector<uint8_t> storage(bytes.size() + 1);
  std::memcpy(storage.data() + 1, bytes.data(), bytes.size());
  std::string error;
  const auto msg = decodeMessage(std::span(storage.data() + 1, bytes.size()), error);
  ASSERT_TRUE(msg.has_value()) << error;
  EXPECT_EQ((*msg)["value"], 7);
}

TEST(DumpDecode, TooShortBuffersAreReported) {
  for (size_t size = 0; size < 8; ++size) {
    const auto error = decodeError(Bytes(size, 0x20));
    EXPECT_NE(error.find("too short"), std::string::npos) << error;
  }
}

TEST(DumpDecode, UnknownIdentifierIsReported) {
  Bytes bytes = efu::test::makeEv44("m", 1, {5}, {0}, {7}, {1});
  std::memcpy(bytes.data() + 4, "abcd", 4);
  EXPECT_EQ(efu::tools::fileIdentifier(bytes), "abcd");
  EXPECT_FALSE(efu::tools::isKnownIdentifier("abcd"));
  const auto error = decodeError(bytes);
  EXPECT_NE(error.find("unknown file identifier 'abcd'"), std::string::npos) << error;
}

TEST(DumpDecode, NonPrintableIdentifierIsEscaped) {
  const Bytes bytes = {0, 0, 0, 0, 'e', 0x01, '\\', 0xff, 0, 0};
  EXPECT_EQ(efu::tools::fileIdentifier(bytes), "e\\x01\\x5c\\xff");
}

TEST(DumpDecode, EveryTruncationIsReportedNotCrashing) {
  const std::vector<Bytes> messages = {
      efu::test::makeEv44("loki", 3, {1, 2}, {0, 1}, {10, 20, 30}, {4, 5, 6}),
      efu::test::makeF144ArrayInt("hist", 1, {3, -1, 4}), efu::test::makeX5f2(R"({"a":1})")};
  for (const auto &full : messages) {
    const auto complete = decodeOk(full);
    size_t rejected = 0;
    for (size_t size = 0; size < full.size(); ++size) {
      std::string error;
      const auto decoded = decodeMessage(std::span(full.data(), size), error);
      // Cutting only trailing alignment padding leaves a valid message; anything else must fail.
      if (decoded) {
        EXPECT_EQ(*decoded, complete) << "prefix of " << size << " of " << full.size();
      } else {
        EXPECT_FALSE(error.empty());
        ++rejected;
      }
    }
    EXPECT_GE(rejected, full.size() - 8) << "at most the padding may be cut unnoticed";
  }
}

TEST(DumpDecode, GarbageWithKnownIdentifiersNeverCrashes) {
  std::mt19937 rng(12345); // fixed seed: reproducible
  std::uniform_int_distribution<int> byte(0, 255);
  const char *identifiers[] = {"ev44", "f144", "x5f2"};
  size_t rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    Bytes bytes(8 + static_cast<size_t>(i % 200));
    for (auto &b : bytes) {
      b = static_cast<uint8_t>(byte(rng));
    }
    std::memcpy(bytes.data() + 4, identifiers[i % 3], 4);
    std::string error;
    if (!decodeMessage(bytes, error)) {
      EXPECT_NE(error.find("fails flatbuffers verification"), std::string::npos) << error;
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 0u);
}

efu::test::Bytes makeF144ArrayLong(const std::vector<int64_t> &values) {
  flatbuffers::FlatBufferBuilder fbb;
  auto name = fbb.CreateString("longs");
  auto payload = efu::fb::CreateArrayLongDirect(fbb, &values);
  auto root = efu::fb::Createf144_LogData(fbb, name, 1, efu::fb::Value::ArrayLong, payload.Union());
  efu::fb::Finishf144_LogDataBuffer(fbb, root);
  return efu::test::finished(fbb);
}

TEST(DumpDecode, F144ArrayLong) {
  const auto msg = decodeOk(makeF144ArrayLong({-1, 1LL << 40}));
  EXPECT_EQ(msg["value_type"], "ArrayLong");
  EXPECT_EQ(msg["value"], nlohmann::json({-1, 1LL << 40}));
}

// Under -fsanitize=address,undefined this also catches misaligned reads of 8-byte elements.
TEST(DumpDecode, BitFlippedMessagesNeverCrash) {
  const std::vector<Bytes> originals = {
      efu::test::makeEv44("loki", 3, {1, 2}, {0, 1}, {10, 20, 30}, {4, 5, 6}),
      makeF144ArrayLong({1, 2, 3}), efu::test::makeF144Double("d", 1, 0.5),
      efu::test::makeX5f2(R"({"a":[1,2]})")};
  std::mt19937 rng(6789); // fixed seed: reproducible
  std::uniform_int_distribution<int> bit(0, 7);
  for (const auto &original : originals) {
    std::uniform_int_distribution<size_t> position(0, original.size() - 1);
    for (int i = 0; i < 3000; ++i) {
      Bytes bytes = original;
      for (int flips = 0; flips < 1 + i % 4; ++flips) {
        bytes[position(rng)] ^= static_cast<uint8_t>(1u << bit(rng));
      }
      std::string error;
      const auto decoded = decodeMessage(bytes, error);
      EXPECT_EQ(decoded.has_value(), error.empty());
    }
  }
}

} // namespace
