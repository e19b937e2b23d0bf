// SPDX-License-Identifier: BSD-2-Clause
// The trex module: ESS Multi-Grid VMM3 readouts (TREX, LET) → wire and grid hits → events with
// the ESS EFU's pixel ids, times of flight and rejections, events spanning datagrams as there.
#pragma once

#include "common/readout/EssReadout.h"
#include "common/readout/Vmm3Readout.h"
#include "common/reduction/StreamingBuilder2D.h"
#include "common/sdk/Module.h"
#include "common/system/LogRateLimit.h"
#include "modules/trex/TrexConfig.h"
#include "modules/trex/TrexRoutes.h"
#include "modules/trex/TrexSource.h"

#include <array>
#include <string>
#include <vector>

namespace efu::trex {

using vmm3::ReadoutError;

/// The module's counters (docs/counters.md, section trex), registered once, here, under the
/// ESS EFU's names (TREXBase.cpp); the header's and the TOF's are readout::HeaderCounters and
/// TofCounters.
struct TrexCounters {
  explicit TrexCounters(sdk::ModuleContext &ctx);
  Counter &adcMax;        ///< readouts.adc_max: registered by the ESS EFU, never counted
  Counter &mapping;       ///< readouts.error_mapping: (ring, FEN, vmm / 2) not configured
  Counter &belowMin;      ///< readouts.adc_below_min: ADC below the vessel's MinADC
  Counter &coordinate;    ///< readouts.error_coordinate: channel maps to no wire / grid
  Counter &matched;       ///< cluster.matched_clusters: both planes, grid span ok
  Counter &noCoincidence; ///< cluster.no_coincidence: one plane only
  Counter &wireOnly;      ///< cluster.matched_wire_only
  Counter &gridOnly;      ///< cluster.matched_grid_only
  Counter &gridSpan;      ///< cluster.too_large_grid_span: grid plane spans more than 3
  Counter &pixelErrors;   ///< events.pixel_errors: outside SizeX x SizeY x SizeZ
  Counter &flushed;       ///< events.formed_at_shutdown: events the shutdown flush formed
  Counter &events;        ///< events.count
  Counter &waiting;       ///< cluster.waiting (gauge): TrexModule::waiting(), set by tick()
  Counter &timeFar;       ///< readouts.time_far: more than 1 s from the datagram's pulse
  Counter &stale;         ///< cluster.bound.stale: matched early, the builder's time 1 s past
  Counter &full;          ///< cluster.bound.full: matched early, the builder holding too many
  Counter &openHits;      ///< cluster.bound.open_hits: time clusters closed at their hit limit
  Counter &eventHits;     ///< cluster.bound.event_hits: events formed at their hit limit
  Counter &timeBack;      ///< cluster.bound.time_back: builders restarted, hits 100 ms back
  Counter &pulseBack;     ///< cluster.bound.pulse_back: datagrams whose pulse went back (a
                          ///< stream counter: every partition sees the pulse go back)
  Counter &silentPlanes;  ///< cluster.silent_planes (gauge): builder planes without hits
};

/// efu's bounds on what a builder holds (README, "Bounds"); the rest are the ESS parameters.
inline constexpr reduction::StreamingParams kBuilderParams{.clusterTimeGapNs = 500,
                                                           .matchTimeGapNs = 500,
                                                           .latencyNs = 2010,
                                                           .staleNs = 1'000'000'000,
                                                           .maxWaiting = 16384,
                                                           .maxOpenHits = 4096,
                                                           .maxEventHits = 65536,
                                                           .stepBackNs = 100'000'000};

/// One instance per processing thread (partition); process(), tick() and flush() run on it.
class TrexModule final : public sdk::Module {
public:
  /// With --proc-threads N, event builder b (in key order) belongs to partition b % N, and a
  /// readout's work is done by its builder's partition (README, "Partitions").
  static constexpr const char *kPartitionKey = "event builder (ring, FEN)";

  /// Throws sdk::ConfigError for a configuration it cannot use.
  explicit TrexModule(sdk::ModuleContext &ctx);

  void process(const sdk::Packet &packet) noexcept override;
  /// Sets the cluster.waiting and cluster.silent_planes gauges, counts what the builders' bounds
  /// did, and logs planes that went silent or receive again.
  void tick(int64_t nowNs) noexcept override;
  /// At shutdown: what waits in the builders (open time clusters, clusters not yet ready, the
  /// open event) is formed, as the ESS full flush does, against the last datagram's pulses.
  void flush() noexcept override;

  [[nodiscard]] const TrexConfig &config() const noexcept { return config_; }
  /// Hits and clusters waiting in the builders for later data.
  [[nodiscard]] size_t waiting() const noexcept;

  /// Self-description (docs/modules.md): SizeX wide, SizeY * SizeZ high.
  /// The default ev44 source_name (docs/kafka.md, Source names): the ESS EFU's,
  /// src/modules/trex/TREXBase.cpp: EV44Serializer(..., "trex", ...), for TREX and LET.
  static std::string sourceName(const nlohmann::json &, const std::string &) { return "trex"; }
  static sdk::ImageGeometry imageGeometry(const nlohmann::json &config, const std::string &source) {
    const TrexConfig c = parseTrexConfig(config, source);
    return {c.width(), c.height()};
  }
  using Source = TrexSource;

private:
  enum class Form { Ready, All, Restart };
  void warnWrappingGrids(sdk::ModuleContext &ctx) const;
  void formEvents(Form how) noexcept;
  void countBounds() noexcept;
  void watchPlanes(int64_t nowNs) noexcept;
  static constexpr size_t kOwnerFens = size_t{readout::kMaxFen} + 1; // as checkReadout leaves
  static constexpr size_t kOwnerKeys = (size_t{readout::kMaxFiber} / 2 + 1) * kOwnerFens;

  sdk::EventSink &sink_; ///< ctx.events(), valid for the module's life
  const TrexConfig config_;
  readout::HeaderCounters headerCounters_;
  readout::EssReadoutParser parser_;
  readout::TofCounters tofCounters_;
  readout::TofCalculator tof_;
  vmm3::ParserCounters parserCounters_;
  TrexCounters counters_;
  TrexRoutes routes_; ///< a readout's entry, builder, plane, coordinate; the builders' keys
  std::vector<reduction::StreamingBuilder2D> builders_; ///< routes_.builderKeys() order
  /// [fiber / 2][FEN] of a valid readout -> 1 when this partition does its work: its builder's
  /// partition, or for a (ring, FEN) without a builder one fixed partition, which counts it.
  std::array<uint8_t, kOwnerKeys> mine_{};
  bool partitioned_ = false; ///< more than one partition: mine_ is asked (else every entry is 1)
  std::string who_; ///< "trex", or "trex (partition p of N)" in log lines said per partition
  std::vector<uint8_t> silent_; ///< per builder: bit p = plane p was silent at last tick
  reduction::StreamingBoundStats counted_{}; ///< the builders' bound stats already counted
  spdlog::logger &log_;
  LogRateLimit silentLog_{10'000'000'000, 0, false, 0, {}};
  reduction::EventBuffer events_; ///< every builder's flush writes here, one after another
  readout::EssHeader last_{};     ///< pulses of the last datagram
  bool seen_ = false;
};

} // namespace efu::trex
