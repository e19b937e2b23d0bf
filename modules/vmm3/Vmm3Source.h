// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for VMM3 strip detectors (vmm3 module, docs/wire-formats.md §3).
#pragma once

#include "common/sdk/ReadoutSource.h"
#include "modules/vmm3/Vmm3Config.h"

#include <array>
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
class Vmm3Source final : public sdk::ReadoutSource {
public:
  /// `config` is the vmm3 module's instrument JSON, validated exactly as the module does.
  Vmm3Source(const nlohmann::json &config, const std::string &configSource, uint64_t seed);

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
  };

  size_t writePlane(vmm3::Plane plane, uint32_t centre, const sdk::Neutron &n, uint8_t *out);
  void writeHit(const StripAddress &a, const readout::EssTime &t, uint16_t adc, uint8_t tdc,
                uint8_t *out);

  vmm3::Vmm3Config config_;
  std::array<std::vector<StripAddress>, vmm3::kPlanes> strips_;
  std::vector<std::pair<vmm3::Plane, uint32_t>> covered_; ///< every covered strip (noise)
  std::mt19937_64 rng_;
  uint64_t readouts_ = 0;
};

} // namespace efu::vmm3
