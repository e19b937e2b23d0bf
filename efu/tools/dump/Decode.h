// SPDX-License-Identifier: BSD-2-Clause
// Decodes ev44, f144, x5f2, ar51 and da00 flatbuffers into JSON, dispatching on the file identifier.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace efu::tools {

/// The 4-character file identifier (bytes 4..7) with non-printable bytes as `\xNN`, or an
/// empty string when the buffer is shorter than 8 bytes.
std::string fileIdentifier(std::span<const uint8_t> buffer);

/// True for the identifiers decodeMessage() understands: "ev44", "f144", "x5f2", "ar51", "da00".
bool isKnownIdentifier(std::string_view identifier);

/// Verifies `buffer` with the flatbuffers Verifier and decodes it into one JSON object whose
/// "kind" is the file identifier:
///  - ev44: source_name, message_id, reference_time, reference_time_index, event_count,
///    time_of_flight, pixel_id (and "warnings" when the arrays are inconsistent);
///  - f144: source_name, timestamp (ns), value_type (union member name), value (number or array);
///  - x5f2: software_name, software_version, service_id, host_name, process_id,
///    update_interval (ms), status_json (embedded JSON when it parses, else the raw string);
///  - ar51: source_name, message_id, size (bytes), raw_data (lower-case hex of the datagram);
///  - da00: source_name, timestamp (ns), data: one object per variable with name, unit, label,
///    source (null when absent), data_type (da00_dtype name), axes, shape and data (the elements
///    as numbers of that type; a string for c_string), and "warnings" when data and shape differ.
/// Absent strings are null. Returns std::nullopt and sets `error` to a one-line reason for
/// short, unknown, truncated or otherwise invalid buffers; never throws on bad input.
/// The buffer need not be aligned. Thread-safe (no shared state).
std::optional<nlohmann::json> decodeMessage(std::span<const uint8_t> buffer, std::string &error);

/// The datagram of a decoded ar51 message (its raw_data hex back to bytes); empty for anything
/// else.
std::vector<uint8_t> ar51Datagram(const nlohmann::json &decoded);

} // namespace efu::tools
