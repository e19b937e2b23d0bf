// SPDX-License-Identifier: BSD-2-Clause
// Decodes ev44, f144, x5f2, ar51 and da00 flatbuffers into JSON, dispatching on the file identifier.
#include "efu/tools/dump/Decode.h"

#include "common/system/BoundedJson.h"

#include "schemas/ar51_generated.h"
#include "schemas/da00_generated.h"
#include "schemas/ev44_generated.h"
#include "schemas/f144_generated.h"
#include "schemas/x5f2_generated.h"

#include <flatbuffers/flatbuffers.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace efu::tools {
namespace {

constexpr size_t kIdentifierOffset = 4;
constexpr size_t kIdentifierLength = 4;
constexpr size_t kMinimumSize = kIdentifierOffset + kIdentifierLength;

using Json = nlohmann::json;

Json optionalString(const flatbuffers::String *text) {
  return text == nullptr ? Json(nullptr) : Json(text->str());
}

static_assert(FLATBUFFERS_LITTLEENDIAN, "vector elements are copied as little-endian bytes");

// The flatbuffers 2.0.8 Verifier checks a vector's length field but not that 8-byte elements
// are 8-byte aligned, so a corrupt buffer can pass it with misaligned int64/double elements:
// copy each element out instead of dereferencing it.
template <typename T> Json vectorJson(const flatbuffers::Vector<T> *values) {
  Json out = Json::array();
  if (values != nullptr) {
    const uint8_t *bytes = values->Data();
    for (flatbuffers::uoffset_t i = 0; i < values->size(); ++i) {
      T value;
      std::memcpy(&value, bytes + static_cast<size_t>(i) * sizeof(T), sizeof(T));
      out.push_back(value);
    }
  }
  return out;
}

Json decodeEv44(const uint8_t *data, size_t size, std::string &error) {
  flatbuffers::Verifier verifier(data, size);
  if (!fb::VerifyEvent44MessageBuffer(verifier)) {
    error = "ev44 buffer of " + std::to_string(size) + " bytes fails flatbuffers verification";
    return nullptr;
  }
  const auto *msg = fb::GetEvent44Message(data);
  const auto *tof = msg->time_of_flight();
  const auto *pixel = msg->pixel_id();
  const auto *refTime = msg->reference_time();
  const auto *refIndex = msg->reference_time_index();
  const size_t tofCount = tof == nullptr ? 0 : tof->size();
  const size_t pixelCount = pixel == nullptr ? 0 : pixel->size();
  const size_t eventCount = tofCount != 0 ? tofCount : pixelCount;

  Json out;
  out["kind"] = "ev44";
  out["source_name"] = msg->source_name()->str();
  out["message_id"] = msg->message_id();
  out["reference_time"] = vectorJson(refTime);
  out["reference_time_index"] = vectorJson(refIndex);
  out["event_count"] = eventCount;
  out["time_of_flight"] = vectorJson(tof);
  out["pixel_id"] = vectorJson(pixel);

  Json warnings = Json::array();
  if (refTime->size() != refIndex->size()) {
    warnings.push_back("reference_time has " + std::to_string(refTime->size()) +
                       " entries but reference_time_index has " + std::to_string(refIndex->size()));
  }
  if (eventCount != 0 && refTime->size() == 0) {
    warnings.push_back(std::to_string(eventCount) +
                       " events but no reference_time: their pulse is unknown");
  }
  if (pixelCount != 0 && tofCount != 0 && pixelCount != tofCount) {
    warnings.push_back("pixel_id has " + std::to_string(pixelCount) +
                       " entries but time_of_flight has " + std::to_string(tofCount));
  }
  int64_t previous = 0;
  for (size_t i = 0; i < refIndex->size(); ++i) {
    const int64_t index = refIndex->Get(static_cast<flatbuffers::uoffset_t>(i));
    if (index < previous || index > static_cast<int64_t>(eventCount)) {
      warnings.push_back("reference_time_index[" + std::to_string(i) +
                         "] = " + std::to_string(index) + " is out of order or beyond the " +
                         std::to_string(eventCount) + " events");
      break;
    }
    previous = index;
  }
  if (!warnings.empty()) {
    out["warnings"] = std::move(warnings);
  }
  return out;
}

template <typename Table> Json scalarValue(const void *table) {
  return static_cast<const Table *>(table)->value();
}

template <typename Table> Json arrayValue(const void *table) {
  return vectorJson(static_cast<const Table *>(table)->value());
}

Json f144Value(fb::Value type, const void *table) {
  using fb::Value;
  switch (type) {
  case Value::Byte:
    return scalarValue<fb::Byte>(table);
  case Value::UByte:
    return scalarValue<fb::UByte>(table);
  case Value::Short:
    return scalarValue<fb::Short>(table);
  case Value::UShort:
    return scalarValue<fb::UShort>(table);
  case Value::Int:
    return scalarValue<fb::Int>(table);
  case Value::UInt:
    return scalarValue<fb::UInt>(table);
  case Value::Long:
    return scalarValue<fb::Long>(table);
  case Value::ULong:
    return scalarValue<fb::ULong>(table);
  case Value::Float:
    return scalarValue<fb::Float>(table);
  case Value::Double:
    return scalarValue<fb::Double>(table);
  case Value::ArrayByte:
    return arrayValue<fb::ArrayByte>(table);
  case Value::ArrayUByte:
    return arrayValue<fb::ArrayUByte>(table);
  case Value::ArrayShort:
    return arrayValue<fb::ArrayShort>(table);
  case Value::ArrayUShort:
    return arrayValue<fb::ArrayUShort>(table);
  case Value::ArrayInt:
    return arrayValue<fb::ArrayInt>(table);
  case Value::ArrayUInt:
    return arrayValue<fb::ArrayUInt>(table);
  case Value::ArrayLong:
    return arrayValue<fb::ArrayLong>(table);
  case Value::ArrayULong:
    return arrayValue<fb::ArrayULong>(table);
  case Value::ArrayFloat:
    return arrayValue<fb::ArrayFloat>(table);
  case Value::ArrayDouble:
    return arrayValue<fb::ArrayDouble>(table);
  case Value::NONE:
    break;
  }
  return nullptr;
}

Json decodeF144(const uint8_t *data, size_t size, std::string &error) {
  flatbuffers::Verifier verifier(data, size);
  if (!fb::Verifyf144_LogDataBuffer(verifier)) {
    error = "f144 buffer of " + std::to_string(size) + " bytes fails flatbuffers verification";
    return nullptr;
  }
  const auto *msg = fb::Getf144_LogData(data);
  const auto type = msg->value_type();
  // The verifier accepts union types it does not know (forward compatibility); we cannot.
  if (type == fb::Value::NONE || type > fb::Value::MAX) {
    error = "f144 from '" + msg->source_name()->str() + "' has unknown value type " +
            std::to_string(static_cast<unsigned>(type));
    return nullptr;
  }
  Json out;
  out["kind"] = "f144";
  out["source_name"] = msg->source_name()->str();
  out["timestamp"] = msg->timestamp();
  out["value_type"] = fb::EnumNameValue(type);
  out["value"] = f144Value(type, msg->value());
  return out;
}

Json decodeX5f2(const uint8_t *data, size_t size, std::string &error) {
  flatbuffers::Verifier verifier(data, size);
  if (!fb::VerifyStatusBuffer(verifier)) {
    error = "x5f2 buffer of " + std::to_string(size) + " bytes fails flatbuffers verification";
    return nullptr;
  }
  const auto *msg = fb::GetStatus(data);
  Json out;
  out["kind"] = "x5f2";
  out["software_name"] = optionalString(msg->software_name());
  out["software_version"] = optionalString(msg->software_version());
  out["service_id"] = optionalString(msg->service_id());
  out["host_name"] = optionalString(msg->host_name());
  out["process_id"] = msg->process_id();
  out["update_interval"] = msg->update_interval();
  Json status = optionalString(msg->status_json());
  if (status.is_string()) {
    try {
      status = parseJson(status.get<std::string>());
    } catch (const std::exception &) {
      // Not JSON, or nested too deep to print safely: keep the text as it came.
    }
  }
  out["status_json"] = std::move(status);
  return out;
}

Json decodeAr51(const uint8_t *data, size_t size, std::string &error) {
  flatbuffers::Verifier verifier(data, size);
  if (!fb::VerifyRawReadoutMessageBuffer(verifier)) {
    error = "ar51 buffer of " + std::to_string(size) + " bytes fails flatbuffers verification";
    return nullptr;
  }
  const auto *msg = fb::GetRawReadoutMessage(data);
  Json out;
  out["kind"] = "ar51";
  out["source_name"] = optionalString(msg->source_name());
  out["message_id"] = msg->message_id();
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  const auto *raw = msg->raw_data();
  const size_t bytes = raw == nullptr ? 0 : raw->size();
  hex.reserve(2 * bytes);
  for (size_t i = 0; i < bytes; ++i) {
    hex += kHex[raw->Get(static_cast<flatbuffers::uoffset_t>(i)) >> 4];
    hex += kHex[raw->Get(static_cast<flatbuffers::uoffset_t>(i)) & 0xF];
  }
  out["size"] = bytes;
  out["raw_data"] = std::move(hex);
  return out;
}

/// The elements of a da00 variable's data bytes as JSON numbers of its type (a string for
/// c_string); `warning` is set when the bytes are not a whole number of elements.
template <typename T> Json elements(const flatbuffers::Vector<uint8_t> *bytes, std::string &warning) {
  Json out = Json::array();
  const size_t n = bytes == nullptr ? 0 : bytes->size();
  if (n % sizeof(T) != 0) {
    warning = std::to_string(n) + " data bytes are not a whole number of " +
              std::to_string(sizeof(T)) + "-byte elements";
  }
  for (size_t i = 0; i + sizeof(T) <= n; i += sizeof(T)) {
    T value;
    std::memcpy(&value, bytes->Data() + i, sizeof(T));
    out.push_back(value);
  }
  return out;
}

Json decodeDa00(const uint8_t *data, size_t size, std::string &error) {
  flatbuffers::Verifier verifier(data, size);
  if (!fb::Verifyda00_DataArrayBuffer(verifier)) {
    error = "da00 buffer of " + std::to_string(size) + " bytes fails flatbuffers verification";
    return nullptr;
  }
  const auto *msg = fb::Getda00_DataArray(data);
  Json out;
  out["kind"] = "da00";
  out["source_name"] = optionalString(msg->source_name());
  out["timestamp"] = msg->timestamp();
  Json variables = Json::array();
  Json warnings = Json::array();
  if (msg->data() != nullptr) {
    for (const fb::da00_Variable *v : *msg->data()) {
      Json var;
      var["name"] = optionalString(v->name());
      var["unit"] = optionalString(v->unit());
      var["label"] = optionalString(v->label());
      var["source"] = optionalString(v->source());
      const auto type = v->data_type();
      const char *typeName = fb::EnumNameda00_dtype(type);
      var["data_type"] = typeName[0] != '\0' ? Json(typeName) : Json(static_cast<int>(type));
      Json axes = Json::array();
      if (v->axes() != nullptr) {
        for (const flatbuffers::String *a : *v->axes()) {
          axes.push_back(a->str());
        }
      }
      var["axes"] = std::move(axes);
      var["shape"] = vectorJson(v->shape());
      std::string warning;
      const auto *bytes = v->data();
      switch (type) {
      case fb::da00_dtype::int8: var["data"] = elements<int8_t>(bytes, warning); break;
      case fb::da00_dtype::uint8: var["data"] = elements<uint8_t>(bytes, warning); break;
      case fb::da00_dtype::int16: var["data"] = elements<int16_t>(bytes, warning); break;
      case fb::da00_dtype::uint16: var["data"] = elements<uint16_t>(bytes, warning); break;
      case fb::da00_dtype::int32: var["data"] = elements<int32_t>(bytes, warning); break;
      case fb::da00_dtype::uint32: var["data"] = elements<uint32_t>(bytes, warning); break;
      case fb::da00_dtype::int64: var["data"] = elements<int64_t>(bytes, warning); break;
      case fb::da00_dtype::uint64: var["data"] = elements<uint64_t>(bytes, warning); break;
      case fb::da00_dtype::float32: var["data"] = elements<float>(bytes, warning); break;
      case fb::da00_dtype::float64: var["data"] = elements<double>(bytes, warning); break;
      case fb::da00_dtype::c_string:
        var["data"] = bytes == nullptr ? std::string()
                                       : std::string(reinterpret_cast<const char *>(bytes->Data()),
                                                     bytes->size());
        break;
      default:
        var["data"] = elements<uint8_t>(bytes, warning);
        warning = "unknown data_type: data shown as bytes";
        break;
      }
      if (type != fb::da00_dtype::c_string && warning.empty() && var["data"].is_array()) {
        // The product of the dimensions, unless it leaves int64 (or a dimension is negative):
        // shape [2^62, 4] would wrap to 0 and "agree" with no data.
        int64_t expected = 1;
        bool representable = true;
        for (const auto &n : var["shape"]) {
          const int64_t dimension = n.get<int64_t>();
          representable = representable && dimension >= 0 &&
                          !__builtin_mul_overflow(expected, dimension, &expected);
        }
        if (!representable) {
          warning = "shape " + var["shape"].dump() +
                    " holds more than 2^63 - 1 elements (or a negative count), data " +
                    std::to_string(var["data"].size());
        } else if (expected != static_cast<int64_t>(var["data"].size())) {
          warning = "shape holds " + std::to_string(expected) + " elements, data " +
                    std::to_string(var["data"].size());
        }
      }
      if (!warning.empty()) {
        warnings.push_back(var["name"].is_string() ? var["name"].get<std::string>() + ": " + warning
                                                   : warning);
      }
      variables.push_back(std::move(var));
    }
  }
  out["data"] = std::move(variables);
  if (!warnings.empty()) {
    out["warnings"] = std::move(warnings);
  }
  return out;
}

} // namespace

std::vector<uint8_t> ar51Datagram(const nlohmann::json &decoded) {
  std::vector<uint8_t> bytes;
  if (!decoded.is_object() || decoded.value("kind", "") != "ar51") {
    return bytes;
  }
  const auto it = decoded.find("raw_data");
  if (it == decoded.end() || !it->is_string()) {
    return bytes;
  }
  const std::string &hex = it->get_ref<const std::string &>();
  const auto nibble = [](char c) {
    return c <= '9' ? c - '0' : c - 'a' + 10;
  };
  bytes.reserve(hex.size() / 2);
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(static_cast<uint8_t>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  }
  return bytes;
}

std::string fileIdentifier(std::span<const uint8_t> buffer) {
  if (buffer.size() < kMinimumSize) {
    return {};
  }
  std::string out;
  for (size_t i = kIdentifierOffset; i < kMinimumSize; ++i) {
    const uint8_t byte = buffer[i];
    if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
      out.push_back(static_cast<char>(byte));
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", byte);
      out += escaped;
    }
  }
  return out;
}

bool isKnownIdentifier(std::string_view identifier) {
  return identifier == fb::Event44MessageIdentifier() ||
         identifier == fb::f144_LogDataIdentifier() || identifier == fb::StatusIdentifier() ||
         identifier == fb::RawReadoutMessageIdentifier() ||
         identifier == fb::da00_DataArrayIdentifier();
}

std::optional<nlohmann::json> decodeMessage(std::span<const uint8_t> buffer, std::string &error) {
  error.clear();
  if (buffer.size() < kMinimumSize) {
    error = "message of " + std::to_string(buffer.size()) +
            " bytes is too short for a flatbuffer with a file identifier";
    return std::nullopt;
  }
  const std::string identifier = fileIdentifier(buffer);
  if (!isKnownIdentifier(identifier)) {
    error = "unknown file identifier '" + identifier + "' (" + std::to_string(buffer.size()) +
            " bytes)";
    return std::nullopt;
  }

  // Flatbuffers reads scalars in place; a Kafka payload has no alignment guarantee.
  const uint8_t *data = buffer.data();
  std::vector<uint64_t> aligned;
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
    aligned.resize((buffer.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    std::memcpy(aligned.data(), buffer.data(), buffer.size());
    data = reinterpret_cast<const uint8_t *>(aligned.data());
  }

  Json out;
  try {
    if (identifier == fb::Event44MessageIdentifier()) {
      out = decodeEv44(data, buffer.size(), error);
    } else if (identifier == fb::f144_LogDataIdentifier()) {
      out = decodeF144(data, buffer.size(), error);
    } else if (identifier == fb::RawReadoutMessageIdentifier()) {
      out = decodeAr51(data, buffer.size(), error);
    } else if (identifier == fb::da00_DataArrayIdentifier()) {
      out = decodeDa00(data, buffer.size(), error);
    } else {
      out = decodeX5f2(data, buffer.size(), error);
    }
  } catch (const std::exception &e) {
    // Only allocation failures can get here; report them like any other bad message.
    error = identifier + " decode failed: " + e.what();
    return std::nullopt;
  }
  if (!error.empty()) {
    return std::nullopt;
  }
  return out;
}

} // namespace efu::tools
