// SPDX-License-Identifier: BSD-2-Clause
// The da00 builder, read back without our generated code: by vtable slot of the ESS
// streaming-data-types da00_dataarray.fbs (da00_DataArray: source_name 0, timestamp 1, data 2;
// da00_Variable: name 0, unit 1, label 2, source 3, data_type 4, axes 5, shape 6, data 7).
#include "common/serialize/Da00.h"

#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr flatbuffers::voffset_t slot(int n) {
  return static_cast<flatbuffers::voffset_t>(4 + 2 * n);
}

using efu::sdk::DataType;
using efu::sdk::DataVariable;

template <class T> std::span<const uint8_t> bytesOf(const std::vector<T> &v) {
  return {reinterpret_cast<const uint8_t *>(v.data()), v.size() * sizeof(T)};
}

TEST(Da00Builder, AHistogramReadBySlot) {
  const std::vector<int32_t> edges{0, 100, 200, 300};
  const std::vector<int32_t> signal{5, 0, 7};
  const std::vector<int32_t> reference{0};
  const std::vector<uint64_t> total{12};
  const std::string_view frameTime[] = {"frame_time"};
  const std::string_view refTime[] = {"reference_time"};
  const int64_t four[] = {4};
  const int64_t three[] = {3};
  const int64_t one[] = {1};
  const DataVariable vars[] = {
      {"frame_time", "ns", frameTime, four, DataType::Int32, bytesOf(edges)},
      {"signal", "A", frameTime, three, DataType::Int32, bytesOf(signal)},
      {"reference_time", "ns", refTime, one, DataType::Int32, bytesOf(reference)},
      {"frame_total", "counts", refTime, one, DataType::UInt64, bytesOf(total)}};
  flatbuffers::FlatBufferBuilder fbb;
  const auto span = efu::serialize::buildDa00(fbb, "cbm4", 1'700'000'000'123'456'789, vars);
  const std::vector<uint8_t> buffer(span.begin(), span.end());
  ASSERT_TRUE(flatbuffers::BufferHasIdentifier(buffer.data(), "da00"));
  const auto *root = flatbuffers::GetRoot<flatbuffers::Table>(buffer.data());
  EXPECT_EQ(root->GetPointer<const flatbuffers::String *>(slot(0))->str(), "cbm4");
  EXPECT_EQ(root->GetField<int64_t>(slot(1), 0), 1'700'000'000'123'456'789);
  const auto *list =
      root->GetPointer<const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::Table>> *>(
          slot(2));
  ASSERT_NE(list, nullptr);
  ASSERT_EQ(list->size(), 4U);
  const char *names[] = {"frame_time", "signal", "reference_time", "frame_total"};
  const char *units[] = {"ns", "A", "ns", "counts"};
  const int8_t types[] = {5, 5, 5, 8}; // da00_dtype int32, int32, int32, uint64
  const int64_t shapes[] = {4, 3, 1, 1};
  const char *axes[] = {"frame_time", "frame_time", "reference_time", "reference_time"};
  for (flatbuffers::uoffset_t i = 0; i < 4; ++i) {
    const flatbuffers::Table *v = list->Get(i);
    EXPECT_EQ(v->GetPointer<const flatbuffers::String *>(slot(0))->str(), names[i]);
    EXPECT_EQ(v->GetPointer<const flatbuffers::String *>(slot(1))->str(), units[i]);
    EXPECT_EQ(v->GetPointer<const flatbuffers::String *>(slot(2)), nullptr) << "no label";
    EXPECT_EQ(v->GetPointer<const flatbuffers::String *>(slot(3)), nullptr) << "no source";
    EXPECT_EQ(v->GetField<int8_t>(slot(4), -1), types[i]);
    const auto *ax =
        v->GetPointer<const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>> *>(
            slot(5));
    ASSERT_EQ(ax->size(), 1U);
    EXPECT_EQ(ax->Get(0)->str(), axes[i]);
    const auto *shape = v->GetPointer<const flatbuffers::Vector<int64_t> *>(slot(6));
    ASSERT_EQ(shape->size(), 1U);
    EXPECT_EQ(shape->Get(0), shapes[i]);
  }
  const auto *data = list->Get(1)->GetPointer<const flatbuffers::Vector<uint8_t> *>(slot(7));
  ASSERT_EQ(data->size(), 12U);
  std::vector<int32_t> got(3);
  std::memcpy(got.data(), data->Data(), 12);
  EXPECT_EQ(got, signal);
  const auto *totals = list->Get(3)->GetPointer<const flatbuffers::Vector<uint8_t> *>(slot(7));
  uint64_t t = 0;
  ASSERT_EQ(totals->size(), 8U);
  std::memcpy(&t, totals->Data(), 8);
  EXPECT_EQ(t, 12U);
}

TEST(Da00Builder, RefusesDataThatDoesNotFitItsShape) {
  const std::vector<int32_t> three{1, 2, 3};
  const std::string_view axis[] = {"x"};
  const int64_t four[] = {4};
  const DataVariable bad[] = {{"v", "", axis, four, DataType::Int32, bytesOf(three)}};
  flatbuffers::FlatBufferBuilder fbb;
  EXPECT_THROW(efu::serialize::buildDa00(fbb, "s", 0, bad), std::invalid_argument);
  const DataVariable noAxes[] = {{"v", "", {}, four, DataType::Int32, bytesOf(three)}};
  EXPECT_THROW(efu::serialize::buildDa00(fbb, "s", 0, noAxes), std::invalid_argument);
}

} // namespace
