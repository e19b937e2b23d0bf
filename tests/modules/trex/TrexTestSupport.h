// SPDX-License-Identifier: BSD-2-Clause
// What the trex tests share: the shipped ESS files (validated as the daemon does), the error a
// configuration gets, readouts and datagrams.
#pragma once

#include "common/readout/EssHeader.h"
#include "common/readout/Vmm3Readout.h"
#include "common/sdk/Module.h"
#include "common/sdk/ModuleConfig.h"
#include "modules/trex/TrexConfig.h"
#include "tests/support/EssDatagram.h"
#include "tests/support/Vmm3Hit.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace efu::trex::test {

inline nlohmann::json rawShipped(const std::string &name) {
  return readConfigFile(std::string(EFU_SOURCE_DIR) + "/modules/trex/configs/" + name);
}
inline nlohmann::json validated(const nlohmann::json &config,
                                const std::string &source = "test.json") {
  return validateModuleConfig("trex", kTrexConfigKeys, kTrexConfigKeyCount, config, source);
}
inline nlohmann::json shipped(const std::string &name) {
  return validated(rawShipped(name), name);
}
/// The daemon's two steps' message for `config`; "" when both take it.
inline std::string configError(const nlohmann::json &config) {
  try {
    (void)parseTrexConfig(validated(config, "trex.json"), "trex.json");
  } catch (const std::exception &e) {
    return e.what();
  }
  return "";
}

using vmm3::test::readout; // a valid VMM3 readout

/// An ESS datagram (header version 0, TREX's type unless given) of readouts.
class Datagram : public readout::test::EssDatagram {
public:
  explicit Datagram(readout::EssTime pulse = {}, readout::EssTime prevPulse = {}, uint32_t seq = 0,
                    uint8_t type = readout::kTypeTrex)
      : EssDatagram(type, pulse, prevPulse, seq) {}
};

} // namespace efu::trex::test
