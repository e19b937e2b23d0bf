// SPDX-License-Identifier: BSD-2-Clause
// The ESS VMM3 hybrid calibration: checks, the per-channel correction and its inverse.
#include "modules/vmm3/Vmm3Calibration.h"

#include "common/sdk/CalibrationCheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace efu::vmm3 {

Vmm3Calibration::Vmm3Calibration(const Vmm3Config &config)
    : firstChannel_(config.hybrids.size() * 2, -1) {}

Vmm3Calibration::Vmm3Calibration(const nlohmann::json &calibration, const std::string &source,
                                 const Vmm3Config &config, const std::string &configSource)
    : Vmm3Calibration(config) {
  const sdk::CalibrationCheck check(source);
  const std::string top = "(top level)";
  const nlohmann::json &detector = check.member(calibration, top, "Detector");
  if (check.string(detector, "Detector") != "Freia") {
    check.fail("Detector", detector, "the ESS Multi-Blade calibrations say \"Freia\"");
  }
  const nlohmann::json &version = check.member(calibration, top, "Version");
  if (check.integer(version, "Version") != 1) {
    check.fail("Version", version, "expected 1");
  }
  for (const char *key : {"Comment", "Date", "Info"}) {
    (void)check.member(calibration, top, key);
  }
  const nlohmann::json &entries = check.member(calibration, top, "Calibrations");
  if (!entries.is_array()) {
    check.fail("Calibrations", entries, "expected an array");
  }
  std::vector<int> from(config.hybrids.size(), -1); // the entry each hybrid got
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string path = fmt::format("Calibrations[{}].VMMHybridCalibration", i);
    const nlohmann::json &entry =
        check.member(entries[i], fmt::format("Calibrations[{}]", i), "VMMHybridCalibration");
    (void)check.member(entry, path, "CalibrationDate");
    const size_t hybrid = claimHybrid(config.hybrids, check.member(entry, path, "HybridId"), path,
                                      configSource, check, from, i);
    for (uint8_t vmm = 0; vmm < 2; ++vmm) {
      const std::string vpath = fmt::format("{}.vmm{}", path, vmm);
      const nlohmann::json &v = check.member(entry, path, vmm == 0 ? "vmm0" : "vmm1");
      (void)check.member(v, vpath, "Settings");
      auto values = [&](const char *key) {
        const std::string apath = vpath + "." + key;
        const nlohmann::json &a = check.array(check.member(v, vpath, key), apath, kChannelsPerVmm);
        std::array<double, kChannelsPerVmm> out{};
        for (size_t ch = 0; ch < kChannelsPerVmm; ++ch) {
          out[ch] = check.number(a[ch], fmt::format("{}[{}]", apath, ch));
        }
        return out;
      };
      const auto adcOffset = values("adc_offset");
      const auto adcSlope = values("adc_slope");
      const auto tdcOffset = values("tdc_offset");
      const auto tdcSlope = values("tdc_slope");
      // A correction beyond kMaxTdcCorrectionNs is no TDC correction (the model spans 60 ns),
      // and a bounded one keeps every hit time of an ESS readout (below 2^62 ns) inside the
      // range timeNs() converts without overflow.
      for (size_t ch = 0; ch < kChannelsPerVmm; ++ch) {
        const double reach = std::max(std::abs(kTdcModelNs.front() - tdcOffset[ch]),
                                      std::abs(kTdcModelNs.back() - tdcOffset[ch])) *
                             std::abs(tdcSlope[ch]);
        if (!(reach <= kMaxTdcCorrectionNs)) {
          check.fail(fmt::format("{}.tdc_slope[{}]", vpath, ch), v["tdc_slope"][ch],
                     fmt::format("with tdc_offset {:g} it moves a hit time by up to {:g} ns; at "
                                 "most {:g} ns (1 s) is a TDC correction",
                                 tdcOffset[ch], reach, kMaxTdcCorrectionNs));
        }
      }
      // Offsets 0 (or -0) and slopes 1 change no bit of the ESS arithmetic: such a VMM keeps
      // no table, and the hot path none of its cache lines.
      bool identity = true;
      for (size_t ch = 0; ch < kChannelsPerVmm; ++ch) {
        identity = identity && adcOffset[ch] == 0 && adcSlope[ch] == 1 && tdcOffset[ch] == 0 &&
                   tdcSlope[ch] == 1;
      }
      if (identity) {
        continue;
      }
      firstChannel_[hybrid * 2 + vmm] = static_cast<int32_t>(channels_.size());
      for (size_t ch = 0; ch < kChannelsPerVmm; ++ch) {
        channels_.push_back(Channel{adcOffset[ch], adcSlope[ch], tdcOffset[ch], tdcSlope[ch]});
      }
    }
  }
  for (size_t h = 0; h < config.hybrids.size(); ++h) {
    if (from[h] < 0) {
      uncovered_.push_back(
          fmt::format("Config[{}].HybridId = \"{}\"", h, config.hybrids[h].hybridId));
    }
  }
}

int32_t Vmm3Calibration::rawAdc(const Channel &c, uint16_t corrected) noexcept {
  // The correction is monotonic in the raw value for a positive slope: search around the
  // estimate; a few steps cover the truncation.
  if (!(c.adcSlope > 0)) {
    return -1;
  }
  const double estimate = std::floor(corrected / c.adcSlope + c.adcOffset);
  if (!(estimate >= -4 && estimate <= kMaxAdc + 4)) {
    return -1;
  }
  const auto guess = static_cast<int32_t>(estimate);
  for (const int32_t step : {0, 1, -1, 2, -2, 3, -3}) {
    const int32_t raw = guess + step;
    if (raw >= 0 && raw <= kMaxAdc && adc(c, static_cast<uint16_t>(raw)) == corrected) {
      return raw;
    }
  }
  return -1;
}

} // namespace efu::vmm3
