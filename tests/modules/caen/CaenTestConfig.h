// SPDX-License-Identifier: BSD-2-Clause
// The small caen instrument the caen module tests share.
#pragma once

#include <nlohmann/json.hpp>

namespace efu::caen::test {

/// 2 banks x 16 tubes x 100 pixels, with the key table's defaults filled in (as the daemon
/// gives a config to the module).
inline nlohmann::json baseConfig() {
  return nlohmann::json::parse(R"({
    "instrument": "test", "detector_type": 48, "banks": 2, "tubes_per_bank": 16,
    "pixels_per_tube": 100, "amplitude_threshold": 10, "max_tof_ns": 100000000,
    "mapping": [
      {"bank": 0, "fiber": 0, "fens": [0, 1], "groups": 8, "first_tube": 0},
      {"bank": 1, "fiber": 23, "fens": [23, 23], "groups": 16, "first_tube": 0}
    ]})");
}

} // namespace efu::caen::test
