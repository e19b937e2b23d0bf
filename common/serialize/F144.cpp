// SPDX-License-Identifier: BSD-2-Clause
// f144 Long builder.
#include "common/serialize/F144.h"

#include "schemas/f144_generated.h"

namespace efu::serialize {

std::span<const uint8_t> buildF144Long(flatbuffers::FlatBufferBuilder &fbb,
                                       std::string_view sourceName, int64_t timestampNs,
                                       int64_t value) {
  fbb.Clear();
  // Zero values and timestamps are written explicitly: consumers reading by slot see them.
  fbb.ForceDefaults(true);
  const auto source = fbb.CreateString(sourceName.data(), sourceName.size());
  const auto longValue = fb::CreateLong(fbb, value);
  fb::f144_LogDataBuilder log(fbb);
  log.add_source_name(source);
  log.add_timestamp(timestampNs);
  log.add_value_type(fb::Value::Long);
  log.add_value(longValue.Union());
  fbb.Finish(log.Finish(), fb::f144_LogDataIdentifier());
  return {fbb.GetBufferPointer(), fbb.GetSize()};
}

} // namespace efu::serialize
