// SPDX-License-Identifier: BSD-2-Clause
// efu-view's accumulators: what the Kafka messages it reads add up to, and the JSON its page reads.
#pragma once

#include "efu/tools/dump/Image.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace efu::tools::view {

/// What efu-view accumulates, from its command line. Defaults are the program's.
struct ViewConfig {
  std::optional<ImageGeometry> geometry; ///< --geometry; without it no image, only spectra
  uint32_t tofBins = 1000;               ///< --tof-bins: fine bins the page regroups
  int64_t tofMaxNs = 100'000'000;        ///< --tof-max-ns: range [0, max) of every spectrum
  double windowS = 0.0;                  ///< --window: 0 = since the start or last reset
  uint32_t historyS = 300;               ///< rate history kept, seconds
  size_t maxSources = 64;                ///< ev44 or da00 sources; more are counted, not kept
  std::string bootstrap;                 ///< -b, for state()'s "broker"
  std::vector<std::string> topics;       ///< -t, for state()'s "broker" (empty: the topics seen)
};

/// A picture's counts for the page: row-major, width * height, y = 0 the top row.
struct ImageSnapshot {
  uint32_t width = 0;
  uint32_t height = 0;
  uint32_t firstPixel = 1;
  uint64_t max = 0;
  int64_t sinceNs = 0; ///< wall-clock ns the counts start from
  std::vector<uint64_t> counts;
};

/// A time-of-flight spectrum for the page: bins[i] counts tof in [i * binNs, (i + 1) * binNs).
struct TofSnapshot {
  int64_t binNs = 0;
  int64_t maxNs = 0;
  uint64_t negative = 0;   ///< tof < 0, not binned
  uint64_t aboveRange = 0; ///< tof >= maxNs, not binned
  int64_t sinceNs = 0;
  std::vector<uint64_t> bins;
};

/// A rectangle on the image, [x0, x1) x [y0, y1) in detector pixels.
struct Rect {
  uint32_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};

/// Every message efu-view has read, added up. Thread-safe: one thread calls ingest() and tick()
/// (the Kafka reader); any number of HTTP threads call the readers and the controls at once.
///
/// ev44 (by source_name): the image (with a geometry) and the TOF spectrum over the window,
/// events/s, messages/s and pulses/s per second of wall clock for the last historyS seconds, the
/// last reference time, message_id gaps. da00 (by source_name): the latest histogram of each
/// variable and their sum. f144: the latest value of each source_name and its rate. x5f2: the
/// latest status of each service_id. Memory is bounded by geometry x sources, not by events.
class ViewState {
public:
  explicit ViewState(ViewConfig config);
  ~ViewState();
  ViewState(const ViewState &) = delete;
  ViewState &operator=(const ViewState &) = delete;

  /// One Kafka message of `topic`, received at wall-clock `nowNs`. Dispatches on the file
  /// identifier; counts what it cannot decode or does not know (never throws on bad input).
  void ingest(std::string_view topic, std::span<const uint8_t> payload, int64_t nowNs);
  /// Moves the clock on (closes seconds of the rate history, rolls the window's frames). The
  /// reader calls it at least every 100 ms, with or without messages.
  void tick(int64_t nowNs);
  /// The reader's view of the broker: connected, the last error (empty: none).
  void setBroker(bool connected, std::string error, int64_t nowNs);

  /// GET /api/state (docs/tools.md, "efu-view: what the page reads").
  [[nodiscard]] nlohmann::json state(int64_t nowNs) const;
  /// The image of `source` (gated: only events inside the TOF gate, since the gate was set);
  /// nullopt for an unknown source, no geometry, or gated without a gate.
  [[nodiscard]] std::optional<ImageSnapshot> image(std::string_view source, bool gated) const;
  /// The TOF spectrum of `source`, or of region `roi` (events inside it since it was drawn);
  /// nullopt for an unknown source or region.
  [[nodiscard]] std::optional<TofSnapshot> tof(std::string_view source,
                                               std::optional<uint32_t> roi) const;

  /// Controls (POST /api/control, /api/roi, /api/gate). Each returns an empty string when done,
  /// else why not (the page shows it; HTTP 400).
  void reset(int64_t nowNs);
  void setPaused(bool paused, int64_t nowNs);
  std::string setWindow(double seconds, int64_t nowNs); ///< restarts the accumulation
  /// A region of `source`'s image; sets `id` (1, 2, ...). At most 8 regions.
  std::string addRoi(std::string_view source, Rect rect, int64_t nowNs, uint32_t &id);
  std::string removeRoi(uint32_t id);
  /// Gate on tof in [minNs, maxNs); nullopt clears it. The gated image starts empty.
  std::string setGate(std::optional<std::pair<int64_t, int64_t>> window, int64_t nowNs);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// One row of docs/counters.md's tables, embedded in the binary at build time.
struct CounterDoc {
  std::string pattern; ///< as written, with placeholders: `receive.q<i>.packets`
  std::string kind;    ///< "counter" or "gauge"
  std::string unit;
  std::string meaning; ///< markdown as written
};

/// The counters efu documents, read from the text of docs/counters.md.
class CounterDocs {
public:
  /// Every table row whose first cell is a back-quoted counter name.
  static CounterDocs parse(std::string_view markdown);
  /// The docs embedded in efu-view (docs/counters.md as built).
  static const CounterDocs &embedded();
  /// The row for a counter name (without the `efu.<instrument>.` prefix of the f144 source);
  /// a placeholder `<...>` matches one dotted segment or part of one. nullptr when none.
  [[nodiscard]] const CounterDoc *find(std::string_view name) const;
  [[nodiscard]] const std::vector<CounterDoc> &rows() const noexcept { return rows_; }

private:
  std::vector<CounterDoc> rows_;
};

/// True when a counter of this name counts something lost or refused (drops, errors,
/// refusals, failures, truncations, gaps): shown red on the page when it is above 0.
bool isLossCounter(std::string_view name);

} // namespace efu::tools::view
