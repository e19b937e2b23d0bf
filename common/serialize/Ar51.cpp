// SPDX-License-Identifier: BSD-2-Clause
// ar51 builder.
#include "common/serialize/Ar51.h"

#include "schemas/ar51_generated.h"

namespace efu::serialize {

std::span<const uint8_t> buildAr51(flatbuffers::FlatBufferBuilder &fbb, std::string_view source,
                                   int64_t messageId, std::span<const uint8_t> rawData) {
  fbb.Clear();
  const auto name = fbb.CreateString(source.data(), source.size());
  const auto data = fbb.CreateVector(rawData.data(), rawData.size());
  fb::RawReadoutMessageBuilder message(fbb);
  message.add_message_id(messageId);
  message.add_source_name(name);
  message.add_raw_data(data);
  fbb.Finish(message.Finish(), fb::RawReadoutMessageIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetSize()};
}

} // namespace efu::serialize
