// SPDX-License-Identifier: BSD-2-Clause
// Unit tests of efu-dump's output forms: text lines, JSON lines, summary.
#include "efu/tools/dump/Format.h"
#include "efu/tools/dump/Decode.h"
#include "tests/efu/tools/Messages.h"

#include <gtest/gtest.h>

#include <numeric>

namespace {

nlohmann::json decoded(const efu::test::Bytes &bytes) {
  std::string error;
  auto msg = efu::tools::decodeMessage(bytes, error);
  EXPECT_TRUE(msg.has_value()) << error;
  return msg.value_or(nlohmann::json());
}

TEST(DumpFormat, Ev44TextAbbreviatesArrays) {
  std::vector<int32_t> tof(20);
  std::iota(tof.begin(), tof.end(), 100);
  auto msg = decoded(efu::test::makeEv44("loki", 5, {1000, 2000}, {0, 10}, tof, tof));
  msg["topic"] = "loki_detector";
  msg["partition"] = 0;
  msg["offset"] = 42;
  const std::string line = efu::tools::formatText(msg);
  EXPECT_EQ(line.rfind("loki_detector[0]@42 ev44 loki id=5 pulses=2 events=20 ", 0), 0u) << line;
  EXPECT_NE(line.find("ref=[1000@0 2000@10]"), std::string::npos) << line;
  EXPECT_NE(line.find("tof=[100 101 102 103 104 105 106 107 ... (+12)]"), std::string::npos)
      << line;
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(DumpFormat, F144Text) {
  const auto line = efu::tools::formatText(decoded(efu::test::makeF144Long("efu.udp.rx", 9, 3)));
  EXPECT_EQ(line, "f144 efu.udp.rx = 3 (Long) t=9");
}

TEST(DumpFormat, X5f2Text) {
  const auto line = efu::tools::formatText(decoded(efu::test::makeX5f2(R"({"a":1})")));
  EXPECT_EQ(line, R"(x5f2 udp efu 0.1.0 host=daq01 pid=4242 interval=1000ms status={"a":1})");
}

TEST(DumpFormat, JsonLineSurvivesInvalidUtf8) {
  nlohmann::json msg;
  msg["source_name"] = std::string("bad\xff\xfe");
  std::string line;
  EXPECT_NO_THROW(line = efu::tools::formatJsonLine(msg));
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_NO_THROW(line = efu::tools::formatText(msg));
}

TEST(DumpFormat, TextEscapesWhatATerminalWouldActOn) {
  nlohmann::json msg;
  msg["kind"] = "f144";
  // ESC sequence (clear screen), newline, CR, DEL, C1 CSI (U+009B), a lone continuation byte,
  // a backslash, and characters that must stay as they are.
  msg["source_name"] = std::string("a\x1b[2J\nb\rc\x7f\xc2\x9b\x80\\ µs ✓");
  msg["value"] = std::string("v\x7f\xc2\x9bw\n");
  msg["value_type"] = "String";
  msg["timestamp"] = 1;
  const std::string line = efu::tools::formatText(msg);
  EXPECT_EQ(line, "f144 a\\x1b[2J\\x0ab\\x0dc\\x7f\\x9b\\x80\\\\ µs ✓ = \"v\\u007f\\u009bw\\n\" "
                  "(String) t=1");
  for (const char c : line) {
    const auto byte = static_cast<unsigned char>(c);
    EXPECT_TRUE(byte >= 0x20 && byte != 0x7f) << "raw control byte " << int(byte);
  }
  msg["topic"] = std::string("t\x1b");
  EXPECT_EQ(efu::tools::formatText(msg).rfind("t\\x1b[null]@null f144", 0), 0u);
}

TEST(DumpFormat, JsonLinesCarryNoRawControlsAndKeepTheValue) {
  nlohmann::json msg;
  msg["source_name"] = std::string("x\x7f\xc2\x9b\x1b y ✓");
  const std::string line = efu::tools::formatJsonLine(msg);
  EXPECT_EQ(line, R"({"source_name":"x\u007f\u009b\u001b y ✓"})");
  EXPECT_EQ(nlohmann::json::parse(line), msg);
}

TEST(DumpFormat, SummaryRatesNeedTwoMessages) {
  efu::tools::DumpCounts counts;
  counts.messages = 1;
  EXPECT_NE(efu::tools::formatSummary(counts, 0.0).find("rates: n/a"), std::string::npos);
}

TEST(DumpFormat, SummaryRates) {
  efu::tools::DumpCounts counts;
  counts.messages = 10;
  counts.decoded = 8;
  counts.unknown = 1;
  counts.undecodable = 1;
  counts.events = 1000;
  counts.bytes = 4000;
  const auto text = efu::tools::formatSummary(counts, 2.0);
  EXPECT_NE(text.find("10 messages (8 decoded, 1 unknown identifier, 1 undecodable)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("5.0 messages/s, 500.0 events/s, 2000.0 bytes/s"), std::string::npos) << text;
}

} // namespace
