// SPDX-License-Identifier: BSD-2-Clause
// A beam monitor's time-of-flight histogram per pulse (or per AggregatedFrames pulses), with the
// ESS EFU's binning, aggregation and frame bookkeeping, as the four da00 variables it publishes.
#pragma once

#include "common/sdk/Module.h"
#include "modules/cbm/CbmConfig.h"
#include "modules/cbm/CbmDivider.h"

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace efu::cbm {

/// The rules (the ESS EFU's da00 histogram of its CBM module):
///  - edges: i * (MaxTofBin / BinCount) integer ns, i = 0..BinCount (frame_time, int32, "ns");
///  - an entry (tof, value) goes to bin tof / width; a negative tof (a TOF beyond 2^31 - 1 ns
///    read as int32) is dropped ("before offset"), a bin >= BinCount dropped ("over max");
///  - a bin holds the sum of its values (int32, wrapping) and their count; signal is the sum,
///    or with AggregationMode 1 the sum divided by the count (integer, 0 for an empty bin);
///  - frames: the first pulse time seen starts frame 0; each new pulse time starts the next
///    frame; when AggregatedFrames frames are complete (at the next pulse) the histogram is
///    published (if any bin got an entry) and emptied. reference_time[k] is frame k's pulse
///    minus the run's first pulse (int32 ns, accumulated pulse to pulse and wrapping, as the
///    ESS EFU writes it), frame_total[k] the sum of frame k's binned values (uint64, "counts");
///  - the message's timestamp is the pulse time of the last frame.
class TofHistogram {
public:
  explicit TofHistogram(const Monitor &m)
      : width_(m.binWidth()), bins_(static_cast<size_t>(m.binCount)), frames_(m.aggregatedFrames),
        average_(m.aggregation == Aggregation::Average), edges_(bins_ + 1), sums_(bins_),
        counts_(bins_), signal_(bins_), offsets_(frames_), totals_(frames_) {
    for (size_t i = 0; i <= bins_; ++i) {
      edges_[i] = static_cast<int32_t>(i) * width_;
    }
    shapeEdges_[0] = static_cast<int64_t>(bins_ + 1);
    shapeBins_[0] = static_cast<int64_t>(bins_);
    shapeFrames_[0] = static_cast<int64_t>(frames_);
  }

  /// An upper bound of the bytes of this monitor's da00 message (variables() with the Source
  /// as source name): the data, the source name and at most kMessageOverheadBytes of tables,
  /// names, units, axes and padding; within 16 bytes of the real size for every shape (tested
  /// against the builder). Computed from the Monitor alone: no histogram is allocated.
  [[nodiscard]] static uint64_t messageBytes(const Monitor &m) noexcept {
    return fixedMessageBytes(m) + 8 * binsOf(m);
  }
  /// The most bins whose message takes at most `maxBytes` with this monitor's Source and
  /// AggregatedFrames (0 when not even one fits).
  [[nodiscard]] static uint64_t maxBins(const Monitor &m, uint64_t maxBytes) noexcept {
    const uint64_t fixed = fixedMessageBytes(m);
    return maxBytes > fixed ? (maxBytes - fixed) / 8 : 0;
  }
  /// The memory a histogram of this monitor allocates: per bin an edge, a sum, a count and a
  /// signal value (16 bytes), per frame a reference time and a total (12 bytes).
  [[nodiscard]] static uint64_t memoryBytes(const Monitor &m) noexcept {
    return 16 * binsOf(m) + 4 + 12 * static_cast<uint64_t>(m.aggregatedFrames);
  }

  enum class Added : uint8_t { Binned, BeforeOffset, OverMax };

  /// One entry of the current frame. Before the first pulse (no frame yet) it is still binned,
  /// into frame 0.
  Added add(int32_t tofNs, int32_t value) noexcept {
    if (tofNs < 0) {
      return Added::BeforeOffset;
    }
    const auto bin = static_cast<size_t>(byWidth_(static_cast<uint32_t>(tofNs))); // tof / width
    if (bin >= bins_) {
      return Added::OverMax;
    }
    sums_[bin] =
        static_cast<int32_t>(static_cast<uint32_t>(sums_[bin]) + static_cast<uint32_t>(value));
    ++counts_[bin];
    totals_[frame_] += static_cast<uint64_t>(static_cast<int64_t>(value));
    return Added::Binned;
  }

  /// The pulse time of a datagram (every datagram, before its readouts). Returns true when this
  /// pulse completes the aggregation: then call take() before advance().
  [[nodiscard]] bool completes(int64_t pulseNs) const noexcept {
    return started_ && pulseNs != referenceNs_ && frame_ + 1 >= frames_;
  }
  /// Moves to the frame of `pulseNs` (nothing for the current pulse time).
  void advance(int64_t pulseNs) noexcept {
    if (!started_) {
      started_ = true;
      referenceNs_ = pulseNs;
      return;
    }
    if (pulseNs == referenceNs_) {
      return;
    }
    const int32_t offset = offsets_[frame_];
    if (++frame_ >= frames_) {
      frame_ = 0;
    }
    totals_[frame_] = 0;
    offsets_[frame_] =
        static_cast<int32_t>(static_cast<uint32_t>(offset) +
                             static_cast<uint32_t>(static_cast<int32_t>(pulseNs - referenceNs_)));
    referenceNs_ = pulseNs;
  }
  /// True at shutdown when the current frame is the aggregation's last (the next pulse would
  /// publish it).
  [[nodiscard]] bool lastFrame() const noexcept { return started_ && frame_ + 1 >= frames_; }

  /// Ends the aggregation: fills the signal from the bins and empties them. Returns false when
  /// no bin got an entry (nothing to publish). Then variables() and timestampNs() describe it.
  bool take() noexcept {
    bool any = false;
    for (size_t i = 0; i < bins_; ++i) {
      any = any || counts_[i] != 0;
      int32_t v = sums_[i];
      if (average_ && counts_[i] != 0) {
        v = static_cast<int32_t>(static_cast<uint32_t>(v) / counts_[i]);
      }
      signal_[i] = v;
      sums_[i] = 0;
      counts_[i] = 0;
    }
    return any;
  }

  /// The four variables of the message (views into this histogram).
  [[nodiscard]] std::array<sdk::DataVariable, 4> variables() const noexcept {
    return {sdk::DataVariable{"frame_time", "ns", kFrameTimeAxis, shapeEdges_, sdk::DataType::Int32,
                              bytes(edges_)},
            sdk::DataVariable{"signal", "A", kFrameTimeAxis, shapeBins_, sdk::DataType::Int32,
                              bytes(signal_)},
            sdk::DataVariable{"reference_time", "ns", kReferenceTimeAxis, shapeFrames_,
                              sdk::DataType::Int32, bytes(offsets_)},
            sdk::DataVariable{"frame_total", "counts", kReferenceTimeAxis, shapeFrames_,
                              sdk::DataType::UInt64, bytes(totals_)}};
  }
  [[nodiscard]] int64_t timestampNs() const noexcept { return referenceNs_; }

  [[nodiscard]] std::span<const int32_t> edges() const noexcept { return edges_; }
  [[nodiscard]] std::span<const int32_t> signal() const noexcept { return signal_; }

private:
  /// The message's tables, the variables' names, units and axes, the header and the padding:
  /// 473 to 484 bytes (by the bin count, the frames and the source name's length modulo 8).
  static constexpr uint64_t kMessageOverheadBytes = 488;
  static uint64_t binsOf(const Monitor &m) noexcept {
    return m.binCount > 0 ? static_cast<uint64_t>(m.binCount) : 0;
  }
  /// The message without the bins' 8 bytes (an edge and a signal value each).
  static uint64_t fixedMessageBytes(const Monitor &m) noexcept {
    return kMessageOverheadBytes + m.source.size() + 4 +
           12 * static_cast<uint64_t>(m.aggregatedFrames);
  }
  template <class T> static std::span<const uint8_t> bytes(const std::vector<T> &v) noexcept {
    return {reinterpret_cast<const uint8_t *>(v.data()), v.size() * sizeof(T)};
  }
  static constexpr std::string_view kFrameTime[1] = {"frame_time"};
  static constexpr std::string_view kReferenceTime[1] = {"reference_time"};
  static constexpr std::span<const std::string_view> kFrameTimeAxis{kFrameTime};
  static constexpr std::span<const std::string_view> kReferenceTimeAxis{kReferenceTime};

  int32_t width_; ///< >= 1 (the configuration's check)
  Divider byWidth_{static_cast<uint32_t>(width_)};
  size_t bins_;
  size_t frames_;
  bool average_;
  bool started_ = false;
  int64_t referenceNs_ = 0;
  size_t frame_ = 0; ///< the current frame: its index in offsets_ / totals_
  std::vector<int32_t> edges_;
  std::vector<int32_t> sums_;
  std::vector<uint32_t> counts_;
  std::vector<int32_t> signal_;
  std::vector<int32_t> offsets_;
  std::vector<uint64_t> totals_;
  int64_t shapeEdges_[1] = {0};
  int64_t shapeBins_[1] = {0};
  int64_t shapeFrames_[1] = {0};
};

} // namespace efu::cbm
