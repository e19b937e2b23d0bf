// SPDX-License-Identifier: BSD-2-Clause
// Old option spellings kept for one release: hidden from --help, forwarded, warned about.
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <string>

namespace efu::cli {

/// Adds `oldNames` ("-c", or "-a,--address") as a deprecated spelling of `option`: --help does
/// not list it, its values go to `option` (whose checks, transforms, needs and excludes apply as
/// if it had been spelled the new way), and each use prints one line on stderr naming the new
/// spelling. docs/tools.md ("Option vocabulary") lists every such alias.
inline CLI::Option *addDeprecatedAlias(CLI::App &app, const std::string &oldNames,
                                       CLI::Option *option) {
  auto slashed = [](std::string names) {
    std::replace(names.begin(), names.end(), ',', '/');
    return names;
  };
  const std::string warning = "warning: " + slashed(oldNames) +
                              " is deprecated and goes in the next release; use " +
                              slashed(option->get_name(false, true)) + "\n";
  return app
      .add_option(oldNames,
                  [option, warning](const CLI::results_t &values) {
                    std::fputs(warning.c_str(), stderr);
                    for (const auto &value : values) {
                      option->add_result(value);
                    }
                    return true;
                  })
      ->group("")
      ->trigger_on_parse();
}

} // namespace efu::cli
