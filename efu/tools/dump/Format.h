// SPDX-License-Identifier: BSD-2-Clause
// Output forms of efu-dump: JSON lines, a compact text line, and the end-of-run summary.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace efu::tools {

/// Array entries shown by formatText() before the rest is abbreviated as "... (+N)".
inline constexpr size_t kTextArrayItems = 8;

/// One JSON line (no trailing newline); invalid UTF-8 from the wire is replaced, never thrown.
std::string formatJsonLine(const nlohmann::json &message);

/// One compact line for a decoded message (see decodeMessage()); arrays are abbreviated.
/// Optional "topic", "partition" and "offset" members make a `topic[partition]@offset` prefix.
std::string formatText(const nlohmann::json &message);

/// What efu-dump counted over a run.
struct DumpCounts {
  uint64_t messages = 0;    ///< every message received, decodable or not
  uint64_t decoded = 0;     ///< messages printed
  uint64_t unknown = 0;     ///< skipped: unknown or missing file identifier
  uint64_t undecodable = 0; ///< skipped: known identifier but failed verification
  uint64_t events = 0;      ///< ev44 events in decoded messages
  uint64_t bytes = 0;       ///< payload bytes of all messages received
};

/// The --summary text (two lines, no trailing newline). Rates are over `spanSeconds`, the time
/// from the first to the last message received; with fewer than two messages they are "n/a".
std::string formatSummary(const DumpCounts &counts, double spanSeconds);

} // namespace efu::tools
