// SPDX-License-Identifier: BSD-2-Clause
// Output forms of efu-dump: JSON lines, a compact text line, and the end-of-run summary.
#include "efu/tools/dump/Format.h"

#include <cstdio>

namespace efu::tools {
namespace {

using Json = nlohmann::json;

std::string dumpCompact(const Json &value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string stringOrDash(const Json &message, const char *key) {
  const auto it = message.find(key);
  if (it == message.end() || !it->is_string()) {
    return "-";
  }
  return it->get<std::string>();
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
