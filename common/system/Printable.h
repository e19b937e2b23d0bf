// SPDX-License-Identifier: BSD-2-Clause
// Text from outside (a JSON key, a module's error) made safe to echo in a message or a log line.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace efu {

/// `text` with every control byte (0x00-0x1f and 0x7f) written as `\xNN`; everything else
/// (printable ASCII, UTF-8 sequences) is kept as it is. For quoting input in error messages: a
/// terminal or a log reader sees the bytes named, never interpreted (no colour codes, no carriage
/// returns that overwrite the line, no forged log lines).
[[nodiscard]] inline std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof(escaped), "\\x%02x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

} // namespace efu
