// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for CAEN charge-division tubes (caen module, docs/wire-formats.md §4).
#pragma once

#include "common/sdk/ReadoutSource.h"
#include "modules/caen/CaenCalibration.h"
#include "modules/caen/CaenConfig.h"

#include <optional>

#include <random>

namespace efu::caen {

/// One 24-byte readout per neutron: image row y is the tube, column x the pixel along it.
/// The amplitude sum A + B is drawn uniformly from [max(threshold, 2 * pixels_per_tube, 1000),
/// that + 4000] (so that it is above the module's threshold and B/(A+B) hits the pixel centre
/// exactly, see caen::amplitudeBForPosition); C = D = 0. Every kNoiseEvery-th neutron also
/// brings a noise readout below the amplitude threshold (when the threshold is above 1).
class CaenSource final : public sdk::ReadoutSource {
public:
  static constexpr uint64_t kNoiseEvery = 16;

  /// `config` is the caen module's instrument JSON; validated with the module's key table.
  /// With a `calibration` (the module's, from `calibrationSource`; null = none) B is chosen
  /// with CaenCalibration::amplitudeB so that the calibrated module finds the drawn pixel; a
  /// neutron on a pixel the calibration cannot reach is not written (no truth either).
  CaenSource(const nlohmann::json &config, const std::string &configSource, uint64_t seed,
             const nlohmann::json &calibration = nullptr,
             const std::string &calibrationSource = {});

  [[nodiscard]] uint8_t detectorType() const override { return config_.detectorType; }
  [[nodiscard]] uint32_t imageWidth() const override { return config_.imageWidth(); }
  [[nodiscard]] uint32_t imageHeight() const override { return config_.imageHeight(); }
  [[nodiscard]] size_t maxEventBytes() const override;
  size_t encodeEvent(const sdk::Neutron &neutron, std::span<uint8_t> out, sdk::TruthSink &truth) override;
  [[nodiscard]] uint64_t readouts() const override { return readouts_; }

  [[nodiscard]] const caen::CaenConfig &config() const noexcept { return config_; }

private:
  caen::CaenConfig config_;
  std::optional<caen::CaenCalibration> calibration_;
  std::mt19937_64 rng_;
  std::uniform_int_distribution<int32_t> sum_;
  uint64_t readouts_ = 0;
};

} // namespace efu::caen
