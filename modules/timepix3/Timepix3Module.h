// SPDX-License-Identifier: BSD-2-Clause
// The timepix3 module: ODIN's Timepix3 camera (ESS EFU timepix3). EVR datagrams give pulse
// times, TDC words pair them with the camera clock, pixel words become hits on the pulse's time
// line, and the hits of each datagram are clustered into neutron events.
#pragma once

#include "common/reduction/Hierarchical2DClusterer.h"
#include "common/sdk/Module.h"
#include "modules/timepix3/Timepix3Config.h"
#include "modules/timepix3/Timepix3Readout.h"
#include "modules/timepix3/Timepix3Source.h"

#include <vector>

namespace efu::timepix3 {

/// The module's counters (docs/counters.md, section timepix3), registered once, here, under the
/// ESS EFU's names (Timepix3Base.cpp, typos included) and efu's own for what the ESS leaves
/// uncounted. With several partitions, what every partition sees alike (datagram sizes, EVR and
/// TDC words, the time line) is a stream counter, counted once; the rest only the partition
/// that owns the camera datagram counts, so the sums are those of a single partition.
struct Timepix3Counters {
  explicit Timepix3Counters(sdk::ModuleContext &ctx);
  // readouts
  Counter &readouts;    ///< readouts.count (efu, stream): camera words and EVR datagrams
  Counter &pixels;      ///< readouts.pixel_readout_count
  Counter &tdc1Rising;  ///< readouts.tdc.tdc1rising_readout_count (stream)
  Counter &tdc1Falling; ///< readouts.tdc.tdc1falling_readout_count (stream)
  Counter &tdc2Rising;  ///< readouts.tdc.tdc2rising_readout_count (stream)
  Counter &tdc2Falling; ///< readouts.tdc.tdc2falling_readout_count (stream)
  Counter &tdcUnknown;  ///< readouts.tdc.unknown_tdc_type_count (stream)
  Counter &tdcs;        ///< readouts.tdc.tdc_readout_count (stream): TDC words of any kind
  Counter &tdcDropped;  ///< readouts.tdc.tdc_readout_dropped (stream): repeated or gone back
  Counter &evrs;        ///< readouts.evr.evr_readout_count (stream)
  Counter &evrDropped;  ///< readouts.evr.evr_readout_dropped (stream)
  Counter &undefined;   ///< readouts.undefined_readout_count: words of another type
  Counter &sizeErrors;  ///< readouts.errors.size (efu, stream): a datagram's trailing 1..7 bytes
  // timing (all stream counters)
  Counter &missTdc;     ///< handlers.timeingevent.miss_tdc_count: TDC counters skipped
  Counter &missEvr;     ///< handlers.timeingevent.miss_evr_count: EVR counters skipped
  Counter &evrPairs;    ///< handlers.timeingevent.evr_pair_count: a TDC found its EVR
  Counter &tdcPairs;    ///< handlers.timeingevent.tdc_pair_count: an EVR found its TDC
  Counter &globalTimes; ///< handlers.timeingevent.ess_global_time_count
  // pixels and clusters
  Counter &noGlobalTime; ///< handlers.pixelevent.no_global_time_error
  Counter &invalidPixel; ///< handlers.pixelevent.invalid_pixel_readout
  Counter &nextPulse;    ///< handlers.pixelevent.event_time_next_pulse_count
  Counter &tofs;         ///< handlers.pixelevent.tof_count
  Counter &tofNegative;  ///< handlers.pixelevent.tof_neg
  Counter &tooSmall;     ///< handlers.pixelevent.cluster_size_to_small
  Counter &prevTof; ///< handlers.pixelevent.prevtof_count: registered by the ESS, never counted
  Counter &spanTooShort; ///< handlers.pixelevent.time_span_too_short (efu)
  Counter &pixelErrors;  ///< events.pixel_errors: centre outside the image (or no weight)
  Counter &events;       ///< events.count
};

/// Sorts hits[0, n) by time, stably (equal times keep their order), with scratch room for n
/// more; returns the buffer holding the result, hits or scratch (the other is overwritten).
reduction::PixelHit *sortByTime(reduction::PixelHit *hits, reduction::PixelHit *scratch,
                                size_t n) noexcept;
/// The same, for hits whose times are known to lie in [earliest, latest] (their least and
/// greatest, as the decode finds them).
reduction::PixelHit *sortByTime(reduction::PixelHit *hits, reduction::PixelHit *scratch, size_t n,
                                uint64_t earliest, uint64_t latest) noexcept;

/// One instance per processing thread (partition); process() runs on that thread. Nothing
/// waits between datagrams but the timing state: each datagram's hits are clustered when it is
/// processed. So a partition owns whole camera datagrams (every Nth), and every partition follows
/// the timing state (EVR datagrams, the TDC words of every camera datagram) itself.
class Timepix3Module final : public sdk::Module {
public:
  /// ABI 8 (docs/modules.md, "Partitions"): camera datagram k (EVR datagrams not counted) is
  /// partition k % N's; the ESS file's ParallelThreads sets N as --proc-threads does.
  static constexpr const char *kPartitionKey =
      "camera datagram: the k-th camera datagram (EVR datagrams not counted) goes to partition "
      "k % N; every partition follows the EVR/TDC timing";
  static constexpr const char *kThreadsKey = "ParallelThreads";

  /// Throws sdk::ConfigError for a configuration it cannot use.
  explicit Timepix3Module(sdk::ModuleContext &ctx);

  void process(const sdk::Packet &packet) noexcept override;

  [[nodiscard]] const Timepix3Config &config() const noexcept { return config_; }

  /// Self-description (docs/modules.md): the scaled-up camera image.
  /// The default ev44 source_name (docs/kafka.md, Source names): the ESS EFU's,
  /// src/modules/timepix3/Timepix3Base.cpp: EV44Serializer(..., "timepix3", ...), for ODIN.
  static std::string sourceName(const nlohmann::json &, const std::string &) { return "timepix3"; }
  static sdk::ImageGeometry imageGeometry(const nlohmann::json &config, const std::string &source) {
    const Timepix3Config c = parseTimepix3Config(config, source);
    return {c.width(), c.height()};
  }
  using Source = Timepix3Source;

private:
  void onEvr(const uint8_t *data, int64_t arrivalNs) noexcept;
  void onTdc(const TdcWord &tdc, int64_t arrivalNs) noexcept;
  void dropPixel(uint16_t x, uint16_t y) noexcept;
  void followTdcs(const sdk::Packet &packet, size_t words) noexcept;
  struct Decoding;
  template <bool Checked, bool InOrder>
  [[gnu::noinline]] const uint8_t *decodeRun(const uint8_t *from, const uint8_t *end,
                                             Decoding &d) noexcept;
  void formEvents(size_t n) noexcept;

  const Timepix3Config config_;
  Timepix3Counters counters_;
  sdk::EventSink &events_;
  reduction::Hierarchical2DClusterer clusterer_;
  const unsigned partition_;
  const unsigned partitions_;
  unsigned turn_ = 0; ///< the partition owning the next camera datagram

  struct LastEvr {
    bool seen = false;
    uint32_t counter = 0;
    uint64_t pulseNs = 0;
    int64_t arrivalNs = 0;
  } evr_;
  struct LastTdc {
    bool seen = false;
    uint16_t counter = 0;
    uint64_t pixelClockNs = 0; ///< the TDC time on the pixel clock
    int64_t arrivalNs = 0;
  } tdc_;
  struct GlobalTime {
    bool valid = false;
    uint64_t pulseNs = 0;
    uint64_t tdcPixelClockNs = 0;
  } global_;

  const uint32_t width_;  ///< config_.width()
  const uint32_t height_; ///< config_.height()
  std::vector<reduction::PixelHit> hits_;   ///< this datagram's, sized for the largest
  std::vector<reduction::PixelHit> sorted_; ///< the sort's other buffer (swapped with hits_)
};

} // namespace efu::timepix3
