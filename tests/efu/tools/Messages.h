// SPDX-License-Identifier: BSD-2-Clause
// Test messages built with the generated flatbuffers code (ev44, f144, x5f2).
#pragma once

#include "schemas/ev44_generated.h"
#include "schemas/f144_generated.h"
#include "schemas/x5f2_generated.h"

#include <cstdint>
#include <string>
#include <vector>

namespace efu::test {

using Bytes = std::vector<uint8_t>;

inline Bytes finished(flatbuffers::FlatBufferBuilder &fbb) {
  return Bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

inline Bytes makeEv44(const std::string &source, int64_t messageId,
                      const std::vector<int64_t> &referenceTime,
                      const std::vector<int32_t> &referenceIndex, const std::vector<int32_t> &tof,
                      const std::vector<int32_t> &pixel) {
  flatbuffers::FlatBufferBuilder fbb;
  auto root = fb::CreateEvent44MessageDirect(fbb, source.c_str(), messageId, &referenceTime,
                                             &referenceIndex, &tof, &pixel);
  fb::FinishEvent44MessageBuffer(fbb, root);
  return finished(fbb);
}

inline Bytes makeF144Long(const std::string &source, int64_t timestampNs, int64_t value) {
  flatbuffers::FlatBufferBuilder fbb;
  auto name = fbb.CreateString(source);
  auto payload = fb::CreateLong(fbb, value);
  auto root = fb::Createf144_LogData(fbb, name, timestampNs, fb::Value::Long, payload.Union());
  fb::Finishf144_LogDataBuffer(fbb, root);
  return finished(fbb);
}

inline Bytes makeF144Double(const std::string &source, int64_t timestampNs, double value) {
  flatbuffers::FlatBufferBuilder fbb;
  auto name = fbb.CreateString(source);
  auto payload = fb::CreateDouble(fbb, value);
  auto root = fb::Createf144_LogData(fbb, name, timestampNs, fb::Value::Double, payload.Union());
  fb::Finishf144_LogDataBuffer(fbb, root);
  return finished(fbb);
}

inline Bytes makeF144ArrayInt(const std::string &source, int64_t timestampNs,
                              const std::vector<int32_t> &values) {
  flatbuffers::FlatBufferBuilder fbb;
  auto name = fbb.CreateString(source);
  auto payload = fb::CreateArrayIntDirect(fbb, &values);
  auto root = fb::Createf144_LogData(fbb, name, timestampNs, fb::Value::ArrayInt, payload.Union());
  fb::Finishf144_LogDataBuffer(fbb, root);
  return finished(fbb);
}

inline Bytes makeX5f2(const std::string &statusJson) {
  flatbuffers::FlatBufferBuilder fbb;
  auto root =
      fb::CreateStatusDirect(fbb, "efu", "0.1.0", "udp", "daq01", 4242, 1000, statusJson.c_str());
  fb::FinishStatusBuffer(fbb, root);
  return finished(fbb);
}

} // namespace efu::test
