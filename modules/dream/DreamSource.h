// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for the ESS CDT detectors (dream module): DREAM, MAGIC, HEIMDAL.
#pragma once

#include "common/sdk/ReadoutSource.h"
#include "modules/dream/DreamConfig.h"

#include <vector>

namespace efu::dream {

/// The image is the readout space: 256 columns (the cathode) and, for each Config entry in file
/// order, one row per unit the part reads out (SUMOs 3..6 of an endcap, cuboids 0 and 1 of HR
/// and SANS, unit 0 otherwise) and anode (0..255). A neutron at (x, row) is that entry's readout
/// with cathode x on fiber 2 × ring (+1 for odd neutrons). Positions the ESS EFU gives no pixel
/// (ring or FEN 11, a cassette a SUMO does not have, a cuboid index of none, a point outside the
/// part) are not sent; the others are reported with their ESS pixel and time of flight.
class DreamSource final : public sdk::ReadoutSource {
public:
  DreamSource(const nlohmann::json &config, const std::string &configSource, uint64_t seed);

  [[nodiscard]] uint8_t detectorType() const override;
  [[nodiscard]] uint32_t imageWidth() const override { return 256; }
  [[nodiscard]] uint32_t imageHeight() const override { return rows_; }
  [[nodiscard]] size_t maxEventBytes() const override;
  size_t encodeEvent(const sdk::Neutron &neutron, std::span<uint8_t> out,
                     sdk::TruthSink &truth) override;
  [[nodiscard]] uint64_t readouts() const override { return readouts_; }

  [[nodiscard]] const DreamConfig &config() const noexcept { return config_; }

private:
  struct Block {
    uint32_t firstRow = 0;
    uint8_t slot = 0;
    uint8_t firstUnit = 0;
  };
  DreamConfig config_;
  std::vector<Block> blocks_; ///< by firstRow
  uint32_t rows_ = 0;
  uint64_t readouts_ = 0;
};

} // namespace efu::dream
