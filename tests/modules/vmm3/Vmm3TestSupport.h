// SPDX-License-Identifier: BSD-2-Clause
// What the vmm3 tests share: the shipped ESS files (validated as the daemon validates them),
// the error a configuration gets, readouts and datagrams.
#pragma once

#include "common/readout/EssHeader.h"
#include "common/readout/Vmm3Readout.h"
#include "common/sdk/Module.h"
#include "common/sdk/ModuleConfig.h"
#include "modules/vmm3/Vmm3Config.h"
#include "tests/support/EssDatagram.h"
#include "tests/support/Vmm3Hit.h"
#include "tests/support/SourceDatagrams.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace efu::vmm3::test {

inline std::string sourceDir() {
  return EFU_SOURCE_DIR;
}

/// A shipped ESS instrument file (modules/vmm3/configs/NAME) as read, not validated.
inline nlohmann::json rawShipped(const std::string &name) {
  return readConfigFile(sourceDir() + "/modules/vmm3/configs/" + name);
}

/// Validated with the module's key table (unknown keys refused, defaults filled in), as the
/// daemon hands a configuration to the module.
inline nlohmann::json validated(const nlohmann::json &config,
                                const std::string &source = "test.json") {
  return validateModuleConfig("vmm3", kVmm3ConfigKeys, kVmm3ConfigKeyCount, config, source);
}

/// A shipped ESS instrument file, validated.
inline nlohmann::json shipped(const std::string &name) {
  return validated(rawShipped(name), name);
}

/// A shipped ESS calibration file (modules/vmm3/calibrations/NAME).
inline nlohmann::json shippedCalibration(const std::string &name) {
  return readConfigFile(sourceDir() + "/modules/vmm3/calibrations/" + name);
}

/// The message the daemon's two steps (validateModuleConfig, parseVmm3Config) give `config` as
/// file `source`; "" when both take it.
inline std::string configError(const nlohmann::json &config,
                               const std::string &source = "freia.json") {
  try {
    (void)parseVmm3Config(validated(config, source), source);
  } catch (const sdk::ConfigError &e) {
    return e.what();
  }
  return "";
}

using readout::test::pulseTime; // pulse k of a 14 Hz source


/// An ESS datagram (header version 0, FREIA's type unless given) of readouts, or of raw bytes.
class Datagram : public readout::test::EssDatagram {
public:
  explicit Datagram(uint8_t type = readout::kTypeFreia, readout::EssTime pulse = {},
                    readout::EssTime prevPulse = {}, uint32_t seq = 0)
      : EssDatagram(type, pulse, prevPulse, seq) {}
};

} // namespace efu::vmm3::test
