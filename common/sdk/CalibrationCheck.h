// SPDX-License-Identifier: BSD-2-Clause
// Checks for calibration files (efu --calibration FILE) and for the nested sections of
// configuration files: every refusal is an sdk::ConfigError naming the file, the key path and the
// value. Header-only, part of the SDK.
#pragma once

#include "common/sdk/Module.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace efu::sdk {

/// Typed access to a calibration's (or a configuration section's) JSON; each failure throws
/// ConfigError("<source>: <prefix><path> = <value>: <what>") (values shortened to 80 chars).
/// The prefix is "calibration " by default, "" for configurations.
class CalibrationCheck {
public:
  explicit CalibrationCheck(const std::string &source, const char *prefix = "calibration ")
      : source_(source), prefix_(prefix) {}

  [[noreturn]] void fail(const std::string &path, const nlohmann::json &value,
                         const std::string &what) const {
    std::string shown = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    if (shown.size() > 80) {
      shown = shown.substr(0, 77) + "...";
    }
    throw ConfigError(source_ + ": " + prefix_ + path + " = " + shown + ": " + what);
  }
  /// Refuses a key of `object` (at `path`) that is not in `known`.
  void keys(const nlohmann::json &object, const std::string &path,
            std::initializer_list<const char *> known) const {
    for (auto it = object.begin(); it != object.end(); ++it) {
      const std::string &key = it.key();
      if (std::none_of(known.begin(), known.end(), [&key](const char *k) { return key == k; })) {
        std::string list;
        for (const char *k : known) {
          list.append(list.empty() ? "" : ", ").append(k);
        }
        fail(path + "." + key, it.value(), "unknown key; known here: " + list);
      }
    }
  }
  /// An integer in [min, max].
  int64_t integer(const nlohmann::json &value, const std::string &path, int64_t min,
                  int64_t max) const {
    const int64_t n = integer(value, path);
    if (n < min || n > max) {
      fail(path, value,
           "expected an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    }
    return n;
  }
  /// `object[key]`, where `object` (at `path`) must be an object holding `key`.
  const nlohmann::json &member(const nlohmann::json &object, const std::string &path,
                               const char *key) const {
    if (!object.is_object()) {
      fail(path, object, std::string("expected an object with key '") + key + "'");
    }
    if (!object.contains(key)) {
      fail(path, object, std::string("missing key '") + key + "'");
    }
    return object.at(key);
  }
  int64_t integer(const nlohmann::json &value, const std::string &path) const {
    if (!value.is_number_integer()) {
      fail(path, value, "expected an integer");
    }
    return value.get<int64_t>();
  }
  const std::string &string(const nlohmann::json &value, const std::string &path) const {
    if (!value.is_string()) {
      fail(path, value, "expected a string");
    }
    return value.get_ref<const std::string &>();
  }
  const nlohmann::json &array(const nlohmann::json &value, const std::string &path,
                              size_t size) const {
    if (!value.is_array() || value.size() != size) {
      fail(path, value, "expected an array of " + std::to_string(size));
    }
    return value;
  }
  double number(const nlohmann::json &value, const std::string &path) const {
    if (!value.is_number() || !std::isfinite(value.get<double>())) {
      fail(path, value, "expected a finite number");
    }
    return value.get<double>();
  }
  /// The file's instrument name `value` (at `path`) must equal `configured` ignoring case,
  /// unless the configuration names none.
  void instrument(const nlohmann::json &value, const std::string &path,
                  const std::string &configured) const {
    const std::string &name = string(value, path);
    auto lower = [](std::string s) {
      std::transform(s.begin(), s.end(), s.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      return s;
    };
    if (!configured.empty() && lower(name) != lower(configured)) {
      fail(path, value, "the configuration's instrument is '" + configured + "'");
    }
  }

private:
  const std::string &source_;
  const char *prefix_;
};

/// A non-negative integer of an ESS file read the way the ESS EFU reads it into a uint32_t field:
/// modulo 2^32 (a limit of 2^32 ns or more becomes a small one). `wrapped` says whether it did,
/// so that the module can warn at start.
inline int64_t essUint32(const nlohmann::json &value, bool &wrapped) {
  const uint64_t v = value.get<uint64_t>();
  wrapped = v > UINT32_MAX;
  return static_cast<int64_t>(v & UINT32_MAX);
}

} // namespace efu::sdk
