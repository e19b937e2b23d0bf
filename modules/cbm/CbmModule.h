// SPDX-License-Identifier: BSD-2-Clause
// The cbm module: ESS common beam monitor readouts → events per monitor (ev44) and
// time-of-flight histograms per pulse (da00), as the ESS EFU's cbm module forms them.
#pragma once

#include "common/readout/EssReadout.h"
#include "common/sdk/Module.h"
#include "modules/cbm/CbmConfig.h"
#include "modules/cbm/CbmHistogram.h"
#include "modules/cbm/CbmReadout.h"
#include "modules/cbm/CbmSource.h"

#include <array>
#include <memory>
#include <vector>

namespace efu::cbm {

/// The module's counters (docs/counters.md, section cbm) under the ESS EFU's names; the
/// header's and the TOF's are readout::HeaderCounters and TofCounters.
/// The readout parser's (parser.readout.*) and the geometry checks' (geometry.*_errors,
/// geometry.validation_errors) are stream counters: every partition checks every readout before
/// it picks those of its monitors. The others are summed over the partitions.
struct CbmCounters {
  explicit CbmCounters(sdk::ModuleContext &ctx);
  Counter &readouts;                 ///< parser.readout.count: readouts of whole-readout payloads
  std::array<Counter *, 3> byType{}; ///< parser.readout.0d, .2d, .ibm: parsed, by type
  Counter &sizeErrors; ///< parser.readout.errors.size: payload not a multiple of 20 bytes
  Counter &noData;     ///< parser.readout.errors.no_data: a header with no readouts
  std::array<Counter *, static_cast<size_t>(ReadoutError::Count_)> readoutErrors{}; ///< [Ok] unused
  std::array<Counter *, static_cast<size_t>(GeometryError::Count_)> geometryErrors{};
  Counter &validation;  ///< geometry.validation_errors: any geometry error
  Counter &pixelErrors; ///< geometry.pixel_errors: a 0D monitor's pixel (PixelOffset) is 0
  Counter &processed;   ///< readouts.processed: valid, with a time of flight
  Counter &ibm;         ///< events.ibm
  Counter &event0d;     ///< events.event0d
  Counter &event2d;     ///< events.event2d
  Counter &nposSum;     ///< events.ibm_npos_sum: the IBM values, summed
  Counter &events;      ///< events.count: events.ibm + event0d + event2d
};

/// One instance per daemon; process() runs on the processing thread.
class CbmModule final : public sdk::Module {
public:
  /// Throws sdk::ConfigError for a configuration it cannot use, also (before allocating any
  /// histogram) for a da00 monitor whose message would be larger than its sink's
  /// maxMessageBytes(), for histograms of more than kMaxHistogramBytes together, and for a
  /// histogram the machine cannot allocate; each names the entry's BinCount.
  explicit CbmModule(sdk::ModuleContext &ctx);

  /// The memory all histograms may hold together (TofHistogram::memoryBytes() summed), as the
  /// receive rings: 1 GiB.
  static constexpr uint64_t kMaxHistogramBytes = uint64_t{1} << 30;

  void process(const sdk::Packet &packet) noexcept override;
  /// Publishes the histograms whose aggregation the current pulse completes (the ESS EFU sends
  /// them only when the next pulse comes).
  void flush() noexcept override;

  [[nodiscard]] const CbmConfig &config() const noexcept { return config_; }
  using Source = CbmSource;

  /// Partitions (--proc-threads, docs/modules.md): what a monitor publishes (its events, or its
  /// histogram over AggregatedFrames pulses) depends on its own readouts and the pulses of the
  /// headers alone, which every partition reads, so a monitor's readouts stay on one partition.
  static constexpr const char *kPartitionKey = "monitor: Topology entry index mod N";

private:
  /// Whether Topology entry `slot` is this partition's.
  [[nodiscard]] bool mine(size_t slot) const noexcept {
    return partitions_ == 1 || slot % partitions_ == partition_;
  }
  /// What one Topology entry publishes to.
  struct Output {
    sdk::EventSink *events = nullptr;        ///< Schema ev44
    sdk::DataArraySink *arrays = nullptr;    ///< Schema da00
    std::unique_ptr<TofHistogram> histogram; ///< Schema da00, of this partition's monitor
    Counter *produceCalled = nullptr;        ///< serialize.<source>.produce_called
    Counter *producePulse = nullptr;         ///< serialize.<source>.produce_triggered_reftime
    Counter *beforeOffset = nullptr;         ///< serialize.<source>.tof_before_offset_dropped
    Counter *overMax = nullptr;              ///< serialize.<source>.tof_over_max_dropped
    Counter *histograms = nullptr; ///< serialize.<source>.histograms: taken by the producer
    Counter *refused = nullptr;    ///< serialize.<source>.histograms_refused
  };
  void publish(Output &out) noexcept;

  const CbmConfig config_;
  readout::HeaderCounters headerCounters_;
  readout::EssReadoutParser parser_;
  readout::TofCounters tofCounters_;
  readout::TofCalculator tof_;
  CbmCounters counters_;
  unsigned partition_;
  unsigned partitions_;
  std::vector<Output> outputs_; ///< one per Topology entry
  /// What the readout loop needs of a Topology entry, in one place and without branches per
  /// type: the ev44 pixel or histogram value is (IBM) the IBM value, else y·yScale + x·xScale +
  /// base (EVENT_2D: y·Width + x + 1 + PixelOffset; EVENT_0D: PixelOffset).
  struct Target {
    uint8_t type = 0;       ///< MonitorType
    bool mine = false;      ///< this partition's
    uint32_t ibm = 0;       ///< type IBM: all ones, else 0 (a mask: selects without a branch)
    uint8_t pixelError = 0; ///< 1: an EVENT_0D with pixel 0 (counted, still published)
    uint32_t xLimit = 0;    ///< EVENT_2D: Width; others 65536 (no x is refused)
    uint32_t yLimit = 0;    ///< EVENT_2D: Height; others 65536
    uint32_t xScale = 0, yScale = 0, base = 0;
    uint8_t histogram = 0; ///< 1: out->histogram is set (its readouts are binned, not events)
    Output *out = nullptr;
  };
  std::vector<Target> targets_; ///< by Topology entry
  /// checkReadout()'s type check by type (true: refused), without the branches that mixed types
  /// would mispredict.
  std::array<bool, 256> badType_{};
  /// checkGeometry()'s (ring, FEN) checks by fiber * (kMaxFen + 1) + FEN (parsed readouts: both
  /// within the ESS limits): 0, or the GeometryError + 1.
  std::array<uint8_t, size_t{kMaxFiber + 1} * (kMaxFen + 1)> fiberFen_{};
  /// Indices of outputs_ with a histogram: this partition's da00 monitors.
  std::vector<size_t> histogramOutputs_;
};

} // namespace efu::cbm
