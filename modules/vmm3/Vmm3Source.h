// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for the ESS Multi-Blade detectors (vmm3 module, docs/wire-formats.md §3).
#pragma once

#include "common/sdk/ReadoutSource.h"
#include "modules/vmm3/Vmm3Calibration.h"
#include "modules/vmm3/Vmm3Config.h"

#include <array>
#include <random>
#include <vector>

namespace efu::vmm3 {

/// One neutron at image (x, y) of the ESS logical geometry becomes 1-3 hits on neighbouring
/// coordinates of each plane, in the cassette that covers (x, y), with charges whose weighted
/// centre rounds to x and to y (1; 2, 1; 1, 2, 1 around the neutron's coordinate; neighbours
/// outside the cassette are left out, which keeps the rounding). All hits carry the neutron's
/// tick and TDC 0; with a calibration the raw ADCs are those the calibration corrects to the
/// charges, and each raw ADC is at least the hybrid's threshold.
/// Truth: (pulse, event time - pulse, ESS pixel of (x, y)), where the event time is the
/// earliest hit time as the module computes it (the ESS TDC correction added in double
/// precision), converted to the nearest tick and back (readout::eventTimeNs), as the ESS
/// EFU does. The module clusters each datagram on its own and merges clusters of one cassette
/// closer than the time gaps, so a neutron within gapNs() of the previous one of its cassette is
/// left out (no readouts, no truth), as is one before its pulse or more than a second after it, or
/// at a position no cassette covers: the truth stays exact.
class Vmm3Source final : public sdk::ReadoutSource {
public:
  static constexpr int kMaxHitsPerPlane = 3;

  /// `config` is the vmm3 module's instrument JSON, validated exactly as the module does;
  /// `calibration` (null = none) is the module's, from file `calibrationSource`.
  Vmm3Source(const nlohmann::json &config, const std::string &configSource, uint64_t seed,
             const nlohmann::json &calibration = nullptr,
             const std::string &calibrationSource = {});

  [[nodiscard]] uint8_t detectorType() const override { return config_.detectorType(); }
  [[nodiscard]] uint32_t imageWidth() const override { return config_.width(); }
  [[nodiscard]] uint32_t imageHeight() const override { return config_.height(); }
  [[nodiscard]] size_t maxEventBytes() const override {
    return 2 * kMaxHitsPerPlane * kReadoutBytes;
  }
  size_t encodeEvent(const sdk::Neutron &neutron, std::span<uint8_t> out,
                     sdk::TruthSink &truth) override;
  [[nodiscard]] uint64_t readouts() const override { return readouts_; }
  [[nodiscard]] const Vmm3Config &config() const noexcept { return config_; }
  /// Neutrons of one cassette closer than this (ns) are not both sent.
  [[nodiscard]] int64_t gapNs() const noexcept;

private:
  struct PlannedHit {
    uint8_t vmm = 0;
    uint8_t channel = 0;
    uint16_t adc = 0; ///< raw
  };
  /// The hits of one plane around coordinate `coord`; their count, or -1 when no charges fit.
  int planPlane(size_t hybrid, bool x, uint32_t coord, PlannedHit *hits, uint64_t tickNs,
                uint64_t &earliestNs);

  Vmm3Config config_;
  Vmm3Calibration calibration_;
  std::vector<int16_t> cassetteHybrid_; ///< cassette number -> first Config entry, or -1
  std::vector<int64_t> lastNs_;         ///< per Config entry: time of its last neutron
  std::mt19937_64 rng_;
  uint64_t readouts_ = 0;
};

} // namespace efu::vmm3
