// SPDX-License-Identifier: BSD-2-Clause
// CLI11 validators every program shares: finite numbers, regular files, non-empty values,
// key=value settings.
#pragma once

#include <CLI/CLI.hpp>

#include <sys/stat.h>

#include <cmath>
#include <string>

namespace efu::cli {

/// A number that is not NaN or infinite (CLI::Range lets NaN through: every comparison is false).
inline const CLI::Validator kFinite(
    [](std::string &text) -> std::string {
      try {
        size_t used = 0;
        const double value = std::stod(text, &used);
        if (used == text.size() && std::isfinite(value)) {
          return {};
        }
      } catch (const std::exception &) {
      }
      return "must be a finite number, got '" + text + "'";
    },
    "FINITE");

/// An existing regular file (a FIFO or device would block or never end; a directory is no file).
inline const CLI::Validator kRegularFile(
    [](std::string &path) -> std::string {
      struct stat info {};
      if (stat(path.c_str(), &info) != 0) {
        return "file does not exist: " + path;
      }
      if (!S_ISREG(info.st_mode)) {
        return "not a regular file: " + path;
      }
      return {};
    },
    "FILE");

/// A value that is not empty or blank.
inline const CLI::Validator kNotEmpty(
    [](std::string &text) -> std::string {
      if (text.find_first_not_of(" \t") == std::string::npos) {
        return "must not be empty";
      }
      return {};
    },
    "NOT_EMPTY");

/// A librdkafka property as kcat's -X takes it: key=value with a key (the value may be empty).
/// No description: the option's type name (KEY=VALUE) says it in --help.
inline const CLI::Validator kKeyValue(
    [](std::string &text) -> std::string {
      const auto eq = text.find('=');
      return eq == std::string::npos || eq == 0 ? "'" + text + "' is not key=value" : "";
    },
    "");

} // namespace efu::cli
