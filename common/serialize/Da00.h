// SPDX-License-Identifier: BSD-2-Clause
// da00 (da00_DataArray) builder: a source's data arrays (histograms) as one message.
#pragma once

#include "common/sdk/Module.h"

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <span>
#include <string_view>

namespace efu::serialize {

/// Serialises one da00_DataArray into `fbb` (cleared first; its memory is reused, so the same
/// shape of message allocates only the first time): `sourceName`, `timestampNs` (ns since the
/// Unix epoch) and the variables in the order given, each with its name, unit (omitted when
/// empty), data type, axes, shape and data bytes; label and source are not written. The
/// returned bytes (file identifier "da00") stay valid until `fbb` is next modified or destroyed.
/// Throws std::invalid_argument for a variable whose data size does not match its shape and type
/// (a fixed-size type), whose shape has a negative dimension or more than 2^63 - 1 elements, or
/// whose axes and shape differ in length. One thread per `fbb`.
std::span<const uint8_t> buildDa00(flatbuffers::FlatBufferBuilder &fbb, std::string_view sourceName,
                                   int64_t timestampNs,
                                   std::span<const sdk::DataVariable> variables);

/// Bytes of one element of `type` (0 for None and CString).
size_t da00ElementBytes(sdk::DataType type) noexcept;

} // namespace efu::serialize
