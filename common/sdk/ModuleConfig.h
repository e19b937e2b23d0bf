// SPDX-License-Identifier: BSD-2-Clause
// Validates a module's JSON configuration against its key table (library efu::module_config).
#pragma once

#include "common/sdk/Module.h"

#include <nlohmann/json.hpp>

#include <string>

namespace efu {

/// The same for a bare key table (tools that read a module's config without loading it, and
/// modules that parse their config outside the daemon, e.g. for a generator).
nlohmann::json validateModuleConfig(const char *moduleName, const EfuConfigKey *keys, size_t count,
                                    const nlohmann::json &config, const std::string &source);

/// Returns the configuration with defaults filled in. Throws sdk::ConfigError naming `source`,
/// the key and the value for: unknown keys, wrong types, out-of-range numbers, missing required
/// keys, and a top level that is not an object.
nlohmann::json validateModuleConfig(const EfuModuleDescriptor &descriptor,
                                    const nlohmann::json &config, const std::string &source);

/// Reads a JSON file. Throws sdk::ConfigError naming the file when it cannot be opened or parsed
/// (with the parser's position).
nlohmann::json readConfigFile(const std::string &path);

/// Reads and validates a JSON file ("" = defaults only). Throws sdk::ConfigError on I/O or
/// parse errors (with the parser's position) and on validation errors.
nlohmann::json loadModuleConfig(const EfuModuleDescriptor &descriptor, const std::string &path);

/// The calibration file `path` as JSON (bounded like configs; ConfigError naming the file for
/// one that cannot be read or parsed), or null JSON when `path` is empty. Its content is the
/// module's to check (ModuleContext::calibration()).
nlohmann::json loadCalibration(const std::string &path);

/// The key table as text for `efu -d NAME --help-module`.
std::string formatModuleHelp(const EfuModuleDescriptor &descriptor);

} // namespace efu
