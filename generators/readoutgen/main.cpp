// SPDX-License-Identifier: BSD-2-Clause
// readoutgen: ESS readout datagrams (header + detector readouts) with ground truth, paced.
#include "common/system/CliExit.h"
#include "generators/readoutgen/ReadoutgenOptions.h"
#include "generators/readoutgen/Run.h"
#include "generators/readoutgen/Sources.h"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>

int main(int argc, char **argv) {
  CLI::App app{
      "readoutgen: ESS readout datagrams (docs/wire-formats.md §2-4) for a detector module, "
      "driven by the module's instrument JSON, with optional ground truth (--truth)."};
  efu::readoutgen::ReadoutgenOptions options;
  efu::readoutgen::addReadoutgenOptions(app, options);
  app.set_version_flag("--version", EFU_VERSION);
  if (const auto code = efu::cli::parseCommandLine(app, argc, argv)) {
    return *code;
  }
  if (options.listModules) {
    std::printf("modules with a readout source: %s\n",
                efu::readoutgen::sourceNames(options.generator.moduleDirs).c_str());
    return 0;
  }
  try {
    efu::readoutgen::run(options);
  } catch (const std::exception &e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
