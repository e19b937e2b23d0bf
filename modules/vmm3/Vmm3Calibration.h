// SPDX-License-Identifier: BSD-2-Clause
// The ESS VMM3 hybrid calibration of the vmm3 module (efu --calibration FILE): per-channel ADC
// and TDC offset/slope, and the inverse readoutgen uses.
#pragma once

#include "modules/vmm3/Vmm3Config.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace efu::vmm3 {

/// The ESS VMM3 calibration file (modules/vmm3/README.md, Calibration):
/// {"Detector": NAME, "Version": 1, "Calibrations": [{"VMMHybridCalibration": {
///   "HybridId": "<32 hex digits>", "vmm0": {"adc_offset": [64], "adc_slope": [64],
///   "tdc_offset": [64], "tdc_slope": [64]}, "vmm1": {...}}}, ...]}
/// An entry applies to the configured hybrid with the same `hybrid_id`; vmm0/vmm1 are the
/// hybrid's even/odd VMM (vmm % 2). Per channel:
///   corrected ADC = round((adc - adc_offset) x adc_slope) (halves away from 0), valid
///   in [0, 1023];
///   corrected TDC time (ns) = (tdc_ns - tdc_offset) x tdc_slope, tdc_ns = tdc x 1e9 /
///   (bc_clock_hz x 256) (the TDC's part of the fine time), so the hit time moves by
///   round(corrected - tdc_ns) ns. Offsets 0 and slopes 1 change nothing.
class Vmm3Calibration {
public:
  /// A correction moving a time by more than this is refused as broken.
  static constexpr double kMaxTimeCorrectionNs = 1000;

  struct Channel {
    double adcOffset = 0, adcSlope = 1, tdcOffset = 0, tdcSlope = 1;
  };

  /// Checks `calibration` (file `source`) against `config` (file `configSource`): Detector
  /// (compared ignoring case, when the configuration names an instrument), Version 1, arrays of
  /// 64 finite numbers, slopes > 0, time corrections within kMaxTimeCorrectionNs, no HybridId
  /// twice, and an entry for every configured hybrid (each needs a hybrid_id). Throws
  /// sdk::ConfigError naming the file, the key path and the value. Entries for hybrids the
  /// configuration does not list are kept in unused() (the module logs them).
  Vmm3Calibration(const nlohmann::json &calibration, const std::string &source,
                  const Vmm3Config &config, const std::string &configSource);

  /// The channel of configured hybrid `hybrid` (HybridSlot::index), VMM `vmm` (only vmm % 2
  /// counts) and channel 0..63.
  [[nodiscard]] const Channel &channel(uint16_t hybrid, uint8_t vmm, uint8_t ch) const noexcept {
    return channels_[(static_cast<size_t>(hybrid) * 2 + vmm % 2) * kChannelsPerVmm + ch];
  }

  /// The corrected ADC of `raw`; false when it is outside [0, kMaxAdc].
  [[nodiscard]] static bool adc(const Channel &c, uint16_t raw, uint16_t &out) noexcept;
  /// Nanoseconds to add to the hit time for TDC value `tdc` (0 for offset 0, slope 1).
  [[nodiscard]] int64_t timeCorrectionNs(const Channel &c, uint8_t tdc) const noexcept;
  /// The inverse for generators: a raw ADC whose corrected value is `corrected`, or -1.
  [[nodiscard]] static int32_t rawAdc(const Channel &c, uint16_t corrected) noexcept;

  /// "Calibrations[i].VMMHybridCalibration.HybridId = ..." of entries no hybrid uses.
  [[nodiscard]] const std::vector<std::string> &unused() const noexcept { return unused_; }

private:
  double tdcLsbNs_ = 0;           ///< ns of one TDC count: 1e9 / (bc_clock_hz x 256)
  std::vector<Channel> channels_; ///< [hybrid index][vmm % 2][channel]
  std::vector<std::string> unused_;
};

} // namespace efu::vmm3
