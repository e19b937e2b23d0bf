// SPDX-License-Identifier: BSD-2-Clause
// The caen module: ESS header, 24-byte CAEN readouts, the ESS LoKI geometry and calibration →
// pixel events, one per accepted readout.
#pragma once

#include "common/readout/EssReadout.h"
#include "common/sdk/Module.h"
#include "modules/caen/CaenCalibration.h"
#include "modules/caen/CaenConfig.h"
#include "modules/caen/CaenReadout.h"
#include "modules/caen/CaenSource.h"

namespace efu::caen {

/// Counters of the readout and geometry stages, under the ESS EFU's names (docs/counters.md);
/// the header's and the TOF's are readout::HeaderCounters and readout::TofCounters.
struct CaenCounters {
  explicit CaenCounters(sdk::ModuleContext &ctx);
  Counter &dataHeaders;      ///< parser.readout.header.count: readout headers with fiber, FEN ok
  Counter &readouts;         ///< parser.readout.count: complete 24-byte readouts
  Counter &headerSize;       ///< parser.readout.error_headersize: 1-3 bytes left over
  Counter &lengthMismatch;   ///< parser.readout.error_datlen_mismatch: length beyond the datagram
  Counter &ringFen;          ///< parser.readout.error_ringfen: fiber or FEN > 23
  Counter &lengthInvalid;    ///< parser.readout.error_datlen_invalid: length != 24
  Counter &validation;       ///< geometry.validation_errors: ring or FEN not in the instrument
  Counter &ringMapping;      ///< geometry.ring_mapping_errors: no bank on the ring
  Counter &topology;         ///< geometry.topology_errors: FEN beyond the ring's FENs
  Counter &pixel;            ///< geometry.pixel_errors: no pixel (the reasons below)
  Counter &amplitudeZero;    ///< geometry.ampl_zero: A + B + C + D == 0
  Counter &positionInvalid;  ///< geometry.globalpos_invalid: (A + B) / sum outside [0, 1]
  Counter &calibrationGroup; ///< geometry.calib_group_errors: group beyond the calibration
  Counter &outsideTube;      ///< geometry.outside_tube: straw coordinate in no interval
  Counter &positionLow;      ///< geometry.pos_low: corrected position below 0, clamped
  Counter &positionHigh;     ///< geometry.pos_high: corrected position above 1, clamped
  Counter &rowInvalid;       ///< geometry.row_invalid: straw row beyond the image
  Counter &events;           ///< events.count: events handed to the event sink
};

/// Per-datagram tallies of CaenCounters (added once per datagram, hot path).
struct CaenTally {
  int64_t dataHeaders = 0, readouts = 0, headerSize = 0, lengthMismatch = 0, ringFen = 0,
          lengthInvalid = 0, validation = 0, ringMapping = 0, topology = 0, pixel = 0,
          amplitudeZero = 0, positionInvalid = 0, calibrationGroup = 0, outsideTube = 0,
          positionLow = 0, positionHigh = 0, rowInvalid = 0, events = 0;
  void addTo(CaenCounters &c) const noexcept;
};

/// The pixel of one readout whose ring has a bank and whose FEN is in range (1-based; 0 = none,
/// the reason counted in `t`): the ESS EFU's LokiGeometry::calcPixel.
uint32_t lokiPixel(const CaenConfig &config, const CaenCalibration &calibration,
                   const CaenReadout &r, CaenTally &t) noexcept;

/// One instance per daemon; process() runs on the processing thread.
class CaenModule final : public sdk::Module {
public:
  /// Throws sdk::ConfigError for a configuration or calibration it cannot use. Without a
  /// calibration file it uses the ESS null calibration (the ESS EFU insists on a file; the
  /// pixels are those it gives with lokinullcalib.json).
  explicit CaenModule(sdk::ModuleContext &ctx);

  /// Reads ctx.calibration(): the ESS charge-division calibration (CaenCalibration).
  static constexpr bool kAcceptsCalibration = true;

  void process(const sdk::Packet &packet) noexcept override;

  [[nodiscard]] const CaenConfig &config() const noexcept { return config_; }

  /// Self-description (docs/modules.md): the image is Resolution wide and one row per straw;
  /// readoutgen encodes neutrons with CaenSource.
  static sdk::ImageGeometry imageGeometry(const nlohmann::json &config, const std::string &source) {
    const CaenConfig c(config, source);
    return {c.imageWidth(), c.imageHeight()};
  }
  using Source = CaenSource;

private:
  CaenConfig config_;
  CaenCalibration calibration_;
  std::array<sdk::EventSink *, LokiGeometry::kRings> ringEvents_{}; ///< per ring: its bank's sink
  readout::HeaderCounters headerCounters_;
  readout::TofCounters tofCounters_;
  CaenCounters counters_;
  readout::EssReadoutParser parser_;
  readout::TofCalculator tof_;
};

} // namespace efu::caen
