// SPDX-License-Identifier: BSD-2-Clause
// efu-dump's da00 decoding: a histogram from the da00 builder back as JSON and as a text line;
// a variable whose data does not fill its shape gets a warning.
#include "common/serialize/Da00.h"
#include "efu/tools/dump/Decode.h"
#include "efu/tools/dump/Format.h"

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

} // namespace
