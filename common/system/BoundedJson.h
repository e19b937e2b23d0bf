// SPDX-License-Identifier: BSD-2-Clause
// The one JSON reader of efu's programs: configurations, calibrations, geometries, control
// replies and x5f2 status all go through parseJson() or readJsonFile(). Linear in the input,
// bounded in size and nesting, refusing duplicate keys, and every refusal says where.
#pragma once

#include "common/system/Printable.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace efu {

/// Deeper than any configuration or status we write (calibration files nest about 5 levels).
constexpr int kMaxJsonDepth = 64;

/// Largest JSON document the programs read (configurations, calibrations, geometries, replies):
/// far above any real one, far below what would exhaust memory.
constexpr size_t kMaxJsonBytes = size_t{64} << 20;
constexpr off_t kMaxJsonFileBytes = static_cast<off_t>(kMaxJsonBytes);

/// What a JSON document may be.
struct JsonLimits {
  /// Arrays and objects nested in each other, the outermost counting as 1.
  int maxDepth = kMaxJsonDepth;
  /// Bytes of text.
  size_t maxBytes = kMaxJsonBytes;
};

/// Thrown by parseJson() for anything it refuses. what() is "line L, column C[, at 'PATH']:
/// REASON": PATH is the key path of the value concerned (`Config.Resolution`, `mapping[3].Ring`,
/// control bytes of keys written `\xNN`), REASON one of "not valid JSON: <the parser's
/// diagnosis>", "number 1e400 is out of range (beyond a double)", "JSON nested deeper than 64
/// levels", "key 'K' appears twice in the same object". A document over the size bound has no
/// position: "N bytes, more than the 64 MiB a JSON document may have".
class JsonError : public std::runtime_error {
public:
  enum class Kind { Syntax, Number, Depth, DuplicateKey, Size };
  JsonError(Kind kind, const std::string &message, size_t line, size_t column, std::string path)
      : std::runtime_error(message), kind_(kind), line_(line), column_(column),
        path_(std::move(path)) {}
  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  /// 1-based line; 0 when the refusal has no position (Size). The column counts the characters
  /// of that line read when the refusal was made, up to the end of the token concerned (the
  /// number, the key's closing quote, the bracket), as nlohmann's own messages count.
  [[nodiscard]] size_t line() const noexcept { return line_; }
  [[nodiscard]] size_t column() const noexcept { return column_; }
  /// Key path of the value concerned, as shown in the message; "" at the top level.
  [[nodiscard]] const std::string &path() const noexcept { return path_; }

private:
  Kind kind_;
  size_t line_;
  size_t column_;
  std::string path_;
};

namespace json_detail {

using Json = nlohmann::json;

/// "64 MiB" for whole mebibytes, else "1000 bytes".
inline std::string sizeText(size_t bytes) {
  return bytes % (size_t{1} << 20) == 0 ? std::to_string(bytes >> 20) + " MiB"
                                        : std::to_string(bytes) + " bytes";
}

/// A char iterator that tells a shared cursor how far it has been advanced. The parser keeps its
/// position to itself, so this is how a refusal made in a SAX event (nesting, a duplicate key)
/// learns where in the text it is. One store per character.
class TrackedIterator {
public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char *;
  using reference = const char &;

  TrackedIterator() = default;
  TrackedIterator(const char *at, const char **cursor) : at_(at), cursor_(cursor) {}
  reference operator*() const { return *at_; }
  TrackedIterator &operator++() {
    *cursor_ = ++at_;
    return *this;
  }
  TrackedIterator operator++(int) {
    TrackedIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const TrackedIterator &other) const { return at_ == other.at_; }

private:
  const char *at_ = nullptr;
  const char **cursor_ = nullptr;
};

/// Builds the document from nlohmann's SAX events: each value is put in place once (no
/// per-element callback, no rescans of the parent: nlohmann's callback parser scans the whole
/// parent for discarded values at the end of every object, quadratic in an array of objects).
/// Refuses nesting beyond the bound and duplicate keys as they arrive.
class DomBuilder {
public:
  DomBuilder(std::string_view text, const char *const &cursor, const JsonLimits &limits)
      : text_(text), cursor_(cursor), limits_(limits) {}

  bool null() { return put(nullptr); }
  bool boolean(bool value) { return put(value); }
  bool number_integer(Json::number_integer_t value) { return put(value); }
  bool number_unsigned(Json::number_unsigned_t value) { return put(value); }
  bool number_float(Json::number_float_t value, const Json::string_t & /*text*/) {
    return put(value);
  }
  bool string(Json::string_t &value) { return put(std::move(value)); }
  bool binary(Json::binary_t &value) { return put(Json::binary(std::move(value))); }
  bool start_object(std::size_t /*elements*/) { return open(Json::value_t::object); }
  bool start_array(std::size_t /*elements*/) { return open(Json::value_t::array); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(Json::string_t &name) {
    Frame &frame = stack_.back();
    auto &members = frame.container->get_ref<Json::object_t &>();
    const auto [member, added] = members.try_emplace(std::move(name), nullptr);
    if (!added) {
      // `name` is intact: try_emplace moves from it only when it inserts.
      frame.key = &member->first;
      fail(JsonError::Kind::DuplicateKey, offset(cursor_), path(),
           "key '" + shown(name) + "' appears twice in the same object");
    }
    frame.key = &member->first;
    member_ = &member->second;
    return true;
  }

  template <class Exception>
  bool parse_error(std::size_t position, const std::string &token, const Exception &error) {
    if constexpr (std::is_same_v<Exception, nlohmann::json::out_of_range>) {
      fail(JsonError::Kind::Number, position, pathOfNext(),
           "number " + shown(token) + " is out of range (beyond a double)");
    } else {
      // "[json.exception.parse_error.101] parse error at line 2, column 15: syntax error ...":
      // the position is ours to say, the diagnosis is the parser's.
      std::string_view what = error.what();
      const size_t colon = what.find(": ");
      what = colon == std::string_view::npos ? what : what.substr(colon + 2);
      fail(JsonError::Kind::Syntax, position, pathOfNext(), "not valid JSON: " + std::string(what));
    }
    return false;
  }

  Json take() { return std::move(root_); }

private:
  struct Frame {
    Json *container;
    const std::string *key = nullptr; // object: the key of the member being read
  };

  /// Where the next value goes: the root, a new element at the end of the array, or the member
  /// the last key made.
  Json *slot() {
    if (stack_.empty()) {
      return &root_;
    }
    Json &container = *stack_.back().container;
    if (container.is_array()) {
      auto &elements = container.get_ref<Json::array_t &>();
      elements.emplace_back();
      return &elements.back();
    }
    return member_;
  }
  template <typename Value> bool put(Value &&value) {
    *slot() = Json(std::forward<Value>(value));
    return true;
  }
  bool open(Json::value_t type) {
    if (stack_.size() >= static_cast<size_t>(std::max(limits_.maxDepth, 0))) {
      fail(JsonError::Kind::Depth, offset(cursor_), "",
           "JSON nested deeper than " + std::to_string(limits_.maxDepth) + " levels");
    }
    Json *target = slot();
    *target = Json(type);
    stack_.push_back({target});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  [[nodiscard]] size_t offset(const char *at) const {
    return static_cast<size_t>(at - text_.data());
  }
  /// A key or token as it may be shown: control bytes escaped, at most 80 bytes.
  static std::string shown(std::string_view text) {
    constexpr size_t kMaxShown = 80;
    return text.size() <= kMaxShown ? printable(text)
                                    : printable(text.substr(0, kMaxShown - 3)) + "...";
  }
  /// The key path of the innermost value being read: the last key of each object, the last
  /// element of each array.
  [[nodiscard]] std::string path(bool nextElement = false) const {
    std::string out;
    for (size_t i = 0; i < stack_.size(); ++i) {
      const Json &container = *stack_[i].container;
      if (container.is_array()) {
        const size_t size = container.size();
        const bool innermost = i + 1 == stack_.size();
        if ((innermost && nextElement) || size > 0) {
          out += '[';
          out += std::to_string(innermost && nextElement ? size : size - 1);
          out += ']';
        }
      } else if (stack_[i].key != nullptr) {
        if (!out.empty()) {
          out += '.';
        }
        out += shown(*stack_[i].key);
      }
    }
    return out;
  }
  /// The path of a value that the parser refused before it became one (a number out of range,
  /// a syntax error): in an array, the element it would have been.
  [[nodiscard]] std::string pathOfNext() const { return path(true); }

  [[noreturn]] void fail(JsonError::Kind kind, size_t at, const std::string &where,
                         const std::string &reason) const {
    at = std::min(at, text_.size());
    const std::string_view before = text_.substr(0, at);
    const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
    const size_t lineStart = before.rfind('\n');
    const size_t column = lineStart == std::string_view::npos ? at : at - lineStart - 1;
    std::string message = "line " + std::to_string(line) + ", column " + std::to_string(column);
    if (!where.empty()) {
      message += ", at '" + where + "'";
    }
    throw JsonError(kind, message + ": " + reason, line, column, where);
  }

  std::string_view text_;
  const char *const &cursor_;
  const JsonLimits &limits_;
  Json root_;
  std::vector<Frame> stack_;
  Json *member_ = nullptr;
};

} // namespace json_detail

/// Parses the JSON document `text` in time linear in its size. Throws JsonError (see there) for
/// text over limits.maxBytes, a syntax error, a number beyond a double (1e400), arrays/objects
/// nested deeper than limits.maxDepth (nlohmann's parser is iterative, but dump(), comparisons
/// and our validators recurse: 70 000 levels overflow the stack), and a key given twice in one
/// object (which value was meant cannot be known; nlohmann would silently keep the last).
[[nodiscard]] inline nlohmann::json parseJson(std::string_view text,
                                              const JsonLimits &limits = {}) {
  if (text.size() > limits.maxBytes) {
    throw JsonError(JsonError::Kind::Size,
                    std::to_string(text.size()) + " bytes, more than the " +
                        json_detail::sizeText(limits.maxBytes) + " a JSON document may have",
                    0, 0, "");
  }
  const char *cursor = text.data();
  json_detail::DomBuilder builder(text, cursor, limits);
  const json_detail::TrackedIterator first(text.data(), &cursor);
  const json_detail::TrackedIterator last(text.data() + text.size(), &cursor);
  nlohmann::json::sax_parse(first, last, &builder, nlohmann::json::input_format_t::json,
                            /*strict=*/true, /*ignore_comments=*/false);
  return builder.take();
}

/// Thrown by readJsonFile(); the message starts with the path.
class JsonFileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Reads and parses a JSON file with parseJson(), refusing files over limits.maxBytes unread.
/// Throws JsonFileError "PATH: cannot open: REASON", "PATH: N bytes, more than the 64 MiB a JSON
/// file may have", or "PATH: " followed by a JsonError's message (e.g. "PATH: line 3, column 24,
/// at 'Config.Resolution': number 1e400 is out of range (beyond a double)").
inline nlohmann::json readJsonFile(const std::string &path, const JsonLimits &limits = {}) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw JsonFileError(path + ": cannot open: " + std::strerror(errno));
  }
  const auto tooLarge = [&](uint64_t bytes) {
    return JsonFileError(path + ": " + std::to_string(bytes) + " bytes, more than the " +
                         json_detail::sizeText(limits.maxBytes) + " a JSON file may have");
  };
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && static_cast<uint64_t>(info.st_size) > limits.maxBytes) {
    throw tooLarge(static_cast<uint64_t>(info.st_size));
  }
  // Read whole (a file that grew since stat(), or a pipe, is cut at the bound and refused).
  std::string text;
  char buffer[64 * 1024];
  while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > limits.maxBytes) {
      throw tooLarge(text.size());
    }
  }
  if (in.bad()) {
    throw JsonFileError(path + ": cannot read: " + std::strerror(errno));
  }
  try {
    return parseJson(text, limits);
  } catch (const JsonError &e) {
    throw JsonFileError(path + ": " + e.what());
  }
}

} // namespace efu
