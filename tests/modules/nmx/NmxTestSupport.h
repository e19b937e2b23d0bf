// SPDX-License-Identifier: BSD-2-Clause
// What the nmx tests share: the shipped ESS files (validated as the daemon validates them),
// the error a configuration gets, readouts, datagrams and pulses.
#pragma once

#include "common/readout/EssHeader.h"
#include "common/readout/Vmm3Readout.h"
#include "common/sdk/Module.h"
#include "common/sdk/ModuleConfig.h"
#include "modules/nmx/NmxConfig.h"
#include "tests/support/EssDatagram.h"
#include "tests/support/Vmm3Hit.h"
#include "tests/support/SourceDatagrams.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace efu::nmx::test {

inline std::string sourceDir() {
  return EFU_SOURCE_DIR;
}

/// A shipped ESS file (modules/nmx/configs/NAME) as read, not validated.
inline nlohmann::json rawShipped(const std::string &name) {
  return readConfigFile(sourceDir() + "/modules/nmx/configs/" + name);
}

inline nlohmann::json validated(const nlohmann::json &config,
                                const std::string &source = "test.json") {
  return validateModuleConfig("nmx", kNmxConfigKeys, kNmxConfigKeyCount, config, source);
}

inline nlohmann::json shipped(const std::string &name) {
  return validated(rawShipped(name), name);
}

/// The message the daemon's two steps give `config` as file `source`; "" when both take it.
inline std::string configError(const nlohmann::json &config,
                               const std::string &source = "nmx.json") {
  try {
    (void)parseNmxConfig(validated(config, source), source);
  } catch (const sdk::ConfigError &e) {
    return e.what();
  }
  return "";
}

using readout::test::pulseTime; // pulse k of a 14 Hz source

using vmm3::test::readout; // a valid VMM3 readout

/// An ESS datagram (header version 0, NMX's type unless given) of readouts, or of raw bytes.
class Datagram : public readout::test::EssDatagram {
public:
  explicit Datagram(uint8_t type = readout::kTypeNmx, readout::EssTime pulse = {},
                    readout::EssTime prevPulse = {}, uint32_t seq = 0)
      : EssDatagram(type, pulse, prevPulse, seq) {}
};

} // namespace efu::nmx::test
