// SPDX-License-Identifier: BSD-2-Clause
// efu-view's accumulators: ev44 events binned straight from the flatbuffer into per-source frames
// (image, TOF, regions, gate), rolled into totals by the clock; da00, f144 and x5f2 kept as their
// latest values.
#include "efu/tools/view/ViewState.h"

#include "efu/tools/dump/Decode.h"
#include "efu/tools/view/MessageIds.h"
#include "efu/tools/view/TofBinning.h"

#include "schemas/ev44_generated.h"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <set>

#ifndef EFU_VERSION
#define EFU_VERSION "unknown"
#endif

namespace efu::tools::view {
namespace {

using Json = nlohmann::json;

constexpr int64_t kSecondNs = 1'000'000'000;
/// With a window, the image and spectra are the sum of this many frames of window / 10 each.
constexpr size_t kWindowFrames = 10;
constexpr size_t kMaxRois = 8;
constexpr double kMaxWindowS = 3600.0;
/// f144 counters and x5f2 services kept (efu publishes a few hundred counters per instrument);
/// more are counted in messages.sources_dropped.
constexpr size_t kMaxCounters = 4096;
constexpr size_t kMaxServices = 64;
/// Reference times remembered per source to count each pulse once, though several messages
/// carry it.
constexpr size_t kPulseMemory = 32;
/// A gate's limits: JSON numbers the page sends; keeps tof - min within int64.
constexpr int64_t kMaxGateNs = int64_t{1} << 53;

/// What a frame or a total holds besides its bins.
struct Counts {
  uint64_t events = 0;   ///< binned (in the accumulation)
  uint64_t negative = 0; ///< tof < 0
  uint64_t above = 0;    ///< tof >= the range's end
  uint64_t outside = 0;  ///< pixel id outside the geometry

  void add(const Counts &o) noexcept {
    events += o.events;
    negative += o.negative;
    above += o.above;
    outside += o.outside;
  }
  void subtract(const Counts &o) noexcept {
    events -= o.events;
    negative -= o.negative;
    above -= o.above;
    outside -= o.outside;
  }
};

/// One stretch of time's counts: 1 s without a window (rolled into the totals each second), a
/// tenth of the window with one. uint32 pixels keep the random writes in less cache; a frame
/// holds fewer than 2^32 events (ingest() rolls or saturates before), so no pixel wraps.
/// With a gate, each pixel's count inside the gate follows its count (stride 2): an event in
/// the gate writes to the cache line it has just written, not to a second image.
struct Frame {
  std::vector<uint32_t> image; ///< pixels x stride; empty without a geometry
  std::vector<uint64_t> tof;
  Counts counts;

  void clear() {
    if (counts.events != 0) {
      std::fill(image.begin(), image.end(), 0U);
      std::fill(tof.begin(), tof.end(), uint64_t{0});
    }
    counts = {};
  }
};

/// One second of a source's rates.
struct Second {
  int64_t tNs = 0;
  uint64_t events = 0;
  uint64_t pulses = 0;
  uint64_t messages = 0;
};

struct Source {
  std::string name;
  std::string topic;
  std::vector<Frame> frames;   ///< a ring; frames[current] is being filled
  std::vector<uint64_t> image; ///< the closed frames in the accumulation, summed
  std::vector<uint64_t> tof;
  Counts closed;
  std::vector<uint64_t> gated;  ///< closed frames' counts in the gate since it was set
  std::vector<uint8_t> roiMask; ///< per pixel, bit r: inside region slot r; empty without one

  uint64_t messages = 0;
  uint64_t eventsTotal = 0;
  MessageIds ids;
  int64_t lastPulseNs = 0;
  int64_t lastMessageNs = 0;
  std::array<int64_t, kPulseMemory> recentPulses{};
  size_t recentPulseCount = 0;
  size_t recentPulseNext = 0;
  Second second;     ///< the second being counted
  Second lastSecond; ///< the last closed one
  std::deque<Second> history;
};

struct Roi {
  uint32_t id = 0;
  std::string source;
  Rect rect;
  int64_t sinceNs = 0;
  std::vector<uint64_t> tof;
  uint64_t negative = 0;
  uint64_t above = 0;
  uint64_t second = 0;     ///< events in the second being counted
  uint64_t lastSecond = 0; ///< in the last closed second
};

struct Gate {
  int64_t minNs = 0;
  int64_t maxNs = 0;
  int64_t sinceNs = 0;
};

struct Monitor {
  struct Variable {
    std::string name;
    Json unit;
    Json axes;
    Json shape;
    Json latest;
    std::vector<double> sum;
  };
  std::string topic;
  uint64_t messages = 0;
  int64_t timestampNs = 0;
  std::vector<Variable> variables; ///< the signals (variables no other one names as an axis)
  Json axis;                       ///< {name, unit, values} or null
};

struct Counter {
  std::string name;
  std::string topic;
  Json value;
  int64_t timestampNs = 0;
  double rate = 0.0;
  bool haveNumber = false;
  double number = 0.0;
};

struct Service {
  std::string topic;
  Json fields; ///< service_id, software_name, software_version, host_name, process_id
  int64_t lastNs = 0;
  Json status;
};

/// Where one source's events go, for the binning loops.
struct BinTarget {
  uint32_t *image = nullptr; ///< stride 2 with a gate: [count, count in the gate] per pixel
  uint64_t pixels = 0;
  int64_t firstPixel = 0;
  uint64_t *tof = nullptr;
  int64_t tofMaxNs = 0;
  TofDivider divide{1};
  bool gate = false;
  int64_t gateMinNs = 0;
  uint64_t gateSpanNs = 0;
  const uint8_t *roiMask = nullptr;
  std::array<uint64_t *, kMaxRois> roiTof{}; ///< by region slot; null for other sources' slots
};

/// What the loops count besides bins, added to the frame and regions after the message.
struct Tally {
  uint64_t negative = 0;
  uint64_t above = 0;
  uint64_t outside = 0;
  std::array<uint64_t, kMaxRois> roiEvents{};
  std::array<uint64_t, kMaxRois> roiNegative{};
  std::array<uint64_t, kMaxRois> roiAbove{};
};

/// Events between a pixel's prefetch and its write (tuned with bench_view).
constexpr size_t kPrefetchDistance = 64;

/// The ev44 hot loop, one instantiation per combination so that an unused feature costs nothing
/// per event. Regions and the gate need the image (a pixel to look up).
template <bool kImage, bool kRoi, bool kGate>
void binFast(const BinTarget &t, const int32_t *pixel, const int32_t *tof, size_t n, Tally &tally) {
  uint64_t negative = 0;
  uint64_t above = 0;
  uint64_t outside = 0;
  for (size_t i = 0; i < n; ++i) {
    if constexpr (kImage) {
      // The pixels of a detector are written at random: ask for the lines kPrefetchDistance
      // events ahead, so that many misses are under way at once instead of one per event.
      if (i + kPrefetchDistance < n) {
        const auto ahead = std::min<uint64_t>(
            static_cast<uint64_t>(int64_t{pixel[i + kPrefetchDistance]} - t.firstPixel),
            t.pixels - 1);
        __builtin_prefetch(t.image + (kGate ? 2 * ahead : ahead), 1);
        if constexpr (kRoi) {
          __builtin_prefetch(t.roiMask + ahead, 0);
        }
      }
    }
    const int32_t time = tof[i];
    const bool inRange = time >= 0 && time < t.tofMaxNs;
    uint32_t bin = 0;
    if (inRange) {
      bin = t.divide(time);
      ++t.tof[bin];
    } else if (time < 0) {
      ++negative;
    } else {
      ++above;
    }
    if constexpr (kImage) {
      const auto index = static_cast<uint64_t>(int64_t{pixel[i]} - t.firstPixel);
      if (index >= t.pixels) {
        ++outside;
        continue;
      }
      if constexpr (kGate) {
        // The same cache line as the count: adding 0 costs less than a mispredicted branch.
        uint32_t *at = t.image + 2 * index;
        ++at[0];
        at[1] += static_cast<uint64_t>(time - t.gateMinNs) < t.gateSpanNs ? 1U : 0U;
      } else {
        ++t.image[index];
      }
      if constexpr (kRoi) {
        for (unsigned mask = t.roiMask[index]; mask != 0; mask &= mask - 1) {
          const int r = std::countr_zero(mask);
          ++tally.roiEvents[r];
          if (inRange) {
            ++t.roiTof[r][bin];
          } else if (time < 0) {
            ++tally.roiNegative[r];
          } else {
            ++tally.roiAbove[r];
          }
        }
      }
    }
  }
  tally.negative += negative;
  tally.above += above;
  tally.outside += outside;
}

/// The rare cases, one event at a time: no time_of_flight (image and regions only), or a frame
/// near 2^32 events (pixels saturate instead of wrapping). `tof` may be null, `t.image` too.
void binGeneric(const BinTarget &t, const int32_t *pixel, const int32_t *tof, size_t n,
                Tally &tally) {
  for (size_t i = 0; i < n; ++i) {
    const bool hasTime = tof != nullptr;
    const int64_t time = hasTime ? tof[i] : 0;
    const bool inRange = hasTime && time >= 0 && time < t.tofMaxNs;
    const uint32_t bin = inRange ? t.divide(static_cast<int32_t>(time)) : 0;
    if (inRange) {
      ++t.tof[bin];
    } else if (hasTime) {
      ++(time < 0 ? tally.negative : tally.above);
    }
    if (t.image == nullptr || pixel == nullptr) {
      continue;
    }
    const auto index = static_cast<uint64_t>(int64_t{pixel[i]} - t.firstPixel);
    if (index >= t.pixels) {
      ++tally.outside;
      continue;
    }
    uint32_t *at = t.image + (t.gate ? 2 * index : index);
    const bool gated =
        t.gate && hasTime && static_cast<uint64_t>(time - t.gateMinNs) < t.gateSpanNs;
    for (int part = 0; part < (gated ? 2 : 1); ++part) {
      if (at[part] != std::numeric_limits<uint32_t>::max()) {
        ++at[part];
      }
    }
    if (t.roiMask != nullptr) {
      for (unsigned mask = t.roiMask[index]; mask != 0; mask &= mask - 1) {
        const int r = std::countr_zero(mask);
        ++tally.roiEvents[r];
        if (inRange) {
          ++t.roiTof[r][bin];
        } else if (hasTime) {
          ++(time < 0 ? tally.roiNegative[r] : tally.roiAbove[r]);
        }
      }
    }
  }
}

template <typename T> void addInto(std::vector<uint64_t> &to, const std::vector<T> &from) {
  for (size_t i = 0; i < to.size(); ++i) {
    to[i] += from[i];
  }
}

template <typename T> void subtractFrom(std::vector<uint64_t> &to, const std::vector<T> &from) {
  for (size_t i = 0; i < to.size(); ++i) {
    to[i] -= from[i];
  }
}

/// The f144 name of a counter: the source without "efu.<instrument>.".
std::string counterName(std::string_view source) {
  if (source.starts_with("efu.")) {
    const auto second = source.find('.', 4);
    if (second != std::string_view::npos) {
      return std::string(source.substr(second + 1));
    }
  }
  return std::string(source);
}

Json stringOrNull(const Json &decoded, const char *key) {
  const auto it = decoded.find(key);
  return it != decoded.end() && it->is_string() ? *it : Json(nullptr);
}

} // namespace

struct ViewState::Impl {
  explicit Impl(ViewConfig c) : config(std::move(c)) {
    // The program checks its options; here only what the binning relies on: every time in
    // [0, tofMaxNs) falls in one of tofBins bins.
    config.tofBins = std::max<uint32_t>(config.tofBins, 1);
    config.tofMaxNs = std::max<int64_t>(config.tofMaxNs, 1);
    binNs = tofBinWidth(config.tofMaxNs, config.tofBins);
    divider = TofDivider(binNs);
    if (!(config.windowS >= 1.0 && config.windowS <= kMaxWindowS)) {
      config.windowS = 0.0;
    }
    if (config.geometry && config.geometry->pixels() == 0) {
      config.geometry.reset();
    }
    configureFrames();
  }

  ViewConfig config;
  int64_t binNs = 1;
  TofDivider divider{1};
  mutable std::mutex mutex;

  // The clock: the accumulation's start, the frame being filled, the second being counted.
  bool started = false;
  int64_t accumulationSinceNs = 0;
  size_t frameCount = 1;
  int64_t framePeriodNs = kSecondNs;
  size_t current = 0;
  int64_t frameStartNs = 0;
  int64_t secondStartNs = 0;
  bool paused = false;

  std::map<std::string, Source, std::less<>> sources;
  std::array<std::optional<Roi>, kMaxRois> rois;
  uint32_t nextRoiId = 1;
  std::optional<Gate> gate;
  std::map<std::string, Monitor, std::less<>> monitors;
  std::map<std::string, Counter, std::less<>> counters;
  std::map<std::string, Service, std::less<>> services;

  uint64_t messagesTotal = 0;
  uint64_t undecodable = 0;
  uint64_t unknown = 0;
  uint64_t sourcesDropped = 0;
  bool connected = false;
  std::string brokerError;
  int64_t lastMessageNs = 0;
  std::set<std::string, std::less<>> topicsSeen;
  std::vector<uint64_t> aligned; ///< an 8-aligned copy of a payload that is not

  [[nodiscard]] bool windowed() const noexcept { return config.windowS > 0.0; }
  [[nodiscard]] uint64_t pixels() const noexcept {
    return config.geometry ? config.geometry->pixels() : 0;
  }
  /// uint32 per pixel in a frame: its count, and with a gate its count in the gate.
  [[nodiscard]] size_t stride() const noexcept { return gate ? 2 : 1; }

  void configureFrames() {
    frameCount = windowed() ? kWindowFrames : 1;
    framePeriodNs = windowed() ? std::llround(config.windowS * 1e9 / kWindowFrames) : kSecondNs;
    current = 0;
  }

  void allocateFrames(Source &s) const {
    s.frames.assign(frameCount, Frame{});
    for (auto &f : s.frames) {
      f.image.assign(pixels() * stride(), 0U);
      f.tof.assign(config.tofBins, 0);
    }
  }

  void start(int64_t nowNs) {
    if (!started) {
      started = true;
      accumulationSinceNs = nowNs;
      frameStartNs = nowNs;
      secondStartNs = nowNs - nowNs % kSecondNs;
    }
  }

  /// When the counts of images and spectra start: the reset, or the oldest frame in the window.
  [[nodiscard]] int64_t sinceNs() const noexcept {
    if (!windowed()) {
      return accumulationSinceNs;
    }
    return std::max(accumulationSinceNs,
                    frameStartNs - static_cast<int64_t>(frameCount - 1) * framePeriodNs);
  }

  /// Closes s's current frame into its totals and empties frame `next`, which leaves the window
  /// first (with a window) and is filled from now on.
  void roll(Source &s, size_t next) {
    Frame &f = s.frames[current];
    if (f.counts.events != 0) {
      if (stride() == 1) {
        addInto(s.image, f.image);
      } else {
        // The gated counts go to the gate's totals now: the gate image is not windowed. The
        // frame is cleared before it is filled again, so they are not counted twice.
        for (size_t i = 0; i < s.image.size(); ++i) {
          s.image[i] += f.image[2 * i];
          s.gated[i] += f.image[2 * i + 1];
        }
      }
      addInto(s.tof, f.tof);
      s.closed.add(f.counts);
    }
    Frame &leaving = s.frames[next];
    if (windowed() && leaving.counts.events != 0) {
      for (size_t i = 0; i < s.image.size(); ++i) {
        s.image[i] -= leaving.image[i * stride()];
      }
      subtractFrom(s.tof, leaving.tof);
      s.closed.subtract(leaving.counts);
    }
    leaving.clear();
  }

  void advanceFrames(int64_t nowNs) {
    if (nowNs < frameStartNs + framePeriodNs) {
      return;
    }
    const int64_t elapsed = (nowNs - frameStartNs) / framePeriodNs;
    // After frameCount rolls every frame is empty: more would change nothing.
    const auto rolls = static_cast<size_t>(std::min<int64_t>(elapsed, frameCount));
    for (size_t r = 0; r < rolls; ++r) {
      const size_t next = (current + 1) % frameCount;
      for (auto &[name, s] : sources) {
        roll(s, next);
      }
      current = next;
    }
    frameStartNs += elapsed * framePeriodNs;
  }

  void closeSecond() {
    for (auto &[name, s] : sources) {
      s.second.tNs = secondStartNs;
      s.lastSecond = s.second;
      s.second = {};
      if (config.historyS > 0) {
        s.history.push_back(s.lastSecond);
        while (s.history.size() > config.historyS) {
          s.history.pop_front();
        }
      }
    }
    for (auto &roi : rois) {
      if (roi) {
        roi->lastSecond = roi->second;
        roi->second = 0;
      }
    }
    secondStartNs += kSecondNs;
  }

  void advanceSeconds(int64_t nowNs) {
    const int64_t nowSecondNs = nowNs - nowNs % kSecondNs;
    if (nowSecondNs - secondStartNs > static_cast<int64_t>(config.historyS + 1) * kSecondNs) {
      // A long silence (a suspended process, a clock step): the second with counts, then only
      // the last historyS seconds of zeros.
      closeSecond();
      secondStartNs = nowSecondNs - static_cast<int64_t>(config.historyS) * kSecondNs;
    }
    while (secondStartNs < nowSecondNs) {
      closeSecond();
    }
  }

  void advance(int64_t nowNs) {
    start(nowNs);
    advanceFrames(nowNs);
    advanceSeconds(nowNs);
  }

  /// Empties images, spectra, region spectra and the gate image; counts restart at nowNs.
  void restart(int64_t nowNs) {
    start(nowNs);
    accumulationSinceNs = nowNs;
    frameStartNs = nowNs;
    for (auto &[name, s] : sources) {
      for (auto &f : s.frames) {
        f.clear();
      }
      std::fill(s.image.begin(), s.image.end(), uint64_t{0});
      std::fill(s.tof.begin(), s.tof.end(), uint64_t{0});
      s.closed = {};
      std::fill(s.gated.begin(), s.gated.end(), uint64_t{0});
    }
    for (auto &roi : rois) {
      if (roi) {
        std::fill(roi->tof.begin(), roi->tof.end(), uint64_t{0});
        roi->negative = roi->above = 0;
        roi->sinceNs = nowNs;
      }
    }
    if (gate) {
      gate->sinceNs = nowNs;
    }
    for (auto &[name, m] : monitors) {
      for (auto &v : m.variables) {
        std::fill(v.sum.begin(), v.sum.end(), 0.0);
      }
    }
  }

  Source *source(std::string_view name, std::string_view topic) {
    auto it = sources.find(name);
    if (it == sources.end()) {
      if (sources.size() >= config.maxSources) {
        return nullptr;
      }
      it = sources.emplace(std::string(name), Source{}).first;
      Source &s = it->second;
      s.name = std::string(name);
      allocateFrames(s);
      s.image.assign(pixels(), 0);
      s.tof.assign(config.tofBins, 0);
      if (gate) {
        s.gated.assign(pixels(), 0);
      }
    }
    if (it->second.topic != topic) {
      it->second.topic = std::string(topic);
    }
    return &it->second;
  }

  void countPulse(Source &s, int64_t pulseNs) {
    s.lastPulseNs = std::max(s.lastPulseNs, pulseNs);
    const auto seen = s.recentPulses.begin() + static_cast<ptrdiff_t>(s.recentPulseCount);
    if (std::find(s.recentPulses.begin(), seen, pulseNs) != seen) {
      return;
    }
    ++s.second.pulses;
    s.recentPulses[s.recentPulseNext] = pulseNs;
    s.recentPulseNext = (s.recentPulseNext + 1) % kPulseMemory;
    s.recentPulseCount = std::min(s.recentPulseCount + 1, kPulseMemory);
  }

  void ingestEv44(std::string_view topic, const uint8_t *data, size_t size, int64_t nowNs) {
    flatbuffers::Verifier verifier(data, size);
    if (!fb::VerifyEvent44MessageBuffer(verifier)) {
      ++undecodable;
      return;
    }
    const auto *msg = fb::GetEvent44Message(data);
    const auto *pixelIds = msg->pixel_id();
    const auto *times = msg->time_of_flight();
    const size_t pixelCount = pixelIds == nullptr ? 0 : pixelIds->size();
    const size_t tofCount = times == nullptr ? 0 : times->size();
    if (pixelCount != 0 && tofCount != 0 && pixelCount != tofCount) {
      ++undecodable; // which time goes with which pixel is unknown
      return;
    }
    const size_t n = std::max(pixelCount, tofCount);
    const auto *name = msg->source_name();
    Source *s = source(std::string_view(name->c_str(), name->size()), topic);
    if (s == nullptr) {
      ++sourcesDropped;
      return;
    }
    ++s->messages;
    ++s->second.messages;
    s->lastMessageNs = nowNs;
    s->eventsTotal += n;
    s->second.events += n;

    s->ids.add(msg->message_id());

    // Copied out: the Verifier does not check 8-byte alignment of vector elements.
    const auto *pulses = msg->reference_time();
    for (flatbuffers::uoffset_t i = 0; i < pulses->size(); ++i) {
      int64_t pulseNs = 0;
      std::memcpy(&pulseNs, pulses->Data() + size_t{i} * sizeof(int64_t), sizeof(int64_t));
      countPulse(*s, pulseNs);
    }
    if (paused || n == 0) {
      return;
    }
    bin(*s, pixelCount == n ? pixelIds->data() : nullptr, tofCount == n ? times->data() : nullptr,
        n);
  }

  void bin(Source &s, const int32_t *pixel, const int32_t *tof, size_t n) {
    constexpr uint64_t kFrameLimit = std::numeric_limits<uint32_t>::max();
    if (!windowed() && s.frames[current].counts.events + n > kFrameLimit) {
      roll(s, current); // without a window a frame may close at any time
    }
    Frame &f = s.frames[current];
    const bool saturate = f.counts.events + n > kFrameLimit;
    const bool image = pixel != nullptr && !f.image.empty();
    BinTarget t;
    t.tof = f.tof.data();
    t.tofMaxNs = config.tofMaxNs;
    t.divide = divider;
    bool regions = false;
    bool gating = false;
    if (image) {
      t.image = f.image.data();
      t.pixels = pixels();
      t.firstPixel = config.geometry->firstPixel;
      if (!s.roiMask.empty()) {
        for (size_t r = 0; r < kMaxRois; ++r) {
          if (rois[r] && rois[r]->source == s.name) {
            t.roiTof[r] = rois[r]->tof.data();
            regions = true;
          }
        }
        t.roiMask = regions ? s.roiMask.data() : nullptr;
      }
      if (gate) {
        gating = true;
        t.gate = true;
        t.gateMinNs = gate->minNs;
        t.gateSpanNs = static_cast<uint64_t>(gate->maxNs - gate->minNs);
      }
    }
    Tally tally;
    if (tof == nullptr || saturate) {
      binGeneric(t, image ? pixel : nullptr, tof, n, tally);
    } else if (!image) {
      binFast<false, false, false>(t, pixel, tof, n, tally);
    } else if (regions && gating) {
      binFast<true, true, true>(t, pixel, tof, n, tally);
    } else if (regions) {
      binFast<true, true, false>(t, pixel, tof, n, tally);
    } else if (gating) {
      binFast<true, false, true>(t, pixel, tof, n, tally);
    } else {
      binFast<true, false, false>(t, pixel, tof, n, tally);
    }
    f.counts.events += n;
    f.counts.negative += tally.negative;
    f.counts.above += tally.above;
    f.counts.outside += tally.outside;
    if (regions) {
      for (size_t r = 0; r < kMaxRois; ++r) {
        if (t.roiTof[r] != nullptr) {
          rois[r]->second += tally.roiEvents[r];
          rois[r]->negative += tally.roiNegative[r];
          rois[r]->above += tally.roiAbove[r];
        }
      }
    }
  }

  void ingestDa00(std::string_view topic, const Json &decoded) {
    const std::string name = decoded.value("source_name", Json()).is_string()
                                 ? decoded.at("source_name").get<std::string>()
                                 : std::string();
    auto it = monitors.find(name);
    if (it == monitors.end()) {
      if (monitors.size() >= config.maxSources) {
        ++sourcesDropped;
        return;
      }
      it = monitors.emplace(name, Monitor{}).first;
    }
    Monitor &m = it->second;
    m.topic = std::string(topic);
    ++m.messages;
    m.timestampNs = decoded.value("timestamp", int64_t{0});
    const Json &data = decoded.at("data");
    std::set<std::string, std::less<>> axisNames;
    for (const auto &v : data) {
      for (const auto &a : v.at("axes")) {
        axisNames.insert(a.get<std::string>());
      }
    }
    std::vector<Monitor::Variable> signals;
    for (const auto &v : data) {
      const Json &values = v.at("data");
      if (!v.at("name").is_string() || !values.is_array()) {
        continue; // c_string text: nothing to add up
      }
      const std::string varName = v.at("name").get<std::string>();
      if (axisNames.contains(varName)) {
        continue;
      }
      Monitor::Variable var{varName, v.at("unit"), v.at("axes"), v.at("shape"), values, {}};
      const auto before = std::find_if(m.variables.begin(), m.variables.end(),
                                       [&](const auto &o) { return o.name == varName; });
      if (before != m.variables.end() && before->shape == var.shape &&
          before->sum.size() == values.size()) {
        var.sum = std::move(before->sum);
      } else {
        var.sum.assign(values.size(), 0.0); // new, or its shape changed: the sum starts again
      }
      for (size_t i = 0; i < values.size(); ++i) {
        var.sum[i] += values[i].get<double>();
      }
      signals.push_back(std::move(var));
    }
    m.variables = std::move(signals);
    m.axis = nullptr;
    if (!m.variables.empty() && !m.variables.front().axes.empty()) {
      const auto &axisName = m.variables.front().axes.front();
      for (const auto &v : data) {
        if (v.at("name") == axisName && v.at("data").is_array()) {
          m.axis = Json{{"name", axisName}, {"unit", v.at("unit")}, {"values", v.at("data")}};
          break;
        }
      }
    }
  }

  void ingestF144(std::string_view topic, const Json &decoded) {
    const std::string source = decoded.at("source_name").get<std::string>();
    auto it = counters.find(source);
    if (it == counters.end()) {
      if (counters.size() >= kMaxCounters) {
        ++sourcesDropped;
        return;
      }
      it = counters.emplace(source, Counter{}).first;
      it->second.name = counterName(source);
    }
    Counter &c = it->second;
    c.topic = std::string(topic);
    const int64_t timestampNs = decoded.value("timestamp", int64_t{0});
    const Json &value = decoded.at("value");
    if (value.is_number()) {
      const double number = value.get<double>();
      // The interval in double: two timestamps far apart (a bad clock) overflow int64.
      const double seconds =
          (static_cast<double>(timestampNs) - static_cast<double>(c.timestampNs)) / 1e9;
      c.rate = c.haveNumber && timestampNs > c.timestampNs ? (number - c.number) / seconds : 0.0;
      c.haveNumber = true;
      c.number = number;
    } else {
      c.haveNumber = false;
      c.rate = 0.0;
    }
    c.value = value;
    c.timestampNs = timestampNs;
  }

  void ingestX5f2(std::string_view topic, const Json &decoded, int64_t nowNs) {
    const Json id = stringOrNull(decoded, "service_id");
    const std::string key = id.is_string() ? id.get<std::string>() : std::string();
    auto it = services.find(key);
    if (it == services.end()) {
      if (services.size() >= kMaxServices) {
        ++sourcesDropped;
        return;
      }
      it = services.emplace(key, Service{}).first;
    }
    Service &s = it->second;
    s.topic = std::string(topic);
    s.fields = Json{{"service_id", id},
                    {"software_name", stringOrNull(decoded, "software_name")},
                    {"software_version", stringOrNull(decoded, "software_version")},
                    {"host_name", stringOrNull(decoded, "host_name")},
                    {"process_id", decoded.value("process_id", 0)},
                    {"update_interval", decoded.value("update_interval", 0)}};
    s.lastNs = nowNs;
    s.status = decoded.value("status_json", Json());
  }

  [[nodiscard]] const Roi *findRoi(uint32_t id) const {
    for (const auto &roi : rois) {
      if (roi && roi->id == id) {
        return &*roi;
      }
    }
    return nullptr;
  }

  /// A pixel of s's image: the closed frames plus the one being filled.
  [[nodiscard]] uint64_t pixel(const Source &s, size_t index) const {
    return s.image[index] + s.frames[current].image[index * stride()];
  }
  /// Its count in the gate: the closed frames' plus the one being filled.
  [[nodiscard]] uint64_t gatedPixel(const Source &s, size_t index) const {
    return s.gated[index] + s.frames[current].image[2 * index + 1];
  }

  /// Sets or clears the gate: the frames take or lose their gated counts; the gate image starts
  /// empty.
  void changeGate(std::optional<Gate> next) {
    const size_t from = stride();
    gate = next;
    const size_t to = stride();
    for (auto &[name, s] : sources) {
      s.gated.assign(gate ? pixels() : 0, 0);
      s.gated.shrink_to_fit();
      for (auto &f : s.frames) {
        if (f.image.empty()) {
          continue;
        }
        std::vector<uint32_t> image(pixels() * to, 0U);
        for (size_t i = 0; i < pixels(); ++i) {
          image[i * to] = f.image[i * from];
        }
        f.image = std::move(image);
      }
    }
  }

  [[nodiscard]] uint64_t rectSum(const Source &s, const Rect &r) const {
    uint64_t sum = 0;
    const uint32_t width = config.geometry->width;
    for (uint32_t y = r.y0; y < r.y1; ++y) {
      for (uint32_t x = r.x0; x < r.x1; ++x) {
        sum += pixel(s, size_t{y} * width + x);
      }
    }
    return sum;
  }

  [[nodiscard]] Json sourceJson(const Source &s) const {
    Counts counts = s.closed;
    counts.add(s.frames[current].counts);
    Json history = Json::array();
    for (const auto &h : s.history) {
      history.push_back({{"t_ns", h.tNs}, {"events_per_s", h.events}, {"pulses_per_s", h.pulses}});
    }
    return Json{{"name", s.name},
                {"topic", s.topic},
                {"events", counts.events},
                {"messages", s.messages},
                {"events_total", s.eventsTotal},
                {"events_per_s", static_cast<double>(s.lastSecond.events)},
                {"messages_per_s", static_cast<double>(s.lastSecond.messages)},
                {"pulses_per_s", static_cast<double>(s.lastSecond.pulses)},
                {"last_pulse_ns", s.lastPulseNs},
                {"last_message_ns", s.lastMessageNs},
                {"message_id_gaps", s.ids.missing()},
                {"message_id_duplicates", s.ids.duplicates()},
                {"message_id_restarts", s.ids.restarts()},
                {"negative_tof", counts.negative},
                {"tof_above_range", counts.above},
                {"outside_image", counts.outside},
                {"history", std::move(history)}};
  }
};

ViewState::ViewState(ViewConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {}

ViewState::~ViewState() = default;

void ViewState::ingest(std::string_view topic, std::span<const uint8_t> payload, int64_t nowNs) {
  Impl &m = *impl_;
  const std::lock_guard lock(m.mutex);
  m.advance(nowNs);
  ++m.messagesTotal;
  m.lastMessageNs = nowNs;
  if (!m.topicsSeen.contains(topic)) {
    m.topicsSeen.emplace(topic);
  }
  if (payload.size() < 8) {
    ++m.undecodable;
    return;
  }
  const uint8_t *data = payload.data();
  if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
    // Flatbuffers reads scalars in place; a Kafka payload has no alignment guarantee.
    m.aligned.resize((payload.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    std::memcpy(m.aligned.data(), payload.data(), payload.size());
    data = reinterpret_cast<const uint8_t *>(m.aligned.data());
  }
  const std::string_view identifier(reinterpret_cast<const char *>(data) + 4, 4);
  if (identifier == fb::Event44MessageIdentifier()) {
    m.ingestEv44(topic, data, payload.size(), nowNs);
    return;
  }
  if (identifier != "da00" && identifier != "f144" && identifier != "x5f2") {
    ++m.unknown; // ar51 too: efu-view shows no raw readouts
    return;
  }
  std::string error;
  const auto decoded = decodeMessage({data, payload.size()}, error);
  if (!decoded) {
    ++m.undecodable;
    return;
  }
  try {
    if (identifier == "da00") {
      m.ingestDa00(topic, *decoded);
    } else if (identifier == "f144") {
      m.ingestF144(topic, *decoded);
    } else {
      m.ingestX5f2(topic, *decoded, nowNs);
    }
  } catch (const std::exception &) {
    ++m.undecodable; // a decoded message of a shape we did not expect
  }
}

void ViewState::tick(int64_t nowNs) {
  const std::lock_guard lock(impl_->mutex);
  impl_->advance(nowNs);
}

void ViewState::setBroker(bool connected, std::string error, int64_t nowNs) {
  const std::lock_guard lock(impl_->mutex);
  impl_->start(nowNs);
  impl_->connected = connected;
  impl_->brokerError = std::move(error);
}

nlohmann::json ViewState::state(int64_t nowNs) const {
  const Impl &m = *impl_;
  const std::lock_guard lock(m.mutex);
  Json topics = Json::array();
  if (!m.config.topics.empty()) {
    topics = m.config.topics;
  } else {
    for (const auto &t : m.topicsSeen) {
      topics.push_back(t);
    }
  }
  Json out;
  out["program"] = "efu-view";
  out["version"] = EFU_VERSION;
  out["now_ns"] = nowNs;
  out["broker"] = {{"bootstrap", m.config.bootstrap},
                   {"topics", std::move(topics)},
                   {"connected", m.connected},
                   {"error", m.brokerError},
                   {"last_message_ns", m.lastMessageNs}};
  out["control"] = {
      {"paused", m.paused}, {"window_s", m.config.windowS}, {"since_ns", m.accumulationSinceNs}};
  if (m.config.geometry) {
    const auto &g = *m.config.geometry;
    out["geometry"] = {{"kind", g.kind},
                       {"instrument", g.instrument},
                       {"width", g.width},
                       {"height", g.height},
                       {"first_pixel", g.firstPixel}};
  } else {
    out["geometry"] = nullptr;
  }
  out["tof"] = {{"bins", m.config.tofBins}, {"max_ns", m.config.tofMaxNs}};

  Json sources = Json::array();
  for (const auto &[name, s] : m.sources) {
    sources.push_back(m.sourceJson(s));
  }
  out["sources"] = std::move(sources);

  Json rois = Json::array();
  std::vector<const Roi *> byId;
  for (const auto &roi : m.rois) {
    if (roi) {
      byId.push_back(&*roi);
    }
  }
  std::sort(byId.begin(), byId.end(), [](const Roi *a, const Roi *b) { return a->id < b->id; });
  for (const Roi *roi : byId) {
    const auto s = m.sources.find(roi->source);
    rois.push_back({{"id", roi->id},
                    {"source", roi->source},
                    {"x0", roi->rect.x0},
                    {"y0", roi->rect.y0},
                    {"x1", roi->rect.x1},
                    {"y1", roi->rect.y1},
                    {"counts", s == m.sources.end() ? 0 : m.rectSum(s->second, roi->rect)},
                    {"events_per_s", static_cast<double>(roi->lastSecond)},
                    {"since_ns", roi->sinceNs}});
  }
  out["rois"] = std::move(rois);
  if (m.gate) {
    out["gate"] = {{"tof_min_ns", m.gate->minNs},
                   {"tof_max_ns", m.gate->maxNs},
                   {"since_ns", m.gate->sinceNs}};
  } else {
    out["gate"] = nullptr;
  }

  Json monitors = Json::array();
  for (const auto &[name, mon] : m.monitors) {
    Json variables = Json::array();
    for (const auto &v : mon.variables) {
      variables.push_back({{"name", v.name},
                           {"unit", v.unit},
                           {"axes", v.axes},
                           {"shape", v.shape},
                           {"latest", v.latest},
                           {"sum", v.sum}});
    }
    monitors.push_back({{"name", name},
                        {"topic", mon.topic},
                        {"messages", mon.messages},
                        {"timestamp_ns", mon.timestampNs},
                        {"variables", std::move(variables)},
                        {"axis", mon.axis}});
  }
  out["monitors"] = std::move(monitors);

  Json services = Json::array();
  for (const auto &[id, s] : m.services) {
    Json row = {{"topic", s.topic}};
    row.update(s.fields);
    row["last_ns"] = s.lastNs;
    row["status"] = s.status;
    services.push_back(std::move(row));
  }
  std::vector<std::pair<const std::string *, const Counter *>> byName;
  for (const auto &[source, c] : m.counters) {
    byName.emplace_back(&source, &c);
  }
  std::stable_sort(byName.begin(), byName.end(),
                   [](const auto &a, const auto &b) { return a.second->name < b.second->name; });
  Json counters = Json::array();
  for (const auto &[source, c] : byName) {
    const CounterDoc *doc = CounterDocs::embedded().find(c->name);
    const auto text = [doc](const std::string CounterDoc::*field) {
      return doc == nullptr ? Json(nullptr) : Json(doc->*field);
    };
    counters.push_back({{"source", *source},
                        {"name", c->name},
                        {"topic", c->topic},
                        {"value", c->value},
                        {"rate", c->rate},
                        {"timestamp_ns", c->timestampNs},
                        {"kind", text(&CounterDoc::kind)},
                        {"unit", text(&CounterDoc::unit)},
                        {"meaning", text(&CounterDoc::meaning)},
                        {"losing", c->haveNumber && c->number > 0 && isLossCounter(c->name)}});
  }
  out["health"] = {{"services", std::move(services)}, {"counters", std::move(counters)}};
  out["messages"] = {{"total", m.messagesTotal},
                     {"undecodable", m.undecodable},
                     {"unknown", m.unknown},
                     {"sources_dropped", m.sourcesDropped}};
  return out;
}

std::optional<ImageSnapshot> ViewState::image(std::string_view source, bool gated) const {
  const Impl &m = *impl_;
  const std::lock_guard lock(m.mutex);
  const auto it = m.sources.find(source);
  if (it == m.sources.end() || !m.config.geometry || (gated && !m.gate)) {
    return std::nullopt;
  }
  const Source &s = it->second;
  ImageSnapshot out;
  out.width = m.config.geometry->width;
  out.height = m.config.geometry->height;
  out.firstPixel = m.config.geometry->firstPixel;
  if (gated) {
    out.counts.resize(s.gated.size());
    for (size_t i = 0; i < s.gated.size(); ++i) {
      out.counts[i] = m.gatedPixel(s, i);
    }
    out.sinceNs = m.gate->sinceNs;
  } else {
    out.counts.resize(s.image.size());
    for (size_t i = 0; i < s.image.size(); ++i) {
      out.counts[i] = m.pixel(s, i);
    }
    out.sinceNs = m.sinceNs();
  }
  out.max = out.counts.empty() ? 0 : *std::max_element(out.counts.begin(), out.counts.end());
  return out;
}

std::optional<TofSnapshot> ViewState::tof(std::string_view source,
                                          std::optional<uint32_t> roi) const {
  const Impl &m = *impl_;
  const std::lock_guard lock(m.mutex);
  const auto it = m.sources.find(source);
  if (it == m.sources.end()) {
    return std::nullopt;
  }
  TofSnapshot out;
  out.binNs = m.binNs;
  out.maxNs = m.config.tofMaxNs;
  if (roi) {
    const Roi *r = m.findRoi(*roi);
    if (r == nullptr || r->source != source) {
      return std::nullopt;
    }
    out.bins = r->tof;
    out.negative = r->negative;
    out.aboveRange = r->above;
    out.sinceNs = r->sinceNs;
    return out;
  }
  const Source &s = it->second;
  const Frame &f = s.frames[m.current];
  out.bins = s.tof;
  addInto(out.bins, f.tof);
  out.negative = s.closed.negative + f.counts.negative;
  out.aboveRange = s.closed.above + f.counts.above;
  out.sinceNs = m.sinceNs();
  return out;
}

void ViewState::reset(int64_t nowNs) {
  const std::lock_guard lock(impl_->mutex);
  impl_->restart(nowNs);
}

void ViewState::setPaused(bool paused, int64_t nowNs) {
  const std::lock_guard lock(impl_->mutex);
  impl_->start(nowNs);
  impl_->paused = paused;
}

std::string ViewState::setWindow(double seconds, int64_t nowNs) {
  if (!(seconds == 0.0 || (seconds >= 1.0 && seconds <= kMaxWindowS))) {
    return "window " + Json(seconds).dump() + " s: must be 0 (since the start) or 1 to 3600";
  }
  Impl &m = *impl_;
  const std::lock_guard lock(m.mutex);
  m.config.windowS = seconds;
  m.configureFrames();
  for (auto &[name, s] : m.sources) {
    m.allocateFrames(s);
  }
  m.restart(nowNs);
  return {};
}

std::string ViewState::addRoi(std::string_view source, Rect rect, int64_t nowNs, uint32_t &id) {
  Impl &m = *impl_;
  const std::lock_guard lock(m.mutex);
  m.start(nowNs);
  const auto it = m.sources.find(source);
  if (it == m.sources.end()) {
    return "unknown source '" + std::string(source) + "'";
  }
  if (!m.config.geometry) {
    return "no geometry (--geometry): no image to draw a region on";
  }
  const auto &g = *m.config.geometry;
  if (rect.x0 >= rect.x1 || rect.y0 >= rect.y1 || rect.x1 > g.width || rect.y1 > g.height) {
    return "region [" + std::to_string(rect.x0) + ", " + std::to_string(rect.x1) + ") x [" +
           std::to_string(rect.y0) + ", " + std::to_string(rect.y1) +
           ") is empty or outside the image of " + std::to_string(g.width) + " x " +
           std::to_string(g.height);
  }
  const auto slot = std::find_if(m.rois.begin(), m.rois.end(), [](const auto &r) { return !r; });
  if (slot == m.rois.end()) {
    return "at most " + std::to_string(kMaxRois) + " regions: delete one first";
  }
  Source &s = it->second;
  if (s.roiMask.empty()) {
    s.roiMask.assign(m.pixels(), 0);
  }
  const auto bit = static_cast<uint8_t>(1U << (slot - m.rois.begin()));
  for (uint32_t y = rect.y0; y < rect.y1; ++y) {
    for (uint32_t x = rect.x0; x < rect.x1; ++x) {
      s.roiMask[size_t{y} * g.width + x] |= bit;
    }
  }
  Roi roi;
  roi.id = m.nextRoiId++;
  roi.source = std::string(source);
  roi.rect = rect;
  roi.sinceNs = nowNs;
  roi.tof.assign(m.config.tofBins, 0);
  *slot = std::move(roi);
  id = (*slot)->id;
  return {};
}

std::string ViewState::removeRoi(uint32_t id) {
  Impl &m = *impl_;
  const std::lock_guard lock(m.mutex);
  for (size_t r = 0; r < kMaxRois; ++r) {
    if (m.rois[r] && m.rois[r]->id == id) {
      const auto s = m.sources.find(m.rois[r]->source);
      if (s != m.sources.end()) {
        const auto keep = static_cast<uint8_t>(~(1U << r));
        for (auto &mask : s->second.roiMask) {
          mask &= keep;
        }
      }
      m.rois[r].reset();
      return {};
    }
  }
  return "no region " + std::to_string(id);
}

std::string ViewState::setGate(std::optional<std::pair<int64_t, int64_t>> window, int64_t nowNs) {
  if (window && !(window->first < window->second && window->first >= -kMaxGateNs &&
                  window->second <= kMaxGateNs)) {
    return "gate [" + std::to_string(window->first) + ", " + std::to_string(window->second) +
           ") ns: the minimum must be below the maximum (and both within +-2^53)";
  }
  Impl &m = *impl_;
  const std::lock_guard lock(m.mutex);
  m.start(nowNs);
  m.changeGate(window ? std::optional<Gate>(Gate{window->first, window->second, nowNs})
                      : std::nullopt);
  return {};
}

} // namespace efu::tools::view
