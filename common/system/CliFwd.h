// SPDX-License-Identifier: BSD-2-Clause
// CLI11's App and Option, declared for headers that only name them (an options struct and the
// function that registers it). Only the files that build or parse a command line include
// <CLI/CLI.hpp>: with CLI11 2.1 every translation unit that does pays about 9 s of GCC at -O3
// (its validators are namespace-scope objects, constructed and optimised in every unit).
#pragma once

namespace CLI {
class App;
class Option;
} // namespace CLI
