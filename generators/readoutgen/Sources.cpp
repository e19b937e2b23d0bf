// SPDX-License-Identifier: BSD-2-Clause
// The registry of readoutgen detector sources: THE place to add one (one line in makeSource()).
#include "generators/readoutgen/Sources.h"
#include "common/sdk/ModuleConfig.h"
#include "generators/readoutgen/CaenSource.h"
#include "generators/readoutgen/ReadoutSource.h"
#include "generators/readoutgen/Vmm3Source.h"

#include <stdexcept>

namespace efu::readoutgen {

nlohmann::json applyKeyTable(const char *module, const EfuConfigKey *keys, size_t count,
                             const nlohmann::json &config, const std::string &source) {
  return validateModuleConfig(module, keys, count, config, source);
}

// To register a source: include its header above and add one `if` line below. Sources of other
// detector families (e.g. Vmm3Source) may be added here by their owners; nothing else in
// readoutgen needs to change.
std::unique_ptr<ReadoutSource> makeSource(const std::string &detector, const nlohmann::json &config,
                                          const std::string &configSource, uint64_t seed) {
  if (detector == "caen") {
    return std::make_unique<CaenSource>(config, configSource, seed);
  }
  if (detector == "vmm3") {
    return std::make_unique<Vmm3Source>(config, configSource, seed);
  }
  throw std::invalid_argument("readoutgen has no source for detector '" + detector +
                              "'; known: " + sourceNames());
}

std::string sourceNames() {
  return "caen, vmm3";
}

} // namespace efu::readoutgen
