// SPDX-License-Identifier: BSD-2-Clause
// What the trex tests share: the shipped ESS files (validated as the daemon does), the error a
// configuration gets, readouts and datagrams.
#pragma once

#include "common/readout/EssHeader.h"
#include "common/readout/Vmm3Readout.h"
#include "common/sdk/Module.h"
#include "common/sdk/ModuleConfig.h"
#include "modules/trex/TrexConfig.h"

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

inline vmm3::Vmm3Readout readout(uint8_t ring, uint8_t fen, uint8_t vmm, uint8_t channel,
                                 uint16_t otadc, uint32_t high, uint32_t low) {
  vmm3::Vmm3Readout r{};
  r.fiber = static_cast<uint8_t>(2 * ring);
  r.fen = fen;
  r.length = vmm3::kReadoutBytes;
  r.timeHigh = high;
  r.timeLow = low;
  r.otadc = otadc;
  r.vmm = vmm;
  r.channel = channel;
  return r;
}

/// An ESS datagram (header version 0, type TREX) of readouts.
class Datagram {
public:
  explicit Datagram(readout::EssTime pulse = {}, readout::EssTime prevPulse = {}, uint32_t seq = 0,
                    uint8_t type = readout::kTypeTrex) {
    fields_.detectorType = type;
    fields_.pulse = pulse;
    fields_.prevPulse = prevPulse;
    fields_.seqNum = seq;
    bytes_.resize(readout::headerBytes(0));
  }
  Datagram &add(const vmm3::Vmm3Readout &r) {
    const auto *p = reinterpret_cast<const uint8_t *>(&r);
    bytes_.insert(bytes_.end(), p, p + sizeof(r));
    return *this;
  }
  Datagram &raw(const std::vector<uint8_t> &extra) {
    bytes_.insert(bytes_.end(), extra.begin(), extra.end());
    return *this;
  }
  [[nodiscard]] sdk::Packet packet() {
    fields_.totalLength = static_cast<uint16_t>(bytes_.size());
    readout::writeHeader(bytes_, fields_);
    return sdk::Packet{bytes_.data(), static_cast<uint32_t>(bytes_.size()), 0, 0};
  }

private:
  readout::HeaderFields fields_;
  std::vector<uint8_t> bytes_;
};

} // namespace efu::trex::test
