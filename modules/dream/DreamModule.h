// SPDX-License-Identifier: BSD-2-Clause
// The dream module: ESS CDT readouts of DREAM, MAGIC and HEIMDAL → events with the ESS EFU's
// pixel ids (one readout, one event: no clustering).
#pragma once

#include "common/readout/EssReadout.h"
#include "common/sdk/Module.h"
#include "modules/dream/DreamConfig.h"
#include "modules/dream/DreamGeometry.h"
#include "modules/dream/DreamSource.h"

#include <array>
#include <vector>

namespace efu::dream {

/// The module's counters (docs/counters.md, section dream) under the ESS EFU's names; the
/// header's and the TOF's are readout::HeaderCounters and TofCounters. The ESS EFU's counters
/// that no readout can move are not registered (docs/counters.md lists them).
/// The readout parser's (readouts.*) are stream counters: every partition parses every readout
/// before it picks its own.
struct DreamCounters {
  explicit DreamCounters(sdk::ModuleContext &ctx, const DreamConfig &config);
  Counter &readouts;     ///< readouts.count: readouts the parser took
  Counter &headers;      ///< readouts.headers: readout headers with a good fiber and FEN
  Counter &errBuffer;    ///< readouts.error_buffer: the datagram ends inside a readout
  Counter &errDatalen;   ///< readouts.error_datalen: a length field that is not 16
  Counter &errFiber;     ///< readouts.error_fiber: fiber > 23
  Counter &errFen;       ///< readouts.error_fen: FEN > 12
  Counter &fenErrors;    ///< geometry.fen_errors: FEN 12
  Counter &configErrors; ///< geometry.config_errors: ring or FEN 11, or no Config entry
  Counter &validation;   ///< geometry.validation_errors: fen_errors + config_errors
  Counter &pixelErrors;  ///< geometry.pixel_errors: a readout of a part that gives no pixel
  Counter &events;       ///< events.count
  /// <part>.geometry.<reason> by [part type][Reject], for the parts the file has (as the ESS
  /// EFU registers them: bwec/fwec for the endcaps, hr/sans for the cuboids, padetector for
  /// MAGIC); nullptr where there is none.
  std::array<std::array<Counter *, kRejects>, kPartTypes> part{};
};

/// One instance per daemon; process() runs on the processing thread.
class DreamModule final : public sdk::Module {
public:
  /// Throws sdk::ConfigError for a configuration it cannot use.
  explicit DreamModule(sdk::ModuleContext &ctx);

  void process(const sdk::Packet &packet) noexcept override;

  [[nodiscard]] const DreamConfig &config() const noexcept { return config_; }

  /// Self-description (docs/modules.md): see imageShape().
  /// The default ev44 source_name (docs/kafka.md, Source names): the ESS EFU's, the binary's
  /// detector name (src/modules/dream/DreamBase.h: EV44Serializer(..., EFUSettings.DetectorName,
  /// ...), "dream", "magic" or "heimdal" from main*.cpp): the file's Detector in lower case.
  static std::string sourceName(const nlohmann::json &config, const std::string &source);
  static sdk::ImageGeometry imageGeometry(const nlohmann::json &config, const std::string &source) {
    const ImageShape s = imageShape(parseDreamConfig(config, source));
    return {s.width, s.height, s.firstPixel};
  }
  using Source = DreamSource;

  /// Partitions (--proc-threads, docs/modules.md): every readout is an event of its own, so any
  /// split is exact; a readout board's readouts stay on one partition.
  static constexpr const char *kPartitionKey = "readout's (ring + FEN) mod N";

private:
  /// Whether this partition does the work of `r` (fiber and FEN checked by the parser).
  [[nodiscard]] bool mine(const CdtReadout &r) const noexcept {
    return partitions_ == 1 || (r.fiber / 2U + r.fen) % partitions_ == partition_;
  }

  const DreamConfig config_;
  readout::HeaderCounters headerCounters_;
  readout::EssReadoutParser parser_;
  readout::TofCounters tofCounters_;
  readout::TofCalculator tof_;
  DreamCounters counters_;
  sdk::EventSink &events_;
  /// A readout with its time of flight, waiting for the pixel pass.
  struct Staged {
    CdtReadout r;
    int32_t tofNs;
    uint8_t slot;  ///< slotOf(ring, FEN)
    bool previous; ///< measured from the previous pulse
  };
  static constexpr size_t kMaxReadouts = 65536 / kReadoutBytes; ///< per datagram
  /// The readouts of a datagram by part type, in their order (room for kMaxReadouts for the
  /// types the file has).
  std::array<std::vector<Staged>, kPartTypes> byType_;
  /// What a readout of (fiber, FEN) is, fiber 0..23 and FEN 0..12 (the parser's limits): the
  /// part type, or another partition's, or validate()'s rejection; by fiber * 13 + FEN. One
  /// look-up instead of mine(), validate() and the part per readout.
  static constexpr uint8_t kOther = kPartTypes, kFenError = kPartTypes + 1,
                           kConfigError = kPartTypes + 2;
  struct Route {
    uint8_t what; ///< a PartType, kOther, kFenError or kConfigError
    uint8_t slot; ///< slotOf(ring, FEN) for a part type
  };
  std::array<Route, size_t{kMaxFiber + 1} * (kMaxReadoutFen + 1)> routes_{};
  CuboidTable hr_;
  CuboidTable sans_;
  unsigned partition_;
  unsigned partitions_;
};

} // namespace efu::dream
