// SPDX-License-Identifier: BSD-2-Clause
// The vmm3 module: ESS Multi-Blade readouts (FREIA, AMOR, TBLMB, ESTIA) → hits → events with the
// ESS EFU's pixel ids, clustered datagram by datagram as the ESS EFU does.
#pragma once

#include "common/readout/EssReadout.h"
#include "common/readout/Vmm3Readout.h"
#include "common/reduction/EventBuilder2D.h"
#include "common/sdk/Module.h"
#include "modules/vmm3/Vmm3Calibration.h"
#include "modules/vmm3/Vmm3Config.h"
#include "modules/vmm3/Vmm3Source.h"

#include <array>
#include <vector>

namespace efu::vmm3 {

/// Why a valid readout got no hit, in the order they are checked (after the field checks of
/// ReadoutError). The geometry ones also count geometry.validation_errors, as in the ESS EFU.
enum class HitError : uint8_t {
  Ring,         ///< geometry.ring_errors: fiber / 2 > 10
  Fen,          ///< geometry.fen_errors: FEN > 13
  Hybrid,       ///< geometry.hybrid_mapping_errors: (ring, FEN, vmm / 2) not in Config
  WireChannel,  ///< geometry.wire_channel_range_errors: a wire plane's channel outside 16..47
  StripChannel, ///< geometry.strip_channel_range_errors: a strip plane's channel above 63
  Threshold,    ///< readouts.adc_below_threshold: raw OTADC below the hybrid's threshold
  Count_
};

/// Why an event was not published, in the order they are checked.
enum class EventError : uint8_t {
  NoCoincidence, ///< cluster.no_coincidence: only one plane
  WireGap,       ///< events.wire_gaps: plane y spans more than its hits + MaxGapWire
  StripGap,      ///< events.strip_gaps: plane x spans more than its hits + MaxGapStrip
  Pixel,         ///< geometry.pixel_errors: the centre lies outside the ESS image
  Count_
};

/// The module's counters (docs/counters.md, section vmm3), registered once, here, under the
/// ESS EFU's names; the header's, the TOF's and the readout parser's are readout::HeaderCounters,
/// TofCounters and vmm3::ParserCounters.
/// With partitions the readout parser's are stream counters (every partition parses every
/// readout); these are summed over the partitions: a readout's are counted by the partition of
/// its cassette, and those of a readout of no cassette (ring, FEN, hybrid) by partition 0.
struct Vmm3Counters {
  explicit Vmm3Counters(sdk::ModuleContext &ctx);
  Counter &adcMax; ///< readouts.adc_max: corrected ADC at 1023
  std::array<Counter *, static_cast<size_t>(HitError::Count_)> hitErrors{};
  Counter &validation;                     ///< geometry.validation_errors
  std::array<Counter *, 2> invalidCoord{}; ///< geometry.invalid_xcoord_error, _ycoord_error
  Counter &matched;                        ///< cluster.matched_clusters: both planes, no gap
  Counter &wireOnly;  ///< cluster.wire_only: a no-coincidence event with plane y
  Counter &stripOnly; ///< cluster.strip_only: a no-coincidence event with plane x
  std::array<Counter *, static_cast<size_t>(EventError::Count_)> eventErrors{};
  Counter &spanTooLarge;   ///< cluster.span_too_large (SplitMultiEvents)
  Counter &split;          ///< cluster.split
  Counter &splitDiscarded; ///< cluster.split_discarded
  Counter &events;         ///< events.count
};

/// One instance per daemon; process() runs on the processing thread.
class Vmm3Module final : public sdk::Module {
public:
  /// Throws sdk::ConfigError for a configuration or calibration it cannot use.
  explicit Vmm3Module(sdk::ModuleContext &ctx);
  Vmm3Module(const Vmm3Module &) = delete; // routes_ points into its own members
  Vmm3Module &operator=(const Vmm3Module &) = delete;
  /// Reads ctx.calibration(): the ESS VMM3 hybrid calibration (Vmm3Calibration).
  static constexpr bool kAcceptsCalibration = true;

  void process(const sdk::Packet &packet) noexcept override;

  [[nodiscard]] const Vmm3Config &config() const noexcept { return config_; }

  /// Self-description (docs/modules.md): the ESS logical image of the file's geometry.
  /// The default ev44 source_name (docs/kafka.md, Source names): the ESS EFU's,
  /// src/modules/freia/FreiaBase.h FlatBufferSource: "multiblade", for FREIA, ESTIA, AMOR and TBLMB.
  static std::string sourceName(const nlohmann::json &, const std::string &) { return "multiblade"; }
  static sdk::ImageGeometry imageGeometry(const nlohmann::json &config, const std::string &source) {
    const Vmm3Config c = parseVmm3Config(config, source);
    return {c.width(), c.height()};
  }
  using Source = Vmm3Source;

  /// Partitions (--proc-threads, docs/modules.md): hits cluster within a cassette (a Config
  /// entry, one event builder), and its builder is flushed at the end of every datagram, so a
  /// cassette's readouts must stay on one partition and nothing else need follow them.
  static constexpr const char *kPartitionKey = "cassette: Config entry index mod N";

private:
  /// Everything a readout of one VMM of a configured hybrid needs after the ring, FEN and
  /// hybrid checks, gathered at construction: one lookup per readout, and one per channel for
  /// its coordinate, which also says when the channel's readouts get no hit.
  struct VmmRoute {
    /// A channel's readouts are another partition's (every channel of the VMM), or outside the
    /// plane's channels: wire or strip. Coordinates are below 2^15 (Vmm3Config's cassettes).
    static constexpr int16_t kOtherPartition = -1, kWireChannel = -2, kStripChannel = -3;
    /// The plane of the cassette's builder (unset when the cassette is another partition's).
    reduction::EventBuilder2D::Plane hits;
    const Vmm3Calibration::Channel *calibration = nullptr; ///< its 64 channels; null: identity
    int32_t threshold = 0;                                 ///< raw OTADC below it is dropped
    uint8_t plane = 0;                                     ///< 0 x, 1 y
    std::array<int16_t, kChannelsPerVmm> coord{}; ///< per channel: coordinateOf() or k* above
  };

  void formEvents(const readout::EssHeader &h) noexcept;

  sdk::EventSink &events_; ///< ctx.events(), valid for the module's life
  const Vmm3Config config_;
  const Vmm3Calibration calibration_;
  readout::HeaderCounters headerCounters_;
  readout::EssReadoutParser parser_;
  readout::TofCounters tofCounters_;
  readout::TofCalculator tof_;
  ParserCounters parserCounters_;
  Vmm3Counters counters_;
  /// Partition `partition_` of `partitions_` builds the events of the entries p, p + N, ...
  unsigned partition_;
  unsigned partitions_;
  std::vector<reduction::EventBuilder2D> builders_; ///< one per Config entry
  std::vector<VmmRoute> routes_;                    ///< [Config entry][vmm & 1]
  RouteTable routeOf_; ///< a readout's routes_ index, or the ring, FEN or hybrid fault
};

} // namespace efu::vmm3
