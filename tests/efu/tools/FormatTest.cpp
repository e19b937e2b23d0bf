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
