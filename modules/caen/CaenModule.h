// SPDX-License-Identifier: BSD-2-Clause
// The caen module: ESS header, 24-byte CAEN readouts, the ESS geometries and calibrations of
// LoKI, BIFROST, CSPEC, MIRACLES and TBL3HE → pixel events, one per accepted readout.
#pragma once

#include "common/readout/EssReadout.h"
#include "common/sdk/Module.h"
#include "modules/caen/CaenCalibration.h"
#include "modules/caen/CaenConfig.h"
#include "modules/caen/CaenGeometry.h"
#include "modules/caen/CaenReadout.h"
#include "modules/caen/CaenSource.h"

namespace efu::caen {

/// Counters of the readout and geometry stages, under the ESS EFU's names (docs/counters.md);
/// the header's and the TOF's are readout::HeaderCounters and readout::TofCounters.
struct CaenCounters {
  explicit CaenCounters(sdk::ModuleContext &ctx);
  Counter &dataHeaders;    ///< parser.readout.header.count: readout headers with fiber, FEN ok
  Counter &readouts;       ///< parser.readout.count: complete 24-byte readouts
  Counter &headerSize;     ///< parser.readout.error_headersize: 1-3 bytes left over
  Counter &lengthMismatch; ///< parser.readout.error_datlen_mismatch: length beyond the datagram
  Counter &ringFen;        ///< parser.readout.error_ringfen: fiber or FEN > 23
  Counter &lengthInvalid;  ///< parser.readout.error_datlen_invalid: length != 24
  Counter &validation;     ///< geometry.validation_errors: one of the next six, or ampl_zero
  Counter &ringMapping;    ///< geometry.ring_mapping_errors: LoKI, no bank on the ring
  Counter &topology;       ///< geometry.topology_errors: LoKI, TBL3HE, FEN not in the topology
  Counter &fen;            ///< geometry.fen_errors: BIFROST, CSPEC, FEN > MaxFEN
  Counter &group;          ///< geometry.group_errors: BIFROST, CSPEC, TBL3HE, group > MaxGroup
  Counter &amplitudeLow;   ///< geometry.ampl_low: TBL3HE, A or B < MinValidAmplitude
  Counter &amplitudeHigh;  ///< geometry.ampl_high: BIFROST, A + B > MaxAmpl
  Counter &pixel;          ///< geometry.pixel_errors: no pixel (the reasons below, or none)
  Counter &amplitudeZero;  ///< geometry.ampl_zero: A + B (+ C + D for LoKI) == 0
  Counter
      &positionInvalid; ///< geometry.globalpos_invalid: BIFROST, TBL3HE, A / (A + B) not in [0, 1]
  Counter &unitInvalid; ///< geometry.unitid_invalid: BIFROST, TBL3HE, no tube (next two)
  Counter &calibrationGroup; ///< geometry.calib_group_errors: group beyond the calibration
  Counter &outsideTube;      ///< geometry.outside_tube: coordinate in no interval
  Counter &positionLow;      ///< geometry.pos_low: corrected position below 0, clamped
  Counter &positionHigh;     ///< geometry.pos_high: corrected position above 1, clamped
  Counter &rowInvalid;       ///< geometry.row_invalid: LoKI, straw row beyond the image
  Counter &events;           ///< events.count: events handed to the event sink
};

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

  [[nodiscard]] const CaenConfig &config() const noexcept { return geometry_.config(); }

  /// Self-description (docs/modules.md): the image is Resolution wide and one row per straw;
  /// readoutgen encodes neutrons with CaenSource.
  static sdk::ImageGeometry imageGeometry(const nlohmann::json &config, const std::string &source) {
    const CaenConfig c(config, source);
    return {c.imageWidth(), c.imageHeight()};
  }
  using Source = CaenSource;

private:
  CaenGeometry geometry_;
  /// The ev44 source of an event, by sourceSlot(): LoKI per ring (its bank's source), BIFROST
  /// per triplet, TBL3HE per bank; one slot otherwise.
  std::vector<sdk::EventSink *> sinks_;
  template <Instrument I> [[nodiscard]] size_t sourceSlot(const CaenReadout &r) const noexcept;
  template <Instrument I>
  void readouts(const readout::EssHeader &h, CaenTally &t, readout::TofTally &tof) noexcept;
  /// readouts<Instrument::Loki>, in blocks (the hot path of LoKI).
  void lokiReadouts(const readout::EssHeader &h, CaenTally &t, readout::TofTally &tof) noexcept;
  readout::HeaderCounters headerCounters_;
  readout::TofCounters tofCounters_;
  CaenCounters counters_;
  readout::EssReadoutParser parser_;
  readout::TofCalculator tof_;
};

} // namespace efu::caen
