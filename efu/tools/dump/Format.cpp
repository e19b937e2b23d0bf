// SPDX-License-Identifier: BSD-2-Clause
// Output forms of efu-dump: JSON lines, a compact text line, and the end-of-run summary.
#include "efu/tools/dump/Format.h"

#include <cstdio>

namespace efu::tools {
namespace {

using Json = nlohmann::json;

/// Length (2-4) of the well-formed UTF-8 sequence of a non-ASCII character at text[i], or 0.
size_t utf8Length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t length = 0;
  unsigned char low = 0x80; // range of the second byte (excludes overlongs and surrogates)
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    low = lead == 0xE0 ? 0xA0 : 0x80;
    high = lead == 0xED ? 0x9F : 0xBF;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    low = lead == 0xF0 ? 0x90 : 0x80;
    high = lead == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  if (i + length > text.size() || byte(i + 1) < low || byte(i + 1) > high) {
    return 0;
  }
  for (size_t k = i + 2; k < i + length; ++k) {
    if (byte(k) < 0x80 || byte(k) > 0xBF) {
      return 0;
    }
  }
  return length;
}

/// C1 control characters (U+0080..U+009F: C2 80..C2 9F) act on terminals like ESC sequences.
bool isC1(std::string_view text, size_t i) {
  return static_cast<unsigned char>(text[i]) == 0xC2 &&
         static_cast<unsigned char>(text[i + 1]) <= 0x9F;
}

/// Everything a terminal would act on, in a form that shows it: `\xNN` for C0 and C1 controls,
/// DEL and bytes that are not UTF-8 (or `\u00NN` inside JSON, which has no `\x`); a backslash of
/// plain text doubles, so an escape cannot be faked.
std::string terminalSafe(std::string_view text, bool json) {
  std::string out;
  out.reserve(text.size());
  const auto hex = [&](unsigned value) {
    char code[8];
    std::snprintf(code, sizeof(code), json ? "\\u%04x" : "\\x%02x", value);
    out += code;
  };
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) {
      hex(c);
      ++i;
    } else if (c == '\\' && !json) {
      out += "\\\\";
      ++i;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
      ++i;
    } else if (const size_t length = utf8Length(text, i); length == 0) {
      hex(json ? 0xFFFD : c); // JSON text from dump() is valid UTF-8: never reached there
      ++i;
    } else if (isC1(text, i)) {
      hex(static_cast<unsigned char>(text[i + 1]));
      i += 2;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

/// Compact JSON; invalid UTF-8 becomes U+FFFD, and DEL and C1 controls (which dump() leaves
/// raw) become \u escapes, so the line is safe on a terminal and still the same JSON value.
std::string dumpCompact(const Json &value) {
  return terminalSafe(value.dump(-1, ' ', false, Json::error_handler_t::replace), true);
}

std::string stringOrDash(const Json &message, const char *key) {
  const auto it = message.find(key);
  if (it == message.end() || !it->is_string()) {
    return "-";
  }
  return terminalSafe(it->get_ref<const std::string &>(), false);
}

std::string abbreviated(const Json &values) {
  if (!values.is_array()) {
    return dumpCompact(values);
  }
  std::string out = "[";
  size_t shown = 0;
  for (const auto &value : values) {
    if (shown == kTextArrayItems) {
      break;
    }
    if (shown != 0) {
      out += ' ';
    }
    out += dumpCompact(value);
    ++shown;
  }
  if (values.size() > shown) {
    out += " ... (+" + std::to_string(values.size() - shown) + ")";
  }
  return out + "]";
}

std::string prefix(const Json &message) {
  if (!message.contains("topic")) {
    return {};
  }
  return stringOrDash(message, "topic") + "[" + dumpCompact(message.value("partition", Json())) +
         "]@" + dumpCompact(message.value("offset", Json())) + " ";
}

std::string textEv44(const Json &message) {
  const auto &refTime = message.at("reference_time");
  const auto &refIndex = message.at("reference_time_index");
  std::string pulses = "[";
  for (size_t i = 0; i < refTime.size() && i < kTextArrayItems; ++i) {
    if (i != 0) {
      pulses += ' ';
    }
    pulses += dumpCompact(refTime[i]);
    pulses += '@';
    pulses += i < refIndex.size() ? dumpCompact(refIndex[i]) : std::string("?");
  }
  if (refTime.size() > kTextArrayItems) {
    pulses += " ... (+" + std::to_string(refTime.size() - kTextArrayItems) + ")";
  }
  pulses += "]";
  std::string out = "ev44 " + stringOrDash(message, "source_name") +
                    " id=" + dumpCompact(message.at("message_id")) +
                    " pulses=" + std::to_string(refTime.size()) +
                    " events=" + dumpCompact(message.at("event_count")) + " ref=" + pulses +
                    " tof=" + abbreviated(message.at("time_of_flight")) +
                    " pixel=" + abbreviated(message.at("pixel_id"));
  if (message.contains("warnings")) {
    out += " warnings=" + dumpCompact(message.at("warnings"));
  }
  return out;
}

std::string textF144(const Json &message) {
  return "f144 " + stringOrDash(message, "source_name") + " = " + abbreviated(message.at("value")) +
         " (" + stringOrDash(message, "value_type") + ") t=" + dumpCompact(message.at("timestamp"));
}

std::string textX5f2(const Json &message) {
  return "x5f2 " + stringOrDash(message, "service_id") + " " +
         stringOrDash(message, "software_name") + " " + stringOrDash(message, "software_version") +
         " host=" + stringOrDash(message, "host_name") +
         " pid=" + dumpCompact(message.at("process_id")) +
         " interval=" + dumpCompact(message.at("update_interval")) +
         "ms status=" + dumpCompact(message.at("status_json"));
}

std::string textAr51(const Json &message) {
  const std::string &hex = message.at("raw_data").get_ref<const std::string &>();
  constexpr size_t kShownBytes = 32;
  std::string shown = hex.substr(0, 2 * kShownBytes);
  if (hex.size() > shown.size()) {
    shown += "...";
  }
  return "ar51 " + stringOrDash(message, "source_name") +
         " id=" + dumpCompact(message.at("message_id")) +
         " bytes=" + dumpCompact(message.at("size")) + " data=" + shown;
}

std::string textDa00(const Json &message) {
  std::string out = "da00 ";
  out.append(stringOrDash(message, "source_name"));
  out.append(" t=").append(dumpCompact(message.at("timestamp")));
  for (const Json &v : message.at("data")) {
    out.append(" ").append(stringOrDash(v, "name")).append(dumpCompact(v.at("shape")));
    if (v.contains("unit") && v.at("unit").is_string()) {
      out.append(" ").append(v.at("unit").get_ref<const std::string &>());
    }
    out.append(" ").append(abbreviated(v.at("data")));
  }
  if (message.contains("warnings")) {
    out.append(" warnings=").append(dumpCompact(message.at("warnings")));
  }
  return out;
}

std::string rate(double count, double spanSeconds) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.1f", count / spanSeconds);
  return text;
}

} // namespace

std::string formatJsonLine(const nlohmann::json &message) {
  return dumpCompact(message);
}

std::string formatText(const nlohmann::json &message) {
  const std::string kind = stringOrDash(message, "kind");
  try {
    if (kind == "ev44") {
      return prefix(message) + textEv44(message);
    }
    if (kind == "f144") {
      return prefix(message) + textF144(message);
    }
    if (kind == "x5f2") {
      return prefix(message) + textX5f2(message);
    }
    if (kind == "ar51") {
      return prefix(message) + textAr51(message);
    }
    if (kind == "da00") {
      return prefix(message) + textDa00(message);
    }
  } catch (const Json::exception &) {
    // A hand-made object missing a member: fall through to the JSON form.
  }
  return prefix(message) + dumpCompact(message);
}

std::string formatSummary(const DumpCounts &counts, double spanSeconds) {
  std::string out = "summary: " + std::to_string(counts.messages) + " messages (" +
                    std::to_string(counts.decoded) + " decoded, " + std::to_string(counts.unknown) +
                    " unknown identifier, " + std::to_string(counts.undecodable) +
                    " undecodable), " + std::to_string(counts.events) + " events, " +
                    std::to_string(counts.bytes) + " bytes\n";
  if (counts.messages < 2 || spanSeconds <= 0.0) {
    return out + "rates: n/a (fewer than two messages to measure between)";
  }
  char span[32];
  std::snprintf(span, sizeof(span), "%.6f", spanSeconds);
  return out + "rates over " + span + " s from first to last message: " +
         rate(static_cast<double>(counts.messages), spanSeconds) + " messages/s, " +
         rate(static_cast<double>(counts.events), spanSeconds) + " events/s, " +
         rate(static_cast<double>(counts.bytes), spanSeconds) + " bytes/s";
}

} // namespace efu::tools
