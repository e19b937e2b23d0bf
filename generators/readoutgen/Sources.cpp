// SPDX-License-Identifier: BSD-2-Clause
#include "generators/readoutgen/Sources.h"
#include "common/sdk/ModuleConfig.h"

#include <stdexcept>

namespace efu::readoutgen {

void SourceDeleter::operator()(ReadoutSource *source) const noexcept {
  if (library) {
    library->descriptor().destroySource(source);
  } else {
    delete source;
  }
}

std::string sourceNames(const std::vector<std::string> &moduleDirs) {
  const auto dirs = moduleSearchPath(moduleDirs);
  std::string out;
  for (const auto &name : listModules(dirs)) {
    try {
      if (loadModule(name, dirs)->descriptor().createSource != nullptr) {
        out += (out.empty() ? "" : ", ") + name;
      }
    } catch (const std::exception &) {
      // a module that does not load has no source to offer; efu -d NAME says why
    }
  }
  return out.empty() ? "(none found)" : out;
}

SourcePtr makeSource(const std::string &module, const nlohmann::json &config,
                     const std::string &configSource, uint64_t seed,
                     const std::vector<std::string> &moduleDirs,
                     const nlohmann::json &calibration, const std::string &calibrationSource) {
  std::shared_ptr<ModuleLibrary> library;
  try {
    library = loadModule(module, moduleSearchPath(moduleDirs));
  } catch (const ModuleNotFound &e) {
    throw std::invalid_argument(std::string(e.what()) + "; modules with a readout source: " +
                                sourceNames(moduleDirs));
  }
  const EfuModuleDescriptor &d = library->descriptor();
  if (d.createSource == nullptr) {
    throw std::invalid_argument("module '" + module +
                                "' describes no readout source (docs/modules.md); modules "
                                "with one: " + sourceNames(moduleDirs));
  }
  const nlohmann::json validated = validateModuleConfig(d, config, configSource);
  checkInstrument(module, validated, configSource);
  std::string error;
  ReadoutSource *source = d.createSource(&validated, configSource.c_str(), seed, &calibration,
                                         calibrationSource.c_str(), &error);
  if (source == nullptr) {
    throw sdk::ConfigError(error);
  }
  return SourcePtr(source, SourceDeleter{std::move(library)});
}

} // namespace efu::readoutgen
