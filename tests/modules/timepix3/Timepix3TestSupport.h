// SPDX-License-Identifier: BSD-2-Clause
// What the timepix3 tests share: configurations validated as the daemon does, datagrams of
// camera words and EVR datagrams.
#pragma once

#include "common/sdk/Module.h"
#include "common/sdk/ModuleConfig.h"
#include "modules/timepix3/Timepix3Config.h"
#include "modules/timepix3/Timepix3Readout.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace efu::timepix3::test {

inline nlohmann::json validated(const nlohmann::json &config,
                                const std::string &source = "timepix3.json") {
  return validateModuleConfig("timepix3", kTimepix3ConfigKeys, kTimepix3ConfigKeyCount, config,
                              source);
}
inline nlohmann::json shipped() {
  return validated(
      readConfigFile(std::string(EFU_SOURCE_DIR) + "/modules/timepix3/configs/timepix3.json"));
}
/// The ESS EFU's Config defaults (its PixelEventHandler tests construct Config{}): 256 x 256,
/// no scale-up, 14 Hz, time gap 1 ns, coordinate gap 5, at least 1 hit and a weight of 20.
inline nlohmann::json essDefaults() {
  return validated(nlohmann::json{{"Detector", "timepix3"},
                                  {"XResolution", 256},
                                  {"YResolution", 256},
                                  {"ParallelThreads", 1}});
}
/// The daemon's two steps' message for `config`; "" when both take it.
inline std::string configError(const nlohmann::json &config) {
  try {
    (void)parseTimepix3Config(validated(config), "timepix3.json");
  } catch (const std::exception &e) {
    return e.what();
  }
  return "";
}

/// A camera datagram: 8-byte words.
class Words {
public:
  Words &add(uint64_t w) {
    const size_t at = bytes.size();
    bytes.resize(at + 8);
    std::memcpy(bytes.data() + at, &w, 8);
    return *this;
  }
  Words &pixel(uint16_t x, uint16_t y, uint16_t spidr, uint16_t toa, uint8_t fToA, uint16_t tot) {
    PixelWord p;
    placePixel(p, x, y);
    p.spidr = spidr;
    p.toa = toa;
    p.fToA = fToA;
    p.tot = tot;
    return add(encodePixel(p));
  }
  Words &tdc(uint16_t counter, uint64_t stamp35, uint8_t fine = 0, uint8_t kind = kTdc1Rising) {
    TdcWord t;
    t.kind = kind;
    t.counter = counter;
    t.stamp35 = stamp35;
    t.fine = fine;
    return add(encodeTdc(t));
  }
  std::vector<uint8_t> bytes;
};

inline std::vector<uint8_t> evr(uint32_t counter, uint32_t seconds, uint32_t nanoseconds) {
  std::vector<uint8_t> out(kEvrBytes);
  EvrDatagram e;
  e.counter = counter;
  e.pulseSeconds = seconds;
  e.pulseNanoseconds = nanoseconds;
  encodeEvr(e, out.data());
  return out;
}

inline sdk::Packet packet(const std::vector<uint8_t> &bytes, int64_t rxTimeNs = 0) {
  return sdk::Packet{bytes.data(), static_cast<uint32_t>(bytes.size()), 0, rxTimeNs, 0, 0};
}

} // namespace efu::timepix3::test
