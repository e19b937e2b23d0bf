// SPDX-License-Identifier: BSD-2-Clause
// The vmm3 module: VMM3 strip readouts → hits → clusters per plane → x/y events with pixel ids.
#pragma once

#include "common/readout/EssReadout.h"
#include "common/sdk/Module.h"
#include "modules/vmm3/Clustering.h"
#include "modules/vmm3/Vmm3Calibration.h"
#include "modules/vmm3/Vmm3Config.h"
#include "modules/vmm3/Vmm3Readout.h"
#include "modules/vmm3/Vmm3Source.h"

#include <array>
#include <optional>

namespace efu::vmm3 {

/// The module's own counters (docs/counters.md, section vmm3), registered once, here. The
/// header's and the TOF's are readout::HeaderCounters and readout::TofCounters.
struct Vmm3Counters {
  explicit Vmm3Counters(sdk::ModuleContext &ctx);
  Counter &readouts;       ///< readouts.count
  Counter &unknownHybrid;  ///< readouts.errors.hybrid
  Counter &calibration;    ///< readouts.errors.calibration: corrected ADC outside [0, 1023]
  Counter &hits;           ///< hits.count
  Counter &belowThreshold; ///< hits.rejected.threshold
  Counter &late;           ///< hits.late
  Counter &restarts;       ///< hits.time_restarts
  std::array<Counter *, kPlanes> clusters;  ///< clusters.x.count, clusters.y.count
  std::array<Counter *, kPlanes> unmatched; ///< clusters.x.unmatched, clusters.y.unmatched
  Counter &forcedCloses;   ///< clusters.forced_close
  Counter &sortOverflows;  ///< sort.overflows
  Counter &matchOverflows; ///< match.overflows
  Counter &timeoutFlushes; ///< flushes.timeout
  Counter &events;         ///< events.count
  std::array<Counter *, static_cast<size_t>(ReadoutError::Count_)> readoutErrors{}; ///< [Ok] unused
};

/// One instance per daemon; process(), tick() and flush() run on the processing thread.
class Vmm3Module final : public sdk::Module, private EventOutput {
public:
  /// Throws sdk::ConfigError for a configuration or calibration it cannot use.
  explicit Vmm3Module(sdk::ModuleContext &ctx);

  /// Reads ctx.calibration(): the ESS VMM3 hybrid calibration (Vmm3Calibration).
  static constexpr bool kAcceptsCalibration = true;

  void process(const sdk::Packet &packet) noexcept override;
  void tick(int64_t nowNs) noexcept override;
  void flush() noexcept override;

  [[nodiscard]] const Vmm3Config &config() const noexcept { return config_; }

  /// Self-description (docs/modules.md): the image is nx x ny strips; readoutgen encodes
  /// neutrons with Vmm3Source.
  static sdk::ImageGeometry imageGeometry(const nlohmann::json &config, const std::string &source) {
    const Vmm3Config c = parseVmm3Config(config, source);
    return {c.nx, c.ny};
  }
  using Source = Vmm3Source;

private:
  void event(const Event &e) noexcept override;
  /// Copies the former's counts into the counters (a few relaxed stores per datagram).
  void publish() noexcept;

  sdk::ModuleContext &ctx_;
  const Vmm3Config config_;
  std::optional<Vmm3Calibration> calibration_; ///< none: raw ADC and TDC
  readout::HeaderCounters headerCounters_;
  readout::EssReadoutParser parser_;
  readout::TofCounters tofCounters_;
  readout::TofCalculator tof_;
  EventFormer former_;
  Vmm3Counters counters_;
  /// Pulse and previous pulse of recent datagrams, tagged by a wrapping slot number that hits
  /// carry; a new slot when the pulse changes.
  std::array<readout::EssHeader, 256> pulses_{};
  uint8_t pulseSlot_ = 0;
  int64_t lastDataRxNs_ = 0;
};

} // namespace efu::vmm3
