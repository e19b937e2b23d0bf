// SPDX-License-Identifier: BSD-2-Clause
// efu-dump's da00 decoding: a histogram from the da00 builder back as JSON and as a text line;
// a variable whose data does not fill its shape gets a warning.
#include "common/serialize/Da00.h"
#include "efu/tools/dump/Decode.h"
#include "efu/tools/dump/Format.h"
#include "schemas/da00_generated.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using efu::sdk::DataType;
using efu::sdk::DataVariable;

template <class T> std::span<const uint8_t> bytesOf(const std::vector<T> &v) {
  return {reinterpret_cast<const uint8_t *>(v.data()), v.size() * sizeof(T)};
}

TEST(Da00Decode, AHistogramAsJsonAndText) {
  const std::vector<int32_t> edges{0, 100, 200};
  const std::vector<int32_t> signal{-3, 7};
  const std::vector<uint64_t> total{4};
  const std::string_view t[] = {"frame_time"};
  const std::string_view r[] = {"reference_time"};
  const int64_t three[] = {3};
  const int64_t two[] = {2};
  const int64_t one[] = {1};
  const DataVariable vars[] = {{"frame_time", "ns", t, three, DataType::Int32, bytesOf(edges)},
                               {"signal", "A", t, two, DataType::Int32, bytesOf(signal)},
                               {"frame_total", "", r, one, DataType::UInt64, bytesOf(total)}};
  flatbuffers::FlatBufferBuilder fbb;
  const auto span = efu::serialize::buildDa00(fbb, "cbm4", 42, vars);
  std::string error;
  const auto j = efu::tools::decodeMessage(span, error);
  ASSERT_TRUE(j.has_value()) << error;
  EXPECT_EQ(j->at("kind"), "da00");
  EXPECT_EQ(j->at("source_name"), "cbm4");
  EXPECT_EQ(j->at("timestamp"), 42);
  const auto &d = j->at("data");
  ASSERT_EQ(d.size(), 3U);
  EXPECT_EQ(d[0].at("data"), nlohmann::json::array({0, 100, 200}));
  EXPECT_EQ(d[1].at("data"), nlohmann::json::array({-3, 7}));
  EXPECT_EQ(d[1].at("data_type"), "int32");
  EXPECT_EQ(d[1].at("axes"), nlohmann::json::array({"frame_time"}));
  EXPECT_EQ(d[1].at("shape"), nlohmann::json::array({2}));
  EXPECT_EQ(d[2].at("data_type"), "uint64");
  EXPECT_TRUE(d[2].at("unit").is_null());
  EXPECT_TRUE(d[2].at("label").is_null());
  EXPECT_FALSE(j->contains("warnings"));
  const std::string text = efu::tools::formatText(*j);
  EXPECT_NE(text.find("da00 cbm4 t=42 frame_time[3] ns [0 100 200] signal[2] A [-3 7] "
                      "frame_total[1] [4]"),
            std::string::npos)
      << text;
}

// Issue 37 item 14: a shape whose product leaves int64 wrapped ([2^62, 4] "agreed" with no data,
// [2^32]^3 "held 0 elements"); now it is said to.
// efu's own builder refuses such shapes, so the message is written with the schema's API.
TEST(Da00Decode, AShapeBeyondInt64IsWarnedAbout) {
  flatbuffers::FlatBufferBuilder fbb;
  const auto variable = [&fbb](const char *name, const std::vector<int64_t> &shape) {
    const auto n = fbb.CreateString(name);
    const auto s = fbb.CreateVector(shape);
    const auto d = fbb.CreateVector(std::vector<uint8_t>{});
    efu::fb::da00_VariableBuilder b(fbb);
    b.add_name(n);
    b.add_data_type(efu::fb::da00_dtype::int32);
    b.add_shape(s);
    b.add_data(d);
    return b.Finish();
  };
  const auto a = variable("a", {int64_t{1} << 62, 4});
  const auto b = variable("b", {int64_t{1} << 32, int64_t{1} << 32, int64_t{1} << 32});
  const auto list = fbb.CreateVector(std::vector{a, b});
  const auto source = fbb.CreateString("m");
  efu::fb::da00_DataArrayBuilder array(fbb);
  array.add_source_name(source);
  array.add_data(list);
  fbb.Finish(array.Finish(), efu::fb::da00_DataArrayIdentifier());
  std::string error;
  const auto j = efu::tools::decodeMessage({fbb.GetBufferPointer(), fbb.GetSize()}, error);
  ASSERT_TRUE(j.has_value()) << error;
  ASSERT_TRUE(j->contains("warnings")) << j->dump();
  const auto &w = j->at("warnings");
  ASSERT_EQ(w.size(), 2U) << w.dump();
  EXPECT_NE(w[0].get<std::string>().find("a: shape [4611686018427387904,4] holds more than "
                                         "2^63 - 1 elements"),
            std::string::npos)
      << w.dump();
  EXPECT_NE(w[1].get<std::string>().find("b: shape"), std::string::npos) << w.dump();
}

// The builder refuses a shape whose product leaves int64 instead of wrapping it to 0.
TEST(Da00Build, AShapeBeyondInt64IsRefused) {
  const std::vector<int32_t> none;
  const std::string_view xy[] = {"x", "y"};
  const int64_t wide[] = {int64_t{1} << 62, 4};
  const DataVariable vars[] = {{"a", "", xy, wide, DataType::Int32, bytesOf(none)}};
  flatbuffers::FlatBufferBuilder fbb;
  EXPECT_THROW((void)efu::serialize::buildDa00(fbb, "m", 1, vars), std::invalid_argument);
}

} // namespace
