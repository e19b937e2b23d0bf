// SPDX-License-Identifier: BSD-2-Clause
// Command-line parsing with the exit codes every program documents (docs/tools.md#exit-codes).
#pragma once

#include <CLI/CLI.hpp>

#include <optional>

namespace efu::cli {

/// Exit code of every program that could not start: a bad option or value, a missing or
/// unreadable file, a refused configuration (the message names it). systemd's
/// RestartPreventExitStatus=1 in efu@.service relies on it.
inline constexpr int kExitCouldNotStart = 1;

/// Parses the command line. nullopt: go on. Otherwise the program returns the value at once:
/// 0 after --help or --version (printed on stdout), kExitCouldNotStart after a usage error
/// (CLI11's message on stderr). CLI11's own exit codes (105 for a refused value, 106 for a
/// missing required option, 109 for an unknown one, ...) never leave a program.
inline std::optional<int> parseCommandLine(CLI::App &app, int argc, const char *const *argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : kExitCouldNotStart;
  }
}

} // namespace efu::cli
