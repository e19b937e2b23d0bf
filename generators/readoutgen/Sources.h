// SPDX-License-Identifier: BSD-2-Clause
// Helpers for readoutgen sources: the module key table applied to an instrument JSON.
#pragma once

#include "common/sdk/Module.h"

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace efu::readoutgen {

/// Validates `config` against a module's key table exactly as the daemon does (unknown keys,
/// types, ranges, required keys) and returns it with defaults filled in. Throws
/// sdk::ConfigError naming `source`, the key and the value.
nlohmann::json applyKeyTable(const char *module, const EfuConfigKey *keys, size_t count,
                             const nlohmann::json &config, const std::string &source);

} // namespace efu::readoutgen
