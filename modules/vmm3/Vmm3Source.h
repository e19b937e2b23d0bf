// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for VMM3 strip detectors (vmm3 module, docs/wire-formats.md §3).
#pragma once

#include "common/sdk/ReadoutSource.h"
#include "modules/vmm3/Vmm3Calibration.h"
#include "modules/vmm3/Vmm3Config.h"

#include <array>
#include <optional>
#include <random>
#include <vector>

namespace efu::vmm3 {

/// One neutron at image (x, y) becomes 2-5 hits on neighbouring strips of each plane (x strips
/// around x, y strips around y), plus one noise hit below the ADC threshold (when the threshold
/// is above 0) on a random strip. The neutron's charge per plane, u * sum(weights) with u drawn
/// from [threshold + 1, 341], is shared with weights chosen so that the charge-weighted centre
/// rounds to the neutron's strip (2: 2,1; 3: 1,2,1; 4: 1,3,2,1; 5: 1,2,3,2,1 starting one or
/// two strips below it); strips outside the plane or its hybrids are left out, which moves the
/// centre by less than one strip. The heaviest hit of each plane is at the neutron's time; the
/// others are 1-5 ns later (BC = 0 and TDC when fine_time is on; otherwise the same tick).
/// Truth: (pulse, event time - pulse, y * nx + x + 1).
/// With a calibration (the module's) the charges and times above are the *corrected* values:
/// each hit's raw ADC is one that Vmm3Calibration corrects to its share, and (fine_time on)
/// its tick, BC and TDC are chosen so that the corrected hit time is the drawn one; a charge
/// unit no raw ADC reaches is redrawn (up to kUnitDraws times), and a neutron whose hits still
/// cannot be written is left out (no readouts, no truth). The noise hit's corrected ADC is below
/// the threshold (no noise hit when no raw ADC gives one).
class Vmm3Source final : public sdk::ReadoutSource {
public:
  static constexpr int kUnitDraws = 16;

  /// `config` is the vmm3 module's instrument JSON, validated exactly as the module does;
  /// `calibration` (null = none) is the module's, from file `calibrationSource`.
  Vmm3Source(const nlohmann::json &config, const std::string &configSource, uint64_t seed,
             const nlohmann::json &calibration = nullptr,
             const std::string &calibrationSource = {});

  [[nodiscard]] uint8_t detectorType() const override { return config_.detectorType; }
  [[nodiscard]] uint32_t imageWidth() const override { return config_.nx; }
  [[nodiscard]] uint32_t imageHeight() const override { return config_.ny; }
  [[nodiscard]] size_t maxEventBytes() const override;
  size_t encodeEvent(const sdk::Neutron &neutron, std::span<uint8_t> out, sdk::TruthSink &truth) override;
  [[nodiscard]] uint64_t readouts() const override { return readouts_; }

  [[nodiscard]] const vmm3::Vmm3Config &config() const noexcept { return config_; }

private:
  /// Where a strip of a plane is read out.
  struct StripAddress {
    bool covered = false;
    uint8_t fiber = 0;
    uint8_t fen = 0;
    uint8_t vmm = 0;
    uint8_t channel = 0;
    uint16_t hybrid = 0; ///< index in the config's hybrids (for the calibration)
  };
  /// One readout to write.
  struct PlannedHit {
    const StripAddress *address = nullptr;
    readout::EssTime time;
    uint16_t bc = 0;
    uint16_t adc = 0;
    uint8_t tdc = 0;
  };

  /// The hits of one plane into `hits`; their count, or -1 when the neutron cannot be written.
  int planPlane(vmm3::Plane plane, uint32_t centre, const sdk::Neutron &n, PlannedHit *hits);
  /// The raw ADC for corrected value `adc` on `a`, or -1.
  [[nodiscard]] int32_t rawAdc(const StripAddress &a, uint16_t adc) const noexcept;
  /// Tick, BC and TDC for a hit on `a` that the module places at eventTimeNs + delayNs; false
  /// when there is none.
  bool placeHit(const StripAddress &a, const sdk::Neutron &n, int64_t delayNs,
                PlannedHit &hit) const noexcept;
  void writeHit(const PlannedHit &h, uint8_t *out);

  vmm3::Vmm3Config config_;
  std::optional<vmm3::Vmm3Calibration> calibration_;
  std::array<std::vector<StripAddress>, vmm3::kPlanes> strips_;
  std::vector<std::pair<vmm3::Plane, uint32_t>> covered_; ///< every covered strip (noise)
  std::mt19937_64 rng_;
  uint64_t readouts_ = 0;
};

} // namespace efu::vmm3
