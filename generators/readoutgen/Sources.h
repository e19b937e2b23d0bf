// SPDX-License-Identifier: BSD-2-Clause
// readoutgen's detector sources: whatever module describes its readouts through the SDK
// (EfuModuleDescriptor::createSource). Adding a detector needs no change here.
#pragma once

#include "common/sdk/ReadoutSource.h"
#include "common/sdk/ModuleLoader.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace efu::readoutgen {

using sdk::Neutron;
using sdk::ReadoutSource;
using sdk::TruthSink;

/// Releases a source the way it was made: through its module (which stays loaded until then),
/// or with delete for one a test built directly (library == nullptr).
struct SourceDeleter {
  std::shared_ptr<ModuleLibrary> library;
  void operator()(ReadoutSource *source) const noexcept;
};
using SourcePtr = std::unique_ptr<ReadoutSource, SourceDeleter>;

/// The readout source of module `module` (efu-module-<module>.so, searched like efu does:
/// `moduleDirs` first). `config` is the instrument JSON the module reads with `efu --config`;
/// it is validated against the module's key table exactly as the daemon does. `seed` makes runs
/// reproducible. `calibration` (null = none) is what `efu --calibration`
/// hands the module, from file `calibrationSource`: a source that supports it writes raw values
/// the calibrated module turns back into the intended pixels; one that does not refuses it. Throws std::invalid_argument for a module that is missing or provides no
/// source (naming the ones that do), and sdk::ConfigError for a bad configuration.
SourcePtr makeSource(const std::string &module, const nlohmann::json &config,
                     const std::string &configSource, uint64_t seed,
                     const std::vector<std::string> &moduleDirs = {},
                     const nlohmann::json &calibration = nullptr,
                     const std::string &calibrationSource = {});

/// Modules on the search path that provide a readout source, comma-separated.
std::string sourceNames(const std::vector<std::string> &moduleDirs = {});

} // namespace efu::readoutgen
