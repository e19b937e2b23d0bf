// SPDX-License-Identifier: BSD-2-Clause
// Parsing a program's command line in a test, as the program does: its options struct filled by
// its own add<Program>Options(CLI::App &, Options &), from arguments without the program name.
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace efu::test {

/// The options `add` declares, parsed from `args`; throws CLI::ParseError as the program would.
template <class Options, class Add> Options parseOptions(Add add, std::vector<std::string> args) {
  CLI::App app{"test"};
  Options options;
  add(app, options);
  std::reverse(args.begin(), args.end()); // CLI11 takes the vector reversed
  app.parse(args);
  return options;
}

/// The text of the CLI::ParseError that `args` raise, or "(accepted)".
template <class Options, class Add>
std::string parseErrorOf(Add add, const std::vector<std::string> &args) {
  try {
    parseOptions<Options>(add, args);
  } catch (const CLI::ParseError &e) {
    return e.what();
  }
  return "(accepted)";
}

} // namespace efu::test
