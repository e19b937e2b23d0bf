// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for CAEN charge-division straws (caen module, docs/wire-formats.md §4).
#pragma once

#include "common/sdk/ReadoutSource.h"
#include "modules/caen/CaenCalibration.h"
#include "modules/caen/CaenConfig.h"
#include "modules/caen/CaenGeometry.h"
#include "modules/caen/CaenReadout.h"

#include <array>
#include <random>
#include <vector>

namespace efu::caen {

/// One 24-byte readout per neutron, the instrument's geometry run backwards. The amplitude sum
/// is drawn uniformly from [max(1000, 2 x Resolution), that + 4000].
/// - LoKI: image row y is a straw (its ring, FEN, group and straw from CaenConfig::channels),
///   column x the pixel along it; B + D puts the straw coordinate in the middle of the straw's
///   calibration interval (the ESS null calibration's without a file) and A + B the position
///   where the module's rounding gives x.
/// - BIFROST, CSPEC, MIRACLES, TBL3HE (C = D = 0): each pixel's channel and position along the
///   tube are tabled at start; A is searched next to position x sum until the module's own
///   geometry gives the pixel (a sum that is a multiple of 1000 reaches a tube's very end).
/// Every kNoiseEvery-th neutron also brings a readout with all four amplitudes 0, which the
/// module rejects (geometry.ampl_zero; CSPEC: geometry.pixel_errors).
class CaenSource final : public sdk::ReadoutSource {
public:
  static constexpr uint64_t kNoiseEvery = 16;

  /// `config` is the caen module's instrument JSON; validated with the module's key table.
  /// `calibration` (the module's, from `calibrationSource`; null = the null calibration): give
  /// readoutgen the file efu uses. A neutron on a pixel the calibration cannot reach is not
  /// written (no truth either).
  CaenSource(const nlohmann::json &config, const std::string &configSource, uint64_t seed,
             const nlohmann::json &calibration = nullptr,
             const std::string &calibrationSource = {});

  [[nodiscard]] uint8_t detectorType() const override { return config().detectorType; }
  [[nodiscard]] uint32_t imageWidth() const override { return config().imageWidth(); }
  [[nodiscard]] uint32_t imageHeight() const override { return config().imageHeight(); }
  [[nodiscard]] size_t maxEventBytes() const override;
  size_t encodeEvent(const sdk::Neutron &neutron, std::span<uint8_t> out,
                     sdk::TruthSink &truth) override;
  [[nodiscard]] uint64_t readouts() const override { return readouts_; }

  [[nodiscard]] const CaenConfig &config() const noexcept { return geometry_.config(); }

  /// Amplitudes A, B, C, D (sum `sum`) that the module decodes to straw `unit` of global group
  /// `group` at position x; false when no such integers exist.
  bool amplitudes(uint32_t group, uint32_t unit, uint32_t x, int32_t sum,
                  std::array<int16_t, 4> &out) const noexcept;

private:
  [[nodiscard]] uint32_t decode(uint32_t group, uint32_t unit, double p) const noexcept;
  /// Where a pixel of a tube instrument is read out, and the position A / (A + B) aimed at.
  struct Target {
    bool set = false;
    uint8_t ring = 0, fen = 0, group = 0;
    double position = 0;
  };
  void tableTargets();
  void aim(uint32_t ring, uint32_t fen, uint32_t group, int64_t x, int64_t y, double position);
  /// A readout of `t` whose amplitudes the module's geometry maps to `pixel`; false if none.
  bool tubeReadout(const Target &t, uint32_t pixel, int32_t sum, CaenReadout &r) const noexcept;

  CaenGeometry geometry_;
  std::vector<Target> targets_; ///< by pixel - 1 (not LoKI)
  std::mt19937_64 rng_;
  std::uniform_int_distribution<int32_t> sum_;
  uint64_t readouts_ = 0;
};

} // namespace efu::caen
