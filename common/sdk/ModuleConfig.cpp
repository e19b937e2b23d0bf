// SPDX-License-Identifier: BSD-2-Clause
// Validates a module's JSON configuration against the key table in its descriptor.
#include "common/sdk/ModuleConfig.h"

#include "common/system/BoundedJson.h"
#include "common/system/Printable.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

namespace efu {
namespace {

using sdk::ConfigError;
using sdk::ConfigType;

const char *typeName(ConfigType type) {
  switch (type) {
  case ConfigType::Integer: return "integer";
  case ConfigType::Number: return "number";
  case ConfigType::Boolean: return "boolean";
  case ConfigType::String: return "string";
  case ConfigType::Array: return "array";
  case ConfigType::Object: return "object";
  }
  return "?";
}

bool hasType(const nlohmann::json &value, ConfigType type) {
  switch (type) {
  case ConfigType::Integer: return value.is_number_integer();
  case ConfigType::Number: return value.is_number();
  case ConfigType::Boolean: return value.is_boolean();
  case ConfigType::String: return value.is_string();
  case ConfigType::Array: return value.is_array();
  case ConfigType::Object: return value.is_object();
  }
  return false;
}

bool hasRange(const EfuConfigKey &key) {
  return (key.type == ConfigType::Integer || key.type == ConfigType::Number) &&
         key.minimum <= key.maximum;
}

std::string knownKeys(const EfuModuleDescriptor &d) {
  std::string out;
  for (uint32_t i = 0; i < d.configKeyCount; ++i) {
    out += (i == 0 ? "" : ", ") + std::string(d.configKeys[i].key);
  }
  return out.empty() ? "(this module takes no keys)" : out;
}

} // namespace

nlohmann::json validateModuleConfig(const EfuModuleDescriptor &d, const nlohmann::json &config,
                                    const std::string &source) {
  if (!config.is_object()) {
    throw ConfigError(source + ": the top level must be a JSON object, not " +
                      std::string(config.type_name()));
  }
  for (const auto &[key, value] : config.items()) {
    bool known = false;
    for (uint32_t i = 0; i < d.configKeyCount && !known; ++i) {
      known = key == d.configKeys[i].key;
    }
    if (!known) {
      throw ConfigError(source + ": unknown key '" + printable(key) + "' for module '" + d.name +
                        "'; known keys: " + knownKeys(d));
    }
  }
  nlohmann::json out = nlohmann::json::object();
  for (uint32_t i = 0; i < d.configKeyCount; ++i) {
    const EfuConfigKey &key = d.configKeys[i];
    nlohmann::json value;
    if (config.contains(key.key)) {
      value = config.at(key.key);
    } else if (key.defaultJson != nullptr) {
      try {
        value = parseJson(key.defaultJson);
      } catch (const JsonError &e) {
        throw ConfigError("module '" + std::string(d.name) + "': the default of key '" + key.key +
                          "' is not usable JSON: " + e.what());
      }
    } else {
      throw ConfigError(source + ": required key '" + std::string(key.key) + "' (" +
                        typeName(key.type) + ") is missing: " + key.help);
    }
    if (!hasType(value, key.type)) {
      throw ConfigError(source + ": key '" + std::string(key.key) + "' must be " +
                        typeName(key.type) + ", got " + value.dump());
    }
    if (hasRange(key)) {
      const double number = value.get<double>();
      if (number < key.minimum || number > key.maximum) {
        throw ConfigError(fmt::format("{}: key '{}' = {} is out of range [{}, {}]", source, key.key,
                                      value.dump(), key.minimum, key.maximum));
      }
    }
    out[key.key] = std::move(value);
  }
  return out;
}

nlohmann::json validateModuleConfig(const char *moduleName, const EfuConfigKey *keys, size_t count,
                                    const nlohmann::json &config, const std::string &source) {
  EfuModuleDescriptor d{};
  d.name = moduleName;
  d.configKeys = keys;
  d.configKeyCount = static_cast<uint32_t>(count);
  return validateModuleConfig(d, config, source);
}

nlohmann::json readConfigFile(const std::string &path) {
  try {
    return readJsonFile(path);
  } catch (const JsonFileError &e) {
    throw ConfigError(e.what());
  }
}

nlohmann::json loadModuleConfig(const EfuModuleDescriptor &d, const std::string &path) {
  if (path.empty()) {
    return validateModuleConfig(d, nlohmann::json::object(), "(defaults)");
  }
  return validateModuleConfig(d, readConfigFile(path), path);
}

nlohmann::json loadCalibration(const std::string &path) {
  return path.empty() ? nlohmann::json() : readConfigFile(path);
}

std::string formatModuleHelp(const EfuModuleDescriptor &d) {
  std::ostringstream out;
  out << "Module " << d.name << " " << d.version << ": " << d.description << "\n";
  if (d.partitionKey != nullptr) {
    out << "\nProcessing threads (--proc-threads N" << (d.threadsKey != nullptr ? ", or the key " : "")
        << (d.threadsKey != nullptr ? d.threadsKey : "") << "): one partition each, by "
        << d.partitionKey << "\n";
  } else {
    out << "\nProcessing threads: one (this module cannot be split: --proc-threads 1)\n";
  }
  if (d.configKeyCount == 0) {
    out << "\nThis module takes no configuration keys (--config must be {} or absent).\n";
    return out.str();
  }
  out << "\nConfiguration keys (JSON object given with --config FILE):\n";
  for (uint32_t i = 0; i < d.configKeyCount; ++i) {
    const EfuConfigKey &key = d.configKeys[i];
    out << fmt::format("  {:<24} {:<8} default {}", key.key, typeName(key.type),
                       key.defaultJson != nullptr ? key.defaultJson : "(required)");
    if (hasRange(key)) {
      out << fmt::format(", range [{}, {}]", key.minimum, key.maximum);
    }
    out << "\n      " << key.help << "\n";
  }
  return out.str();
}

} // namespace efu
