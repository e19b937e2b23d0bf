// SPDX-License-Identifier: BSD-2-Clause
// The ESS VMM3 hybrid calibration (efu --calibration FILE): per-channel ADC and TDC offset and
// slope applied as the ESS EFU applies them, and the inverse readoutgen uses.
#pragma once

#include "modules/vmm3/Vmm3Config.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace efu::vmm3 {

/// The calibration of every configured hybrid; identity (offsets 0, slopes 1) where the file
/// has no entry or no file is given. Per readout of channel ch on VMM v of a hybrid (entry vmm0
/// for even v, vmm1 for odd), as the ESS EFU computes:
///   weight = trunc(clamp((adc - adc_offset) * adc_slope, 0, 1023))
///   time   = trunc(double(ticks in ns) + (34.08 - 60 * tdc / 255 - tdc_offset) * tdc_slope)
/// The time correction is applied even without a file (its identity is the TDC model itself),
/// and adding it in double precision rounds today's epoch times to a multiple of 256 ns: the
/// ESS EFU's hit times are exactly these.
class Vmm3Calibration {
public:
  /// The ESS TDC model per TDC value, 1.5 x 22.72 - 60 x tdc / 255 ns, each entry computed as
  /// the ESS EFU computes it per readout (so the table changes no bit, only the time it takes).
  static constexpr std::array<double, 256> kTdcModelNs = [] {
    std::array<double, 256> t{};
    for (int tdc = 0; tdc < 256; ++tdc) {
      t[static_cast<size_t>(tdc)] = 1.5 * 22.72 - 60.0 * tdc / 255;
    }
    return t;
  }();

  /// The largest time correction a calibration may give, in ns: a file asking more is refused.
  static constexpr double kMaxTdcCorrectionNs = 1e9;

  struct Channel {
    double adcOffset = 0, adcSlope = 1, tdcOffset = 0, tdcSlope = 1;
  };

  /// Identity for every hybrid of `config`.
  explicit Vmm3Calibration(const Vmm3Config &config);
  /// The ESS calibration file `calibration` (file `source`) for `config`: Detector "Freia",
  /// Version 1, Comment/Date/Info present, each entry a VMMHybridCalibration with
  /// CalibrationDate, a HybridId of the configuration (compared exactly, as the ESS EFU does),
  /// vmm0 and vmm1 each with Settings and four arrays of 64 finite numbers; no HybridId twice.
  /// Throws sdk::ConfigError naming the file, the key path and the value.
  Vmm3Calibration(const nlohmann::json &calibration, const std::string &source,
                  const Vmm3Config &config, const std::string &configSource);

  /// The 64 channels of VMM `vmm` of hybrid `hybrid`, or nullptr when every one of them is the
  /// identity (then adc() is the raw value and timeNs() is identityTimeNs()).
  [[nodiscard]] const Channel *vmm(size_t hybrid, uint8_t vmm) const noexcept {
    const int32_t first = firstChannel_[hybrid * 2 + (vmm & 1)];
    return first < 0 ? nullptr : channels_.data() + first;
  }
  [[nodiscard]] const Channel &channel(size_t hybrid, uint8_t vmm, uint8_t ch) const noexcept {
    static constexpr Channel kIdentity{};
    const Channel *v = this->vmm(hybrid, vmm);
    return v == nullptr ? kIdentity : v[ch];
  }
  /// The corrected ADC (the hit's weight).
  [[nodiscard]] static uint16_t adc(const Channel &c, uint16_t raw) noexcept {
    double v = (raw - c.adcOffset) * c.adcSlope;
    v = v > kMaxAdc ? kMaxAdc : v;
    v = v > 0 ? v : 0; // also maps NaN to 0
    return static_cast<uint16_t>(v);
  }
  /// The hit time: `ns` (ticksToNs of the readout's time) plus the TDC correction.
  [[nodiscard]] static uint64_t timeNs(const Channel &c, uint64_t ns, uint8_t tdc) noexcept {
    const double correction = (kTdcModelNs[tdc] - c.tdcOffset) * c.tdcSlope;
    const double t = static_cast<double>(ns) + correction;
    // The ESS EFU converts to uint64_t; on x86-64 that is the conversion through int64_t below
    // 2^63 (every ESS time: seconds < 2^32), which also wraps a time before the epoch (a readout
    // at time 0 moved back by the correction) as it does. One instruction, no branch.
    // t > -2^63 always: ns >= 0 and the correction is at most kMaxTdcCorrectionNs.
    if (t < 0x1p63) [[likely]] {
      return static_cast<uint64_t>(static_cast<int64_t>(t));
    }
    // Beyond 2^64 (ns within 2^11 of it, never an ESS time) the conversion would be undefined:
    // the latest time instead.
    return t < 0x1p64 ? static_cast<uint64_t>(t) : ~uint64_t{0};
  }
  /// timeNs() of an identity channel without the model from 2^60 to 2^62 ns (the years 2006 to
  /// 2116). There a double holds ns to a multiple of 256 or 512 ns, its neighbours at least 128
  /// ns away, and the model moves it by less than 35 ns: the sum rounds back to double(ns), ns
  /// rounded to the nearest multiple of the step (ties to an even multiple), at most 2^62.
  [[nodiscard]] static uint64_t identityTimeNs(uint64_t ns, uint8_t tdc) noexcept {
    if (ns >= uint64_t{1} << 60 && ns < uint64_t{1} << 62) [[likely]] {
      const auto rounded = static_cast<double>(static_cast<int64_t>(ns));
      return static_cast<uint64_t>(static_cast<int64_t>(rounded));
    }
    return timeNs(Channel{}, ns, tdc);
  }
  /// identityTimeNs(ticksToNs(high, low), tdc) for a valid time (low <= kMaxTicksLow), the
  /// range test on the seconds alone: from second kIdentityFirstSecond on, every time is at
  /// least 2^60 ns, and below 2^62 ns up to the last second a uint32_t holds. The seconds before
  /// take the ESS formula, as identityTimeNs() does wherever its shortcut does not hold.
  [[nodiscard]] static uint64_t identityTimeNs(uint32_t high, uint32_t low, uint8_t tdc) noexcept {
    const auto ns = static_cast<uint64_t>(readout::ticksToNs(high, low));
    if (high >= kIdentityFirstSecond) [[likely]] {
      const auto rounded = static_cast<double>(static_cast<int64_t>(ns));
      return static_cast<uint64_t>(static_cast<int64_t>(rounded));
    }
    return timeNs(Channel{}, ns, tdc);
  }
  static constexpr uint32_t kIdentityFirstSecond = 1'152'921'505; // ceil(2^60 / 1e9)
  static_assert(uint64_t{kIdentityFirstSecond} * 1'000'000'000 >= uint64_t{1} << 60 &&
                uint64_t{kIdentityFirstSecond - 1} * 1'000'000'000 < uint64_t{1} << 60 &&
                (uint64_t{UINT32_MAX} + 1) * 1'000'000'000 <= uint64_t{1} << 62);
  /// The inverse for generators: a raw ADC (0..1023) whose corrected value is `corrected`, or
  /// -1 when there is none.
  [[nodiscard]] static int32_t rawAdc(const Channel &c, uint16_t corrected) noexcept;

  /// Configured hybrids the file has no entry for (they keep the identity), as
  /// "Config[i].HybridId = ..." for the log.
  [[nodiscard]] const std::vector<std::string> &uncovered() const noexcept { return uncovered_; }

private:
  /// [hybrid index][vmm & 1]: where the VMM's 64 channels start in channels_, -1 for identity.
  std::vector<int32_t> firstChannel_;
  std::vector<Channel> channels_; ///< only the VMMs with a channel that is not the identity
  std::vector<std::string> uncovered_;
};

} // namespace efu::vmm3
