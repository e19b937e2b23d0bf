// SPDX-License-Identifier: BSD-2-Clause
// readoutgen source for ODIN's Timepix3 camera (timepix3 module): an EVR datagram per pulse, a
// TDC word at the start of the pulse's first camera datagram, nine pixel words per neutron.
#pragma once

#include "common/sdk/ReadoutSource.h"
#include "modules/timepix3/Timepix3Config.h"

#include <array>
#include <cstdint>

namespace efu::timepix3 {

/// One neutron at image (x, y) becomes a 3 x 3 block of camera pixels, all at one time, whose
/// time-over-threshold weights put the centre of gravity, scaled up, inside image pixel (x, y)
/// (the weights are products of two column/row profiles summing to 8, so the centre is a
/// multiple of 1/8 and exact in doubles). The centre pixel is written first: it is the seed.
/// The camera clock starts kCameraStartNs before the pixel clock wraps, so runs of a few pulses
/// already cross the wrap. The truth is what the module computes from the written words (the
/// functions of Timepix3Readout.h); a neutron whose block leaves the camera, whose time the
/// module would reject, or which could merge with a recent neutron is left out.
class Timepix3Source final : public sdk::ReadoutSource {
public:
  static constexpr int kHits = 9;
  static constexpr int64_t kCameraStartNs = 26'843'545'600 - 300'000'000;

  /// Throws sdk::ConfigError for a configuration its neutrons cannot satisfy (ScaleUpFactor
  /// above 8, MaxCoordinateGap below 2, MinEventSizeHits above 9, MinEventTimeSpanNS above 1,
  /// MinimumToTSum above 2560).
  Timepix3Source(const nlohmann::json &config, const std::string &configSource, uint64_t seed);

  [[nodiscard]] uint8_t detectorType() const override { return 0; }
  [[nodiscard]] uint32_t imageWidth() const override { return config_.width(); }
  [[nodiscard]] uint32_t imageHeight() const override { return config_.height(); }
  [[nodiscard]] size_t maxEventBytes() const override { return (kHits + 1) * 8; }
  size_t encodeEvent(const sdk::Neutron &neutron, std::span<uint8_t> out,
                     sdk::TruthSink &truth) override;
  [[nodiscard]] uint64_t readouts() const override { return readouts_; }
  [[nodiscard]] bool essHeader() const override { return false; }
  size_t pulseDatagram(const sdk::Pulse &pulse, std::span<uint8_t> out) override;

  [[nodiscard]] const Timepix3Config &config() const noexcept { return config_; }

private:
  /// Where one axis of a neutron lands: the centre cell and the three cells' weights.
  struct Axis {
    int32_t cell = 0;
    std::array<uint16_t, 3> weight{};
  };
  [[nodiscard]] bool axis(uint32_t image, uint32_t cameraCells, Axis &out) const noexcept;
  void beginPulse(int64_t pulseNs, uint64_t index) noexcept;

  Timepix3Config config_;
  uint16_t totFactor_ = 1;
  int64_t firstPulseNs_ = 0;
  bool started_ = false;
  int64_t pulseNs_ = -1;
  uint16_t tdcCounter_ = 0;
  uint64_t tdcPixelClockNs_ = 0;
  uint64_t tdcStamp_ = 0;
  bool tdcPending_ = false;
  struct Recent {
    uint64_t timeNs = 0;
    int32_t x = -1000, y = -1000;
  };
  std::array<Recent, 16> recent_{};
  size_t nextRecent_ = 0;
  uint64_t readouts_ = 0;
};

} // namespace efu::timepix3
