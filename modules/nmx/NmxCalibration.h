// SPDX-License-Identifier: BSD-2-Clause
// efu --calibration FILE for nmx: the ESS VMM3 hybrid calibration, checked as the ESS EFU's NMX
// module checks it, and then not applied (the ESS NMX code corrects neither ADC nor time).
#pragma once

#include "modules/nmx/NmxConfig.h"

#include <nlohmann/json.hpp>

#include <string>

namespace efu::nmx {

/// Refuses what the ESS EFU's VMM3Config::loadAndApplyCalibration refuses for NMX: a missing
/// Detector, Version, Comment, Date, Info or Calibrations; Detector not "NMX"; Version not 1;
/// an entry without VMMHybridCalibration, or one whose HybridId is not 32 characters or no
/// Config entry's; without CalibrationDate, HybridId, vmm0 or vmm1; vmm0 without Settings (the
/// ESS EFU checks vmm0's keys twice and never vmm1's); either VMM without adc_offset, adc_slope,
/// tdc_offset, tdc_slope as arrays of 64 numbers. efu also refuses a HybridId given twice.
/// Other keys (HybridIndex, Hybrids, ...) are not read, as in the ESS EFU. Throws
/// sdk::ConfigError naming `source`, the key path and the value.
void checkNmxCalibration(const nlohmann::json &calibration, const std::string &source,
                         const NmxConfig &config, const std::string &configSource);

} // namespace efu::nmx
