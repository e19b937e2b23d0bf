// SPDX-License-Identifier: BSD-2-Clause
// parseJson / readJsonFile: the same documents as nlohmann's parser, in linear time, with bounds
// on size and nesting, duplicate keys refused, and every refusal placed (line, column, key path).
#include "common/system/BoundedJson.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace efu {
namespace {

/// The JsonError parseJson(text) throws; fails the test when it accepts.
JsonError refusal(const std::string &text, const JsonLimits &limits = {}) {
  try {
    (void)parseJson(text, limits);
  } catch (const JsonError &e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << text.substr(0, 200);
  return JsonError(JsonError::Kind::Syntax, "(accepted)", 0, 0, "");
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

TEST(BoundedJson, GivesWhatNlohmannGives) {
  for (const char *text : {
           R"({"a": 1, "b": [true, false, null], "c": {"d": "e\u00e9\n", "f": -2.5e3}})",
           R"([1, -1, 18446744073709551615, -9223372036854775808, 1.5, 0, "x", [], {}])",
           R"("just a string")",
           "42",
           "null",
           "  \n\t[ [ [ ] ] , { \"\" : { } } ]  \n",
           R"({"z": 1, "a": 2, "m": {"y": [1, {"k": [2, 3]}], "b": {}}})",
       }) {
    EXPECT_EQ(parseJson(text), nlohmann::json::parse(text)) << text;
  }
  // Integer types are kept as nlohmann keeps them (config validation tells integers apart).
  const auto numbers = parseJson("[1, -1, 18446744073709551615, 1.0]");
  EXPECT_TRUE(numbers[0].is_number_unsigned());
  EXPECT_TRUE(numbers[1].is_number_integer() && !numbers[1].is_number_unsigned());
  EXPECT_EQ(numbers[2].get<uint64_t>(), 18446744073709551615ULL);
  EXPECT_TRUE(numbers[3].is_number_float());
}

// The regression test of the quadratic parse (nlohmann's callback parser scans the whole parent
// at the end of every object): half a million objects in one object took the old reader longer
// than this test's ctest TIMEOUT of 60 s many times over (extrapolated from 50 000 members in 19 s
// on the 2-core CI machine: about 30 minutes), and take the linear reader well under a second.
TEST(BoundedJson, HalfAMillionObjectsInOneObjectParseWithinTheTestsTimeout) {
  constexpr int kMembers = 500'000;
  std::string text = "{";
  for (int i = 0; i < kMembers; ++i) {
    text += (i == 0 ? "\"" : ",\"") + std::to_string(i) + "\":{}";
  }
  text += "}";
  const auto parsed = parseJson(text);
  ASSERT_EQ(parsed.size(), static_cast<size_t>(kMembers));
  EXPECT_EQ(parsed.at("0"), nlohmann::json::object());
  EXPECT_EQ(parsed.at("499999"), nlohmann::json::object());
}

// The shape of a status_json that took efu-dump 30 s of CPU: an array of 330 000 "{}".
TEST(BoundedJson, AStatusOfManyEmptyObjectsIsAnArrayOfThem) {
  std::string text = "[{}";
  for (int i = 1; i < 330'000; ++i) {
    text += ",{}";
  }
  text += "]";
  const auto parsed = parseJson(text);
  ASSERT_EQ(parsed.size(), 330'000U);
  EXPECT_EQ(parsed.back(), nlohmann::json::object());
}

TEST(BoundedJson, NestingIsBoundedAndTheRefusalPlaced) {
  const std::string ok = std::string(64, '[') + std::string(64, ']');
  EXPECT_NO_THROW((void)parseJson(ok));
  const std::string deep = "\n  " + std::string(65, '[') + std::string(65, ']');
  const JsonError e = refusal(deep);
  EXPECT_EQ(e.kind(), JsonError::Kind::Depth);
  EXPECT_EQ(std::string(e.what()), "line 2, column 67: JSON nested deeper than 64 levels");
  // Far deeper input is refused at the same place, never recursed on.
  EXPECT_EQ(refusal(std::string(500'000, '[')).kind(), JsonError::Kind::Depth);
  // Objects count like arrays; the bound is a parameter.
  EXPECT_EQ(refusal(R"({"a": {"b": [1]}})", {2, kMaxJsonBytes}).kind(), JsonError::Kind::Depth);
  EXPECT_NO_THROW((void)parseJson(R"({"a": {"b": 1}})", {2, kMaxJsonBytes}));
}

TEST(BoundedJson, ADuplicateKeyIsRefusedWithItsPath) {
  const JsonError e = refusal("{\"Config\": {\"Resolution\": 512,\n  \"Resolution\": 256}}");
  EXPECT_EQ(e.kind(), JsonError::Kind::DuplicateKey);
  EXPECT_EQ(std::string(e.what()), "line 2, column 14, at 'Config.Resolution': key 'Resolution' "
                                   "appears twice in the same object")
      << e.what();
  EXPECT_EQ(e.path(), "Config.Resolution");
  EXPECT_EQ(refusal(R"([{"a": 1}, {"b": 1, "b": 1}])").path(), "[1].b");
  // The same key in different objects is fine.
  EXPECT_NO_THROW((void)parseJson(R"({"a": {"x": 1}, "b": {"x": 1}, "x": [{"x": 1}, {"x": 2}]})"));
}

TEST(BoundedJson, ANumberBeyondADoubleNamesItsKeyAndLine) {
  const JsonError e = refusal("{\n  \"Config\": {\"Resolution\": 1e400}\n}");
  EXPECT_EQ(e.kind(), JsonError::Kind::Number);
  EXPECT_EQ(std::string(e.what()), "line 2, column 32, at 'Config.Resolution': number 1e400 is out "
                                   "of range (beyond a double)")
      << e.what();
  EXPECT_EQ(refusal(R"({"mapping": [1, 2, -1e999]})").path(), "mapping[2]");
  EXPECT_EQ(refusal("1e400").path(), "");
}

TEST(BoundedJson, ControlBytesOfKeysAreEscapedInMessages) {
  // \u001b[31m would colour a terminal, \r would overwrite the line.
  const JsonError e = refusal(R"({"a\u001b[31m\r": {"x": 1, "x": 2}})");
  const std::string message = e.what();
  EXPECT_TRUE(contains(message, R"(at 'a\x1b[31m\x0d.x')")) << message;
  for (const char c : message) {
    EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << message;
  }
  // Long keys are shortened.
  const JsonError longKey = refusal("{\"" + std::string(1000, 'k') + "\": 1e400}");
  EXPECT_TRUE(contains(longKey.what(), std::string(77, 'k') + "...'")) << longKey.what();
  EXPECT_LT(std::string(longKey.what()).size(), 200U);
}

TEST(BoundedJson, SyntaxErrorsSayWhereAndWhat) {
  const JsonError e = refusal("{\"mapping\": [1, 2,\n  \"threshold\" 3}");
  EXPECT_EQ(e.kind(), JsonError::Kind::Syntax);
  const std::string message = e.what();
  EXPECT_EQ(e.line(), 2U) << message;
  EXPECT_TRUE(message.starts_with("line 2, column 15, at 'mapping[3]': not valid JSON: syntax "
                                  "error"))
      << message;
  EXPECT_FALSE(contains(message, "json.exception")) << message;
  for (const char *bad : {"", "{", "[1,]", "{\"a\" 1}", "[1] x", "nul", "\"\x01\"", "[1 2]"}) {
    EXPECT_EQ(refusal(bad).kind(), JsonError::Kind::Syntax) << bad;
  }
}

TEST(BoundedJson, SizeIsBounded) {
  const JsonError e = refusal(std::string(2000, ' ') + "1", {kMaxJsonDepth, 1000});
  EXPECT_EQ(e.kind(), JsonError::Kind::Size);
  EXPECT_EQ(std::string(e.what()), "2001 bytes, more than the 1000 bytes a JSON document may have");
  EXPECT_EQ(parseJson(std::string(999, ' ') + "1", {kMaxJsonDepth, 1000}), 1);
}

TEST(BoundedJson, FileErrorsStartWithThePath) {
  namespace fs = std::filesystem;
  const fs::path path =
      fs::temp_directory_path() / ("efu-bounded-json-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << "{\"a\": 1,\n \"a\": 2}";
  try {
    (void)readJsonFile(path.string());
    ADD_FAILURE() << "accepted";
  } catch (const JsonFileError &e) {
    EXPECT_EQ(std::string(e.what()),
              path.string() +
                  ": line 2, column 4, at 'a': key 'a' appears twice in the same object");
  }
  std::ofstream(path) << R"({"a": [1, 2]})";
  EXPECT_EQ(readJsonFile(path.string()), nlohmann::json::parse(R"({"a": [1, 2]})"));
  try {
    (void)readJsonFile(path.string(), {kMaxJsonDepth, 4});
    ADD_FAILURE() << "accepted";
  } catch (const JsonFileError &e) {
    EXPECT_EQ(std::string(e.what()),
              path.string() + ": 13 bytes, more than the 4 bytes a JSON file may have");
  }
  fs::remove(path);
}

} // namespace
} // namespace efu
