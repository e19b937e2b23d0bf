// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for the ESS Multi-Grid detectors (trex module): TREX and LET.
#pragma once

#include "common/readout/Vmm3Readout.h"
#include "common/sdk/ReadoutSource.h"
#include "modules/trex/TrexConfig.h"

#include <array>
#include <random>
#include <unordered_map>
#include <vector>

namespace efu::trex {

/// One neutron at image (x, row) — x, y = row % SizeY, z = row / SizeY of the ESS logical
/// geometry — becomes a wire hit at x * 16 + z and a grid hit at y (plus, at random, a weaker
/// one at y + 1, which keeps the rounded centre at y), all at the neutron's tick, on a wire
/// hybrid and a grid hybrid that share an ESS event builder (ring * 13 + FEN). ADCs are at
/// least the vessel's MinADC.
///
/// The module forms an event only once later data of its builder has arrived (three later
/// time clusters: README "What waits"). So that each neutron's event is formed in the datagram
/// that carries it — measured from that datagram's pulse, as the truth says — every neutron is
/// followed by three trailing hit groups, 230, 460 and 690 ticks later, of the same wire and
/// the builder's lowest and highest grids: events that span more than 3 grids, which the
/// module rejects (cluster.too_large_grid_span, three per neutron once efu has flushed at
/// shutdown). A neutron less than kQuietNs after the previous neutron's last group in its
/// builder is left out, as is one at a position no wire and grid of one builder can show, one
/// before its pulse or more than a second after it: the truth stays exact.
class TrexSource final : public sdk::ReadoutSource {
public:
  static constexpr int kMaxReadouts = 3 + 3 * 3;
  static constexpr uint32_t kTrailTicks = 230; ///< > 2010 ns + 500 ns between the groups
  static constexpr int64_t kQuietNs = 1000;    ///< > both 500-ns gaps

  TrexSource(const nlohmann::json &config, const std::string &configSource, uint64_t seed);

  [[nodiscard]] uint8_t detectorType() const override { return readout::kTypeTrex; }
  [[nodiscard]] uint32_t imageWidth() const override { return config_.width(); }
  [[nodiscard]] uint32_t imageHeight() const override { return config_.height(); }
  [[nodiscard]] size_t maxEventBytes() const override { return kMaxReadouts * vmm3::kReadoutBytes; }
  size_t encodeEvent(const sdk::Neutron &neutron, std::span<uint8_t> out,
                     sdk::TruthSink &truth) override;
  [[nodiscard]] uint64_t readouts() const override { return readouts_; }
  [[nodiscard]] const TrexConfig &config() const noexcept { return config_; }

private:
  /// Where a coordinate is read: a Config entry, vmm % 2 and channel.
  struct Loc {
    int16_t entry = -1;
    uint8_t asic = 0;
    uint8_t channel = 0;
  };
  struct Builder {
    Loc lowGrid, highGrid; ///< the builder's lowest and highest grid (trailing groups)
    uint16_t low = 0, high = 0;
    int64_t lastNs = 0;
    bool seen = false;
  };
  [[nodiscard]] const Loc *grid(size_t key, uint32_t y) const;
  uint16_t adc(const Loc &l, uint16_t below = 1024);
  void write(uint8_t *out, const Loc &l, readout::EssTime t, uint16_t otadc) const;

  TrexConfig config_;
  std::vector<std::vector<Loc>> wires_;     ///< wire coordinate -> where it is read
  std::unordered_map<uint64_t, Loc> grids_; ///< builder key << 16 | y -> where it is read
  std::vector<Builder> builders_;           ///< by builder key
  std::mt19937_64 rng_;
  uint64_t readouts_ = 0;
};

} // namespace efu::trex
