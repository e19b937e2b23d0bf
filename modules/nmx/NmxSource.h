// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for ESS NMX (nmx module, docs/wire-formats.md §3).
#pragma once

#include "common/readout/Vmm3Readout.h"
#include "common/sdk/ReadoutSource.h"
#include "modules/nmx/NmxConfig.h"

#include <array>
#include <random>
#include <vector>

namespace efu::nmx {

/// One neutron at image (x, y) becomes 1-3 hits on neighbouring strips of each plane of the
/// first panel whose x hybrids cover x and whose y hybrids cover y: the neutron's strip on the
/// neutron's tick, its neighbours 1 or 2 ticks later, so that the ESS uTPC coordinate (the
/// lowest strip at the plane's earliest time) is the neutron's. Raw ADCs are drawn from
/// DefaultMinADC..1023. Truth: (pulse, ESS TOF, ESS pixel of (x, y)), the TOF measured from the
/// event's latest hit converted to the nearest tick and back, as the ESS EFU does. A neutron
/// within gapNs() of the previous one of its panel is left out (the module would merge them), as
/// is one no panel covers, one before its pulse or more than a second after it: the truth stays
/// exact.
class NmxSource final : public sdk::ReadoutSource {
public:
  static constexpr int kMaxHitsPerPlane = 3;

  /// `config` is the nmx module's instrument JSON, validated as the module does.
  NmxSource(const nlohmann::json &config, const std::string &configSource, uint64_t seed);

  [[nodiscard]] uint8_t detectorType() const override { return readout::kTypeNmx; }
  [[nodiscard]] uint32_t imageWidth() const override { return config_.sizeX; }
  [[nodiscard]] uint32_t imageHeight() const override { return config_.sizeY; }
  [[nodiscard]] size_t maxEventBytes() const override {
    return 2 * kMaxHitsPerPlane * vmm3::kReadoutBytes;
  }
  size_t encodeEvent(const sdk::Neutron &neutron, std::span<uint8_t> out,
                     sdk::TruthSink &truth) override;
  [[nodiscard]] uint64_t readouts() const override { return readouts_; }
  [[nodiscard]] const NmxConfig &config() const noexcept { return config_; }
  /// Neutrons of one panel closer than this (ns) are not both sent.
  [[nodiscard]] int64_t gapNs() const noexcept;

private:
  /// [panel][plane][coordinate] -> the Config entry reading it, or -1.
  [[nodiscard]] int16_t reader(size_t panel, int plane, uint32_t coord) const noexcept;

  NmxConfig config_;
  uint32_t span_ = 0;            ///< coordinates per (panel, plane) table: max coord + 1
  std::vector<int16_t> readers_; ///< [panel][plane][coord]
  std::vector<int64_t> lastNs_;  ///< per panel: time of its last neutron
  std::mt19937_64 rng_;
  uint64_t readouts_ = 0;
};

} // namespace efu::nmx
