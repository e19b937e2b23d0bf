// SPDX-License-Identifier: BSD-2-Clause
// What the caen tests share: the shipped ESS files, a small LoKI, null calibrations, readouts
// and datagrams.
#pragma once

#include "common/readout/EssHeader.h"
#include "common/sdk/Module.h"
#include "common/sdk/ModuleConfig.h"
#include "modules/caen/CaenConfig.h"
#include "modules/caen/CaenReadout.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace efu::caen::test {

/// Validated with the module's key table (defaults filled in, as the daemon gives a config).
inline nlohmann::json validated(const nlohmann::json &config) {
  return validateModuleConfig("caen", kCaenKeys, kCaenKeyCount, config, "test.json");
}

/// The error CaenConfig gives `cfg` (validated first) as file "x.json"; "" when it takes it.
inline std::string configError(const nlohmann::json &cfg) {
  try {
    CaenConfig c(validated(cfg), "x.json");
  } catch (const sdk::ConfigError &e) {
    return e.what();
  }
  return "";
}

/// A shipped ESS instrument file (modules/caen/configs/NAME), validated.
inline nlohmann::json shipped(const std::string &name) {
  return validated(readConfigFile(std::string(EFU_SOURCE_DIR) + "/modules/caen/configs/" + name));
}
/// A shipped ESS calibration file (modules/caen/calibrations/NAME).
inline nlohmann::json shippedCalibration(const std::string &name) {
  return readConfigFile(std::string(EFU_SOURCE_DIR) + "/modules/caen/calibrations/" + name);
}

/// The shipped ESS file modules/caen/configs/LokiFull.json, validated.
inline nlohmann::json lokiFull() {
  return validated(
      readConfigFile(std::string(EFU_SOURCE_DIR) + "/modules/caen/configs/LokiFull.json"));
}

/// The shipped ESS null calibration of LokiFull (896 groups).
inline nlohmann::json lokiNullCalibration() {
  return readConfigFile(std::string(EFU_SOURCE_DIR) +
                        "/modules/caen/calibrations/lokinullcalib.json");
}

/// A small LoKI: bank 0 of 4 groups per layer (16 groups, 112 straws) read by ring 0 through
/// FENs 0 and 1; bank 1 of 2 groups per layer (8 groups, 56 straws) on ring 11, one FEN;
/// 100 pixels per straw. Validated.
inline nlohmann::json smallLoki() {
  return validated(nlohmann::json::parse(R"({
    "Detector": "loki", "Resolution": 100, "MaxTOFNS": 100000000,
    "Banks": [{"Bank": 0, "ID": "bank0", "GroupsN": 4, "YOffset": 0},
              {"Bank": 1, "ID": "bank1", "GroupsN": 2, "YOffset": 112}],
    "Config": [{"Ring": 0, "Bank": 0, "FENs": 2, "FENOffset": 0},
               {"Ring": 11, "Bank": 1, "FENs": 1, "FENOffset": 0}]})"));
}

/// A calibration of `groups` groups in the shape of the ESS null calibration (nullcalib.py):
/// the ESS intervals of its sevenths, every polynomial 0 unless `a` shifts them all.
inline nlohmann::json nullCalibration(uint32_t groups, double a = 0.0) {
  nlohmann::json parameters = nlohmann::json::array();
  for (uint32_t g = 0; g < groups; ++g) {
    parameters.push_back({{"groupindex", g},
                          {"intervals",
                           {{0.0, 0.143},
                            {0.144, 0.286},
                            {0.287, 0.429},
                            {0.43, 0.571},
                            {0.572, 0.714},
                            {0.715, 0.857},
                            {0.858, 1.0}}},
                          {"polynomials", nlohmann::json::array({{a, 0.0, 0.0, 0.0},
                                                                 {a, 0.0, 0.0, 0.0},
                                                                 {a, 0.0, 0.0, 0.0},
                                                                 {a, 0.0, 0.0, 0.0},
                                                                 {a, 0.0, 0.0, 0.0},
                                                                 {a, 0.0, 0.0, 0.0},
                                                                 {a, 0.0, 0.0, 0.0}})}});
  }
  return {{"Calibration",
           {{"version", 0},
            {"instrument", "loki"},
            {"groups", groups},
            {"groupsize", 7},
            {"Parameters", parameters}}}};
}

inline CaenReadout amplitudes(uint8_t fiber, uint8_t fen, uint8_t group, int16_t a, int16_t b,
                              int16_t c, int16_t d) {
  CaenReadout r{};
  r.fiber = fiber;
  r.fen = fen;
  r.length = sizeof(CaenReadout);
  r.group = group;
  r.ampA = a;
  r.ampB = b;
  r.ampC = c;
  r.ampD = d;
  return r;
}

/// ESS datagrams of CAEN readouts (pulse 100 s + 1000 ticks, previous pulse one 14 Hz period
/// earlier).
struct Builder {
  std::vector<uint8_t> d;
  uint32_t seq = 0;
  readout::HeaderFields f;
  Builder() {
    f.detectorType = readout::kTypeLoki;
    f.pulse = {100, 1000};
    f.prevPulse = readout::nsToTicks(readout::ticksToNs(100, 1000) - 71'428'571);
  }
  void start() { d.assign(readout::headerBytes(0), 0); }
  CaenReadout readout(uint8_t fiber, uint8_t fen, uint8_t group, int16_t a, int16_t b, int16_t c,
                      int16_t dd, int64_t tofNs = 1000) const {
    CaenReadout r = amplitudes(fiber, fen, group, a, b, c, dd);
    const auto t = readout::nsToTicks(readout::ticksToNs(f.pulse.high, f.pulse.low) + tofNs);
    r.timeHigh = t.high;
    r.timeLow = t.low;
    return r;
  }
  void add(const CaenReadout &r) {
    const auto *p = reinterpret_cast<const uint8_t *>(&r);
    d.insert(d.end(), p, p + sizeof(r));
  }
  void addBytes(size_t n) { d.insert(d.end(), n, 0); }
  sdk::Packet finish() {
    f.totalLength = static_cast<uint16_t>(d.size());
    f.seqNum = seq++;
    readout::writeHeader(d, f);
    return sdk::Packet{d.data(), static_cast<uint32_t>(d.size()), 0, 0};
  }
};

} // namespace efu::caen::test
