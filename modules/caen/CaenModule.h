// SPDX-License-Identifier: BSD-2-Clause
// The caen module: ESS header, 24-byte CAEN readouts, tube/position → pixel, one event per readout.
#pragma once

#include "common/readout/EssReadout.h"
#include "common/sdk/Module.h"
#include "modules/caen/CaenCalibration.h"
#include "modules/caen/CaenConfig.h"
#include "modules/caen/CaenSource.h"

#include <optional>

namespace efu::caen {

/// Counters of the readout stage (the header's are readout::HeaderCounters, prefix "readouts").
struct CaenCounters {
  explicit CaenCounters(sdk::ModuleContext &ctx);
  Counter &readouts;    ///< readouts.count: complete 24-byte readouts looked at
  Counter &truncated;   ///< readouts.errors.truncated: fewer bytes left than a readout
  Counter &length;      ///< readouts.errors.length: length field != 24
  Counter &fiber;       ///< readouts.errors.fiber: fiber > 23
  Counter &fen;         ///< readouts.errors.fen: FEN > 23
  Counter &unmapped;    ///< readouts.errors.unmapped: (fiber, FEN) not in the mapping
  Counter &group;       ///< readouts.errors.group: group beyond the mapped groups
  Counter &time;        ///< readouts.errors.time: time low > 88 052 499
  Counter &amplitude;   ///< readouts.errors.amplitude: A + B <= 0
  Counter &position;    ///< readouts.errors.position: A < 0 or B < 0 (fraction outside [0, 1])
  Counter &threshold;   ///< readouts.rejected.threshold: A + B < amplitude_threshold
  Counter &calibration; ///< readouts.errors.calibration: position in none of the tube's intervals
  Counter &events;      ///< events.count: events handed to the event sink
};

/// One instance per daemon; process() runs on the processing thread.
class CaenModule final : public sdk::Module {
public:
  /// Throws sdk::ConfigError for a configuration or calibration it cannot use.
  explicit CaenModule(sdk::ModuleContext &ctx);

  /// Reads ctx.calibration(): the ESS charge-division calibration (CaenCalibration).
  static constexpr bool kAcceptsCalibration = true;

  void process(const sdk::Packet &packet) noexcept override;

  [[nodiscard]] const CaenConfig &config() const noexcept { return config_; }

  /// Self-description (docs/modules.md): the image is pixels_per_tube wide and one row per
  /// tube; readoutgen encodes neutrons with CaenSource.
  static sdk::ImageGeometry imageGeometry(const nlohmann::json &config, const std::string &source) {
    const CaenConfig c(config, source);
    return {c.imageWidth(), c.imageHeight()};
  }
  using Source = CaenSource;

private:
  CaenConfig config_;
  std::optional<CaenCalibration> calibration_; ///< none: pixels as positionIndex() gives them
  sdk::EventSink &events_;
  std::vector<sdk::EventSink *> bankEvents_; ///< per bank: events_, or its source (sources)
  readout::HeaderCounters headerCounters_;
  readout::TofCounters tofCounters_;
  CaenCounters counters_;
  readout::EssReadoutParser parser_;
  readout::TofCalculator tof_;
};

} // namespace efu::caen
