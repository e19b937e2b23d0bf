// SPDX-License-Identifier: BSD-2-Clause
// JSON parsing with a nesting bound: deep input is refused before anything recurses on it.
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace efu {

/// Deeper than any configuration or status we write (calibration files nest about 5 levels).
constexpr int kMaxJsonDepth = 64;

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

} // namespace efu
