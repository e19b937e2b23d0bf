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

/// The counters of kCaenCounters, registered in that order. The header's and the TOF's are
/// readout::HeaderCounters and readout::TofCounters.
class CaenCounters {
public:
  explicit CaenCounters(sdk::ModuleContext &ctx);
  /// Adds one datagram's tally (the fields that are not zero).
  void add(const CaenTally &t) noexcept;

private:
  std::array<Counter *, kCaenCounters.size()> counters_{};
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
  /// The default ev44 source_name (docs/kafka.md, Source names): the ESS EFU's, "caen"
  /// (src/modules/{loki,cspec,miracles}/geometry/*Geometry.h serializerName()). BIFROST and
  /// TBL3HE publish under a source per triplet or bank instead (the constructor).
  static std::string sourceName(const nlohmann::json &, const std::string &) { return "caen"; }
  static sdk::ImageGeometry imageGeometry(const nlohmann::json &config, const std::string &source) {
    const CaenConfig c(config, source);
    return {c.imageWidth(), c.imageHeight()};
  }
  using Source = CaenSource;

  /// Partitions (--proc-threads, docs/modules.md): every readout is an event of its own, so any
  /// split is exact; the tube's, not the (ring, FEN)'s, because BIFROST, CSPEC and MIRACLES
  /// read all their tubes through FEN 0 of three or four rings.
  static constexpr const char *kPartitionKey = "readout's tube: (ring + FEN + group) mod N";

private:
  /// Whether this partition does the work of `r` (its ring and FEN checked by the parser).
  /// The readout counters before it are stream counters (kCaenCounters).
  [[nodiscard]] bool mine(const CaenReadout &r) const noexcept {
    return partitions_ == 1 || (r.fiber / 2U + r.fen + r.group) % partitions_ == partition_;
  }

  CaenGeometry geometry_;
  unsigned partition_;
  unsigned partitions_;
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
