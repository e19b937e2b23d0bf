// SPDX-License-Identifier: BSD-2-Clause
// The ESS VMM3 calibration's checks for nmx (nothing of it is applied, as in the ESS EFU).
#include "modules/nmx/NmxCalibration.h"

#include "common/sdk/CalibrationCheck.h"

#include <fmt/format.h>

#include <vector>

namespace efu::nmx {

void checkNmxCalibration(const nlohmann::json &calibration, const std::string &source,
                         const NmxConfig &config, const std::string &configSource) {
  const sdk::CalibrationCheck check(source);
  const std::string top = "(top level)";
  for (const char *key : {"Detector", "Version", "Comment", "Date", "Info", "Calibrations"}) {
    (void)check.member(calibration, top, key);
  }
  const nlohmann::json &detector = calibration.at("Detector");
  if (check.string(detector, "Detector") != "NMX") {
    check.fail("Detector", detector, "expected \"NMX\"");
  }
  const nlohmann::json &version = calibration.at("Version");
  if (check.integer(version, "Version") != 1) {
    check.fail("Version", version, "expected 1");
  }
  const nlohmann::json &entries = calibration.at("Calibrations");
  if (!entries.is_array()) {
    check.fail("Calibrations", entries, "expected an array");
  }
  std::vector<int> from(config.hybrids.size(), -1);
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string path = fmt::format("Calibrations[{}].VMMHybridCalibration", i);
    const nlohmann::json &entry =
        check.member(entries[i], fmt::format("Calibrations[{}]", i), "VMMHybridCalibration");
    const nlohmann::json &idJson = check.member(entry, path, "HybridId");
    if (check.string(idJson, path + ".HybridId").size() != kHybridIdLength) {
      check.fail(path + ".HybridId", idJson,
                 fmt::format("expected {} characters", kHybridIdLength));
    }
    (void)vmm3::claimHybrid(config.hybrids, idJson, path, configSource, check, from, i);
    for (const char *key : {"CalibrationDate", "vmm0", "vmm1"}) {
      (void)check.member(entry, path, key);
    }
    (void)check.member(entry.at("vmm0"), path + ".vmm0", "Settings");
    for (const char *vmm : {"vmm0", "vmm1"}) {
      const std::string vpath = path + "." + vmm;
      const nlohmann::json &v = entry.at(vmm);
      for (const char *key : {"adc_offset", "adc_slope", "tdc_offset", "tdc_slope"}) {
        const std::string apath = vpath + "." + key;
        const nlohmann::json &a = check.array(check.member(v, vpath, key), apath, kStrips);
        for (size_t ch = 0; ch < kStrips; ++ch) {
          (void)check.number(a[ch], fmt::format("{}[{}]", apath, ch));
        }
      }
    }
  }
}

} // namespace efu::nmx
