// SPDX-License-Identifier: BSD-2-Clause
// da00 builder.
#include "common/serialize/Da00.h"

#include "schemas/da00_generated.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace efu::serialize {

size_t da00ElementBytes(sdk::DataType type) noexcept {
  switch (type) {
  case sdk::DataType::Int8:
  case sdk::DataType::UInt8:
    return 1;
  case sdk::DataType::Int16:
  case sdk::DataType::UInt16:
    return 2;
  case sdk::DataType::Int32:
  case sdk::DataType::UInt32:
  case sdk::DataType::Float32:
    return 4;
  case sdk::DataType::Int64:
  case sdk::DataType::UInt64:
  case sdk::DataType::Float64:
    return 8;
  case sdk::DataType::None:
  case sdk::DataType::CString:
    break;
  }
  return 0;
}

namespace {

void check(const sdk::DataVariable &v) {
  if (v.axes.size() != v.shape.size()) {
    throw std::invalid_argument("da00 variable '" + std::string(v.name) +
                                "': " + std::to_string(v.axes.size()) + " axes but " +
                                std::to_string(v.shape.size()) + " dimensions");
  }
  const size_t element = da00ElementBytes(v.type);
  if (element == 0) {
    return;
  }
  // Checked: a product that leaves int64 (shape [2^62, 4]) would wrap and "agree" with no data.
  int64_t elements = 1;
  for (const int64_t n : v.shape) {
    if (n < 0 || __builtin_mul_overflow(elements, n, &elements)) {
      throw std::invalid_argument("da00 variable '" + std::string(v.name) + "': a dimension of " +
                                  std::to_string(n) +
                                  " is negative or makes more than 2^63 - 1 elements");
    }
  }
  if (static_cast<uint64_t>(elements) > v.data.size() / element ||
      static_cast<size_t>(elements) * element != v.data.size()) {
    throw std::invalid_argument("da00 variable '" + std::string(v.name) +
                                "': " + std::to_string(v.data.size()) + " bytes do not hold " +
                                std::to_string(elements) + " elements of " +
                                std::to_string(element) + " bytes");
  }
}

} // namespace

std::span<const uint8_t> buildDa00(flatbuffers::FlatBufferBuilder &fbb, std::string_view sourceName,
                                   int64_t timestampNs,
                                   std::span<const sdk::DataVariable> variables) {
  for (const sdk::DataVariable &v : variables) {
    check(v);
  }
  fbb.Clear();
  // Zero timestamps and data types are written too: consumers reading by slot see every field.
  fbb.ForceDefaults(true);
  // At most a handful of variables per message: offsets on the stack.
  constexpr size_t kMaxVariables = 16;
  constexpr size_t kMaxAxes = 8;
  if (variables.size() > kMaxVariables) {
    throw std::invalid_argument("da00: at most 16 variables per message");
  }
  flatbuffers::Offset<fb::da00_Variable> offsets[kMaxVariables];
  for (size_t i = 0; i < variables.size(); ++i) {
    const sdk::DataVariable &v = variables[i];
    if (v.axes.size() > kMaxAxes) {
      throw std::invalid_argument("da00: at most 8 axes per variable");
    }
    const auto name = fbb.CreateString(v.name.data(), v.name.size());
    const auto unit = v.unit.empty() ? flatbuffers::Offset<flatbuffers::String>()
                                     : fbb.CreateString(v.unit.data(), v.unit.size());
    flatbuffers::Offset<flatbuffers::String> axisNames[kMaxAxes];
    for (size_t a = 0; a < v.axes.size(); ++a) {
      axisNames[a] = fbb.CreateString(v.axes[a].data(), v.axes[a].size());
    }
    const auto axes = fbb.CreateVector(axisNames, v.axes.size());
    const auto shape = fbb.CreateVector(v.shape.data(), v.shape.size());
    const auto data = fbb.CreateVector(v.data.data(), v.data.size());
    fb::da00_VariableBuilder b(fbb);
    b.add_name(name);
    if (!v.unit.empty()) {
      b.add_unit(unit);
    }
    b.add_data_type(static_cast<fb::da00_dtype>(v.type));
    b.add_axes(axes);
    b.add_shape(shape);
    b.add_data(data);
    offsets[i] = b.Finish();
  }
  const auto list = fbb.CreateVector(offsets, variables.size());
  const auto source = fbb.CreateString(sourceName.data(), sourceName.size());
  fb::da00_DataArrayBuilder array(fbb);
  array.add_source_name(source);
  array.add_timestamp(timestampNs);
  array.add_data(list);
  fbb.Finish(array.Finish(), fb::da00_DataArrayIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetSize()};
}

} // namespace efu::serialize
