// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for the ESS common beam monitor readout (cbm module).
#pragma once

#include "common/sdk/ReadoutSource.h"
#include "modules/cbm/CbmConfig.h"

namespace efu::cbm {

/// One 20-byte readout per neutron. The image is one band per Topology entry, stacked in file
/// order: every band is as wide as the widest EVENT_2D monitor and as high as the highest (1 x 1
/// without one). A neutron in an EVENT_2D band at (x, y) is that monitor's readout at (x, y)
/// (none where x >= Width or y >= Height); anywhere in an EVENT_0D or IBM band it is one readout
/// of that monitor. IBM readouts carry a summed ADC of 1..100000 and a readout count (MCASum) of
/// 0..3, both drawn from the neutron's index. Readouts go on the fiber 2 x MonitorRing (+1 for
/// odd neutrons).
/// Truth (TruthSink::addFrom, the monitor's Source): the ev44 pixel for event outputs; for a
/// histogram (da00) the value it adds (the IBM's normalised ADC). A readout whose
/// time of flight exceeds MaxTOFNS is written but reported to no truth (the module refuses it).
class CbmSource final : public sdk::ReadoutSource {
public:
  /// `config` is a cbm file validated with the module's key table. Throws sdk::ConfigError when
  /// the file's monitors cannot be reached by valid readouts (MonitorRing above 11 or MaxRing,
  /// a FEN above 23) or the image would exceed 2^28 pixels.
  CbmSource(const nlohmann::json &config, const std::string &configSource, uint64_t seed);

  [[nodiscard]] uint8_t detectorType() const override;
  [[nodiscard]] uint32_t imageWidth() const override { return bandWidth_; }
  [[nodiscard]] uint32_t imageHeight() const override {
    return bandHeight_ * static_cast<uint32_t>(config_.monitors.size());
  }
  [[nodiscard]] size_t maxEventBytes() const override;
  size_t encodeEvent(const sdk::Neutron &neutron, std::span<uint8_t> out,
                     sdk::TruthSink &truth) override;
  [[nodiscard]] uint64_t readouts() const override { return readouts_; }
  [[nodiscard]] bool namesSources() const override { return true; }

  [[nodiscard]] const CbmConfig &config() const noexcept { return config_; }

private:
  CbmConfig config_;
  uint32_t bandWidth_ = 1;
  uint32_t bandHeight_ = 1;
  uint64_t readouts_ = 0;
};

} // namespace efu::cbm
