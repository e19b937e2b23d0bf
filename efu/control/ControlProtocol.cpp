// SPDX-License-Identifier: BSD-2-Clause
// The EFU text control protocol: tokenising, argument checks and the command table.
#include "efu/control/ControlProtocol.h"

#include <array>
#include <charconv>
#include <exception>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace efu {

namespace {

constexpr std::array<std::string_view, 14> kCommands{
    "VERSION_GET",    "DETECTOR_INFO_GET", "STAT_GET_COUNT",    "STAT_GET", "STAT_GET_NAME",
    "CMD_GET_COUNT",  "CMD_GET",           "RUNTIMESTATS",      "EXIT",     "AUTH",
    "CALIB_MODE_GET", "CALIB_MODE_SET",    "RUNTIMESTATS_JSON", "REPORT_GET",
};

/// Compares every byte whatever the first difference, so reply time tells nothing of the secret.
bool sameSecret(std::string_view given, std::string_view secret) noexcept {
  unsigned char difference = given.size() == secret.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i) {
    difference |= static_cast<unsigned char>(given[i] ^ secret[i % secret.size()]);
  }
  return difference == 0;
}

bool isSpace(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

std::vector<std::string_view> tokenize(std::string_view line) {
  std::vector<std::string_view> tokens;
  size_t pos = 0;
  while (pos < line.size()) {
    while (pos < line.size() && isSpace(line[pos])) {
      ++pos;
    }
    const size_t start = pos;
    while (pos < line.size() && !isSpace(line[pos])) {
      ++pos;
    }
    if (pos > start) {
      tokens.push_back(line.substr(start, pos - start));
    }
  }
  return tokens;
}

/// A 1-based index in [1, count]; nullopt for signs, non-digits, overflow or out of range.
std::optional<size_t> parseIndex(std::string_view token, size_t count) noexcept {
  uint64_t value = 0;
  const char *end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, value);
  if (ec != std::errc{} || ptr != end || value < 1 || value > count) {
    return std::nullopt;
  }
  return static_cast<size_t>(value);
}

/// Replies are single lines: callbacks must not be able to inject a second one.
std::string oneLine(std::string text) {
  for (char &c : text) {
    if (c == '\n' || c == '\r') {
      c = ' ';
    }
  }
  return text;
}

std::string withText(std::string_view command, const std::string &text) {
  std::string reply(command);
  if (!text.empty()) {
    reply += ' ';
    reply += text;
  }
  return reply;
}

} // namespace

ControlProtocol::ControlProtocol(const Stats &stats, ControlInfo info)
    : stats_(stats), info_(std::move(info)) {}

std::span<const std::string_view> ControlProtocol::commands() noexcept {
  return kCommands;
}

bool ControlProtocol::isError(std::string_view reply) noexcept {
  return reply.starts_with("Error: ");
}

bool ControlProtocol::changesState(std::string_view command) noexcept {
  return command == "EXIT" || command == "CALIB_MODE_SET";
}

std::string ControlProtocol::handle(std::string_view line, ControlSession &session) {
  const std::vector<std::string_view> tokens = tokenize(line);
  if (tokens.empty()) {
    return std::string(kBadCommand);
  }
  const std::string_view command = tokens[0];
  const size_t nargs = tokens.size() - 1;
  const auto noArgs = [nargs] { return nargs == 0; };

  if (command == "AUTH") {
    if (nargs != 1) {
      return std::string(kBadArguments);
    }
    if (info_.secret.empty() || sameSecret(tokens[1], info_.secret)) {
      session.authenticated = true;
      return std::string(kOk);
    }
    session.closeAfterReply = true;
    return std::string(kBadSecret);
  }
  if (changesState(command)) {
    if (info_.readOnly) {
      return std::string(kReadOnly);
    }
    if (!info_.secret.empty() && !session.authenticated) {
      return std::string(kNotAuthenticated);
    }
  }

  try {
    if (command == "VERSION_GET") {
      return noArgs() ? oneLine(withText(command, info_.version)) : std::string(kBadArguments);
    }
    if (command == "DETECTOR_INFO_GET") {
      return noArgs() ? oneLine(withText(command, info_.detectorInfo)) : std::string(kBadArguments);
    }
    if (command == "STAT_GET_COUNT") {
      return noArgs() ? "STAT_GET_COUNT " + std::to_string(stats_.size())
                      : std::string(kBadArguments);
    }
    if (command == "STAT_GET") {
      const auto index = nargs == 1 ? parseIndex(tokens[1], stats_.size()) : std::nullopt;
      if (!index) {
        return std::string(kBadArguments);
      }
      // The registry only grows, so an index checked against size() stays valid.
      return "STAT_GET " + stats_.name(*index - 1) + ' ' + std::to_string(stats_.value(*index - 1));
    }
    if (command == "STAT_GET_NAME") {
      const Counter *counter = nargs == 1 ? stats_.find(tokens[1]) : nullptr;
      if (counter == nullptr) {
        return std::string(kBadArguments);
      }
      return "STAT_GET_NAME " + std::string(tokens[1]) + ' ' + std::to_string(counter->get());
    }
    if (command == "CMD_GET_COUNT") {
      return noArgs() ? "CMD_GET_COUNT " + std::to_string(kCommands.size())
                      : std::string(kBadArguments);
    }
    if (command == "CMD_GET") {
      const auto index = nargs == 1 ? parseIndex(tokens[1], kCommands.size()) : std::nullopt;
      if (!index) {
        return std::string(kBadArguments);
      }
      return "CMD_GET " + std::string(kCommands[*index - 1]);
    }
    if (command == "RUNTIMESTATS") {
      if (!noArgs()) {
        return std::string(kBadArguments);
      }
      return "RUNTIMESTATS " + std::to_string(info_.runtimeStatus ? info_.runtimeStatus() : 0U);
    }
    if (command == "RUNTIMESTATS_JSON") {
      if (!noArgs()) {
        return std::string(kBadArguments);
      }
      return oneLine(withText(command, info_.runtimeStats ? info_.runtimeStats() : std::string()));
    }
    if (command == "CALIB_MODE_GET") {
      if (!noArgs()) {
        return std::string(kBadArguments);
      }
      // Without Kafka (--no-kafka) there is no raw-data mode to be in: 0, as efustatus.py expects.
      return info_.calibMode && info_.calibMode() ? "CALIB_MODE_GET 1" : "CALIB_MODE_GET 0";
    }
    if (command == "CALIB_MODE_SET") {
      if (!info_.setCalibMode) {
        return std::string(kBadCommand);
      }
      if (nargs != 1 || (tokens[1] != "0" && tokens[1] != "1")) {
        return std::string(kBadArguments);
      }
      info_.setCalibMode(tokens[1] == "1");
      return std::string(kOk);
    }
    if (command == "REPORT_GET") {
      const auto text = nargs == 1 && info_.report ? info_.report(tokens[1]) : std::nullopt;
      if (!text) {
        return std::string(kBadArguments);
      }
      return oneLine("REPORT_GET " + std::string(tokens[1]) + ' ' + *text);
    }
    if (command == "EXIT") {
      if (!noArgs()) {
        return std::string(kBadArguments);
      }
      if (info_.requestExit) {
        info_.requestExit();
      }
      return std::string(kOk);
    }
  } catch (const std::out_of_range &) {
    return std::string(kBadArguments);
  } catch (const std::exception &) {
    return std::string(kInternalError);
  }
  return std::string(kBadCommand);
}

} // namespace efu
