// SPDX-License-Identifier: BSD-2-Clause
// The ESS VMM3 hybrid calibration: checks, the per-channel correction and its inverse.
#include "modules/vmm3/Vmm3Calibration.h"

#include "common/sdk/CalibrationCheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace efu::vmm3 {

Vmm3Calibration::Vmm3Calibration(const nlohmann::json &calibration, const std::string &source,
                                 const Vmm3Config &config, const std::string &configSource)
    : tdcLsbNs_(1e9 / (static_cast<double>(config.bcClockHz) * 256)),
      channels_(config.hybrids.size() * 2 * kChannelsPerVmm) {
  const sdk::CalibrationCheck check(source);
  const std::string top = "(top level)";
  check.instrument(check.member(calibration, top, "Detector"), "Detector", config.instrument);
  const nlohmann::json &version = check.member(calibration, top, "Version");
  if (check.integer(version, "Version") != 1) {
    check.fail("Version", version, "expected 1");
  }
  const nlohmann::json &entries = check.member(calibration, top, "Calibrations");
  if (!entries.is_array()) {
    check.fail("Calibrations", entries, "expected an array");
  }
  std::vector<bool> found(config.hybrids.size(), false);
  std::vector<std::string> seen;
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string path = fmt::format("Calibrations[{}].VMMHybridCalibration", i);
    const nlohmann::json &entry =
        check.member(entries[i], fmt::format("Calibrations[{}]", i), "VMMHybridCalibration");
    const nlohmann::json &idJson = check.member(entry, path, "HybridId");
    const std::string &id = check.string(idJson, path + ".HybridId");
    if (!isHybridId(id)) {
      check.fail(path + ".HybridId", idJson,
                 fmt::format("expected {} hex digits", kHybridIdDigits));
    }
    const std::string normal = normalHybridId(id);
    const auto previous = std::find(seen.begin(), seen.end(), normal);
    if (previous != seen.end()) {
      check.fail(path + ".HybridId", idJson,
                 fmt::format("Calibrations[{}] has it too", previous - seen.begin()));
    }
    seen.push_back(normal);
    const auto hybrid = std::find_if(config.hybrids.begin(), config.hybrids.end(),
                                     [&](const Hybrid &h) { return h.hybridId == normal; });
    const size_t index = static_cast<size_t>(hybrid - config.hybrids.begin());
    for (size_t vmm = 0; vmm < 2; ++vmm) {
      const std::string vpath = fmt::format("{}.vmm{}", path, vmm);
      const nlohmann::json &v = check.member(entry, path, vmm == 0 ? "vmm0" : "vmm1");
      // Checked whether or not a hybrid uses the entry: a broken file is refused either way.
      auto values = [&](const char *key, bool slope) {
        const std::string apath = vpath + "." + key;
        const nlohmann::json &a = check.array(check.member(v, vpath, key), apath, kChannelsPerVmm);
        std::array<double, kChannelsPerVmm> out{};
        for (size_t ch = 0; ch < kChannelsPerVmm; ++ch) {
          const std::string cpath = fmt::format("{}[{}]", apath, ch);
          out[ch] = check.number(a[ch], cpath);
          if (slope && !(out[ch] > 0)) {
            check.fail(cpath, a[ch], "a slope must be > 0");
          }
        }
        return out;
      };
      const auto adcOffset = values("adc_offset", false);
      const auto adcSlope = values("adc_slope", true);
      const auto tdcOffset = values("tdc_offset", false);
      const auto tdcSlope = values("tdc_slope", true);
      for (uint8_t ch = 0; ch < kChannelsPerVmm; ++ch) {
        const Channel c{adcOffset[ch], adcSlope[ch], tdcOffset[ch], tdcSlope[ch]};
        for (const uint8_t tdc : {uint8_t{0}, uint8_t{255}}) {
          const double tdcNs = tdc * tdcLsbNs_;
          const double moved = (tdcNs - c.tdcOffset) * c.tdcSlope - tdcNs;
          if (!(std::abs(moved) <= kMaxTimeCorrectionNs)) {
            check.fail(fmt::format("{}.tdc_offset[{}]", vpath, ch), v["tdc_offset"][ch],
                       fmt::format("with tdc_slope[{}] = {} it moves the time of TDC {} by {} ns "
                                   "(more than {} ns)",
                                   ch, c.tdcSlope, tdc, moved, kMaxTimeCorrectionNs));
          }
        }
        if (hybrid != config.hybrids.end()) {
          channels_[(index * 2 + vmm) * kChannelsPerVmm + ch] = c;
        }
      }
    }
    if (hybrid == config.hybrids.end()) {
      unused_.push_back(fmt::format("{}.HybridId = \"{}\"", path, id));
    } else {
      found[index] = true;
    }
  }
  for (size_t h = 0; h < config.hybrids.size(); ++h) {
    const Hybrid &hybrid = config.hybrids[h];
    if (hybrid.hybridId.empty()) {
      throw sdk::ConfigError(fmt::format(
          "{}: hybrids[{}] (fiber {} fen {} vmm_pair {}) of {} has no hybrid_id: with a "
          "calibration every hybrid needs one",
          source, h, hybrid.fiber, hybrid.fen, hybrid.vmmPair, configSource));
    }
    if (!found[h]) {
      throw sdk::ConfigError(fmt::format(
          "{}: calibration Calibrations has no VMMHybridCalibration for hybrids[{}].hybrid_id = "
          "\"{}\" of {}",
          source, h, hybrid.hybridId, configSource));
    }
  }
}

bool Vmm3Calibration::adc(const Channel &c, uint16_t raw, uint16_t &out) noexcept {
  const double corrected = std::round((raw - c.adcOffset) * c.adcSlope);
  if (!(corrected >= 0 && corrected <= kMaxAdc)) {
    return false;
  }
  out = static_cast<uint16_t>(corrected);
  return true;
}

int64_t Vmm3Calibration::timeCorrectionNs(const Channel &c, uint8_t tdc) const noexcept {
  const double tdcNs = tdc * tdcLsbNs_;
  return std::llround((tdcNs - c.tdcOffset) * c.tdcSlope - tdcNs);
}

int32_t Vmm3Calibration::rawAdc(const Channel &c, uint16_t corrected) noexcept {
  const double estimate = std::round(corrected / c.adcSlope + c.adcOffset);
  if (!(estimate >= -2 && estimate <= kMaxAdc + 2)) {
    return -1;
  }
  const auto guess = static_cast<int32_t>(estimate);
  for (const int32_t step : {0, -1, 1, -2, 2}) {
    const int32_t raw = guess + step;
    uint16_t got = 0;
    if (raw >= 0 && raw <= kMaxAdc && adc(c, static_cast<uint16_t>(raw), got) &&
        got == corrected) {
      return raw;
    }
  }
  return -1;
}

} // namespace efu::vmm3
