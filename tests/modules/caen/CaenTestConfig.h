// SPDX-License-Identifier: BSD-2-Clause
// The caen instruments the tests share: the ESS LoKI file as shipped, a small LoKI, and null
// calibrations.
#pragma once

#include "common/sdk/ModuleConfig.h"
#include "modules/caen/CaenConfig.h"

#include <nlohmann/json.hpp>

#include <string>

namespace efu::caen::test {

/// Validated with the module's key table (defaults filled in, as the daemon gives a config).
inline nlohmann::json validated(const nlohmann::json &config) {
  return validateModuleConfig("caen", kCaenKeys, kCaenKeyCount, config, "test.json");
}

/// The shipped ESS file modules/caen/configs/LokiFull.json, validated.
inline nlohmann::json lokiFull() {
  return validated(readConfigFile(std::string(EFU_SOURCE_DIR) + "/modules/caen/configs/LokiFull.json"));
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
    parameters.push_back(
        {{"groupindex", g},
         {"intervals", {{0.0, 0.143}, {0.144, 0.286}, {0.287, 0.429}, {0.43, 0.571},
                        {0.572, 0.714}, {0.715, 0.857}, {0.858, 1.0}}},
         {"polynomials", nlohmann::json::array({{a, 0.0, 0.0, 0.0}, {a, 0.0, 0.0, 0.0},
                                                {a, 0.0, 0.0, 0.0}, {a, 0.0, 0.0, 0.0},
                                                {a, 0.0, 0.0, 0.0}, {a, 0.0, 0.0, 0.0},
                                                {a, 0.0, 0.0, 0.0}})}});
  }
  return {{"Calibration",
           {{"version", 0}, {"instrument", "loki"}, {"groups", groups}, {"groupsize", 7},
            {"Parameters", parameters}}}};
}

} // namespace efu::caen::test
