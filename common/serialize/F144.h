// SPDX-License-Identifier: BSD-2-Clause
// f144 (f144_LogData) builder for one Long value, used to publish counters.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <span>
#include <string_view>

namespace efu::serialize {

/// Serialises one f144_LogData with a Long value into `fbb` (cleared first; its memory is reused).
/// timestampNs: ns since the Unix epoch. The returned bytes (file identifier "f144") stay valid
/// until `fbb` is next modified or destroyed. Thread rules: those of `fbb` (one thread).
std::span<const uint8_t> buildF144Long(flatbuffers::FlatBufferBuilder &fbb,
                                       std::string_view sourceName, int64_t timestampNs,
                                       int64_t value);

} // namespace efu::serialize
