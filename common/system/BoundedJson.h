// SPDX-License-Identifier: BSD-2-Clause
// JSON parsing with a nesting bound: deep input is refused before anything recurses on it.
#pragma once

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

namespace efu {

/// Deeper than any configuration or status we write (calibration files nest about 5 levels).
constexpr int kMaxJsonDepth = 64;

/// Largest JSON file the programs read (configurations, calibrations, geometries): far above any
/// real one, far below what would exhaust memory.
constexpr off_t kMaxJsonFileBytes = 64 << 20;

/// Thrown by parseJson() for input nested deeper than the bound.
class JsonDepthError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Parses JSON (a string or an istream) like nlohmann::json::parse, but throws JsonDepthError
/// as soon as arrays/objects nest deeper than maxDepth. nlohmann's parser itself is iterative,
/// but dump(), comparisons and our validators recurse: 70 000 levels overflow the stack.
/// Syntax errors throw nlohmann::json::parse_error as usual.
template <typename Input>
nlohmann::json parseJson(Input &&input, int maxDepth = kMaxJsonDepth) {
  const nlohmann::json::parser_callback_t bound =
      [maxDepth](int depth, nlohmann::json::parse_event_t event, nlohmann::json &) {
        if (depth > maxDepth && (event == nlohmann::json::parse_event_t::object_start ||
                                 event == nlohmann::json::parse_event_t::array_start)) {
          throw JsonDepthError("JSON nested deeper than " + std::to_string(maxDepth) +
                               " levels");
        }
        return true;
      };
  return nlohmann::json::parse(std::forward<Input>(input), bound);
}

/// Thrown by readJsonFile(); the message starts with the path.
class JsonFileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Reads and parses a JSON file with the depth bound, refusing files over kMaxJsonFileBytes.
/// Throws JsonFileError "PATH: cannot open: REASON", "PATH: N bytes, more than the 64 MiB a JSON
/// file may have", "PATH: not valid JSON: ..." or "PATH: JSON nested deeper than 64 levels".
inline nlohmann::json readJsonFile(const std::string &path) {
  std::ifstream in(path);
  if (!in) {
    throw JsonFileError(path + ": cannot open: " + std::strerror(errno));
  }
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && info.st_size > kMaxJsonFileBytes) {
    throw JsonFileError(path + ": " + std::to_string(info.st_size) + " bytes, more than the " +
                        std::to_string(kMaxJsonFileBytes >> 20) + " MiB a JSON file may have");
  }
  try {
    return parseJson(in);
  } catch (const nlohmann::json::parse_error &e) {
    throw JsonFileError(path + ": not valid JSON: " + e.what());
  } catch (const JsonDepthError &e) {
    throw JsonFileError(path + ": " + e.what());
  }
}

} // namespace efu
