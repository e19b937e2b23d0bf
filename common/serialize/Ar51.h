// SPDX-License-Identifier: BSD-2-Clause
// ar51 (RawReadoutMessage) builder: one raw datagram as sampled for commissioning.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <span>
#include <string_view>

namespace efu::serialize {

/// Serialises one ar51 RawReadoutMessage into `fbb` (cleared first; its buffer is reused, so
/// after the largest datagram no call allocates). The returned bytes (file identifier "ar51")
/// stay valid until `fbb` is next modified or destroyed. One thread per `fbb`.
std::span<const uint8_t> buildAr51(flatbuffers::FlatBufferBuilder &fbb, std::string_view source,
                                   int64_t messageId, std::span<const uint8_t> rawData);

} // namespace efu::serialize
