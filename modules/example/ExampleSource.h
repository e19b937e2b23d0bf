// SPDX-License-Identifier: BSD-2-Clause
// readoutgen's encoder for the example module: one readout per neutron.
#pragma once

#include "common/sdk/ReadoutSource.h"

#include <cstdint>
#include <string>

namespace efu::example {

/// One example readout on the wire (after the ESS header), little-endian, 12 bytes.
struct ExampleReadout {
  uint32_t timeHigh; ///< event time, ESS ticks (seconds)
  uint32_t timeLow;  ///< event time, ESS ticks (fraction, < 88 052 500)
  uint16_t x;
  uint16_t y;
};
static_assert(sizeof(ExampleReadout) == 12);

class ExampleSource final : public sdk::ReadoutSource {
public:
  /// `config`: the example module's configuration, validated against kExampleKeys.
  ExampleSource(const nlohmann::json &config, const std::string &configSource, uint64_t seed);

  [[nodiscard]] uint8_t detectorType() const override { return detectorType_; }
  [[nodiscard]] uint32_t imageWidth() const override { return width_; }
  [[nodiscard]] uint32_t imageHeight() const override { return height_; }
  [[nodiscard]] size_t maxEventBytes() const override { return sizeof(ExampleReadout); }
  size_t encodeEvent(const sdk::Neutron &neutron, std::span<uint8_t> out,
                     sdk::TruthSink &truth) override;
  [[nodiscard]] uint64_t readouts() const override { return readouts_; }

private:
  uint8_t detectorType_;
  uint32_t width_;
  uint32_t height_;
  uint64_t readouts_ = 0;
};

} // namespace efu::example
