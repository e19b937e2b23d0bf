// SPDX-License-Identifier: BSD-2-Clause
// The nmx module: ESS NMX (VMM3 GEM) readouts → hits → events with the ESS EFU's uTPC pixel ids,
// clustered datagram by datagram and panel by panel as the ESS EFU does.
#pragma once

#include "common/readout/EssReadout.h"
#include "common/readout/Vmm3Readout.h"
#include "common/reduction/EventBuilder2D.h"
#include "common/sdk/Module.h"
#include "modules/nmx/NmxConfig.h"
#include "modules/nmx/NmxSource.h"

#include <array>
#include <vector>

namespace efu::nmx {

/// Why a valid readout got no hit, in the order they are checked (after the field checks of
/// vmm3::ReadoutError). Each also counts geometry.validation_errors, as in the ESS EFU.
enum class HitError : uint8_t {
  Ring,   ///< geometry.ring_errors: fiber / 2 > 10
  Fen,    ///< geometry.fen_errors: FEN > 13
  Hybrid, ///< geometry.hybrid_mapping_errors: (ring, FEN, vmm / 2) not in Config
  Adc,    ///< geometry.adc_errors: raw ADC (OTADC bits 0-9) below DefaultMinADC
  Count_
};

/// Why an event with both planes was not published, in the order they are checked.
enum class EventError : uint8_t {
  SpanXLarge, ///< cluster.span.x_too_large: x plane spans more than MaxSpanX
  SpanXSmall, ///< cluster.span.x_too_small: fewer than MinSpanX
  TimeSpan,   ///< cluster.span.time_too_large: a plane's hits span more than 500 ns (x, then y)
  SpanYLarge, ///< cluster.span.y_too_large
  SpanYSmall, ///< cluster.span.y_too_small
  Pixel,      ///< geometry.pixel_errors: the uTPC position outside the image (after the TOF)
  Count_
};

/// The module's counters (docs/counters.md, section nmx), registered once, here, under the
/// ESS EFU's names; the header's and the TOF's are readout::HeaderCounters and TofCounters.
/// With partitions match_attempt_count and the readout parser's are stream counters; the others
/// are summed over the partitions: a readout's are counted by the partition of its panel, and
/// those of a readout of no panel (ring, FEN, hybrid) by partition 0.
struct NmxCounters {
  explicit NmxCounters(sdk::ModuleContext &ctx);
  std::array<Counter *, static_cast<size_t>(HitError::Count_)> hitErrors{};
  Counter &validation;    ///< geometry.validation_errors
  Counter &noCoincidence; ///< cluster.no_coincidence
  Counter &xOnly;         ///< cluster.matched_x_only
  Counter &yOnly;         ///< cluster.matched_y_only
  std::array<Counter *, static_cast<size_t>(EventError::Count_)> eventErrors{};
  Counter &matched;       ///< cluster.matched_clusters
  Counter &spanTooLarge;  ///< cluster.matcherstats.span_too_large
  Counter &discarded;     ///< cluster.matcherstats.discared_span_too_large (ESS spelling)
  Counter &split;         ///< cluster.matcherstats.split_span_too_large
  Counter &matchAttempts; ///< cluster.matcherstats.match_attempt_count
  Counter &events;        ///< events.count
};

/// One instance per daemon; process() runs on the processing thread.
class NmxModule final : public sdk::Module {
public:
  /// Throws sdk::ConfigError for a configuration or calibration it refuses.
  explicit NmxModule(sdk::ModuleContext &ctx);
  /// Checks ctx.calibration() as the ESS EFU does (NmxCalibration.h); applies none of it.
  static constexpr bool kAcceptsCalibration = true;

  void process(const sdk::Packet &packet) noexcept override;

  [[nodiscard]] const NmxConfig &config() const noexcept { return config_; }

  /// Self-description (docs/modules.md): the ESS logical image, SizeX x SizeY.
  /// The default ev44 source_name (docs/kafka.md, Source names): the ESS EFU's,
  /// src/modules/nmx/NMXBase.cpp: EV44Serializer(..., "nmx", ...).
  static std::string sourceName(const nlohmann::json &, const std::string &) { return "nmx"; }
  static sdk::ImageGeometry imageGeometry(const nlohmann::json &config, const std::string &source) {
    const NmxConfig c = parseNmxConfig(config, source);
    return {c.sizeX, c.sizeY};
  }
  using Source = NmxSource;

  /// Partitions (--proc-threads, docs/modules.md): hits cluster within a panel (one event
  /// builder), and its builder is flushed at the end of every datagram, so a panel's readouts
  /// must stay on one partition and nothing else need follow them. At most 4 panels: more
  /// partitions than panels leave the rest idle.
  static constexpr const char *kPartitionKey = "panel: a hybrid's Panel mod N";

private:
  /// What a readout of one VMM of a configured hybrid needs, gathered at construction: one
  /// lookup per readout, and the coordinate without a branch on ReversedChannels (which
  /// mispredicts on mixed hybrids).
  struct VmmRoute {
    /// The panel's builder; null when the panel is another partition's.
    reduction::EventBuilder2D *builder = nullptr;
    int32_t coordBase = 0; ///< coordinate = coordBase + coordStep * channel (NmxGeometry.h)
    int32_t coordStep = 0; ///< +1 or -1
    uint8_t plane = 0;
  };

  void formEvents(const readout::EssHeader &h) noexcept;

  sdk::EventSink &events_; ///< ctx.events(), valid for the module's life
  const NmxConfig config_;
  readout::HeaderCounters headerCounters_;
  readout::EssReadoutParser parser_;
  readout::TofCounters tofCounters_;
  readout::TofCalculator tof_;
  vmm3::ParserCounters parserCounters_;
  NmxCounters counters_;
  /// Partition `partition_` of `partitions_` builds the events of the panels p, p + N, ...
  unsigned partition_;
  unsigned partitions_;
  std::vector<reduction::EventBuilder2D> builders_; ///< one per panel
  std::vector<VmmRoute> routes_;                    ///< [Config entry][vmm & 1]
  vmm3::RouteTable routeOf_; ///< a readout's routes_ index, or the ring, FEN or hybrid fault
};

} // namespace efu::nmx
