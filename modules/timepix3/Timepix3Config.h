// SPDX-License-Identifier: BSD-2-Clause
// The timepix3 module's configuration: the ESS EFU's ODIN Timepix3 file (configs/timepix3.json),
// read unchanged, with the ESS defaults for the keys it leaves out.
#pragma once

#include "common/sdk/Module.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

namespace efu::timepix3 {

/// The ESS EFU's pairing window for an EVR and a TDC (by arrival time): 20 ms.
constexpr int64_t kEssPairWindowNs = 20'000'000;

struct Timepix3Config {
  uint16_t xResolution = 0;
  uint16_t yResolution = 0;
  uint8_t scaleUpFactor = 1;
  double frequencyHz = 14.0;
  /// The pulse period the ESS EFU derives: 1e9 / FrequencyHz truncated to an integer (Hz).
  int64_t periodNs = 0;
  uint32_t maxTimeGapNs = 1;
  uint32_t minEventSizeHits = 1;
  uint32_t minimumTotSum = 20;
  uint32_t minEventTimeSpanNs = 1;
  uint16_t maxCoordinateGap = 5;
  int64_t pairWindowNs = kEssPairWindowNs; ///< efu's own key EvrTdcPairWindowNS

  /// The event image: ScaleUpFactor * XResolution wide, ScaleUpFactor * YResolution high;
  /// pixel = y * width + x + 1.
  [[nodiscard]] uint32_t width() const noexcept { return uint32_t{scaleUpFactor} * xResolution; }
  [[nodiscard]] uint32_t height() const noexcept { return uint32_t{scaleUpFactor} * yResolution; }
};

/// The module's key table (also used by readoutgen and efu-dump).
extern const EfuConfigKey kTimepix3ConfigKeys[];
extern const size_t kTimepix3ConfigKeyCount;

/// Parses a configuration the key table has already validated and applies the cross-key rules.
/// Throws sdk::ConfigError naming `source`, the key and the value.
Timepix3Config parseTimepix3Config(const nlohmann::json &config, const std::string &source);

} // namespace efu::timepix3
