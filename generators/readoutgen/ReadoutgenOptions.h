// SPDX-License-Identifier: BSD-2-Clause
// Command-line options of readoutgen.
#pragma once

#include "generators/readoutgen/Generator.h"
#include "common/system/CliFwd.h"

#include <string>

namespace efu::readoutgen {

/// What the command line sets: the generator's options and the two that are not the
/// generator's (the bit rate as typed, parsed once logging is up; the module list request).
struct ReadoutgenOptions {
  GeneratorOptions generator;
  std::string bitRate;      ///< --bitrate as given ("" = no bit limit), e.g. "500M"
  bool listModules = false; ///< --help-modules
};

/// Registers readoutgen's options, with their deprecated spellings, on `app` (defaults printed
/// by --help).
void addReadoutgenOptions(CLI::App &app, ReadoutgenOptions &options);

} // namespace efu::readoutgen
