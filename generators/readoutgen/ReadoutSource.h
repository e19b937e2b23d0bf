// SPDX-License-Identifier: BSD-2-Clause
// The detector-source interface of readoutgen: turns one generated neutron into readout bytes.
#pragma once

#include "common/readout/EssHeader.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

namespace efu::readoutgen {

/// Where sources report the events a correct module must form (ground truth, `--truth FILE`).
/// Called once per neutron that will be sent; never for noise readouts.
class TruthSink {
public:
  virtual ~TruthSink() = default;
  /// pulseTimeNs: the pulse the event belongs to (ns since epoch, ticksToNs of the header's
  /// pulse time); tofNs: ticksToNs(event time) - pulseTimeNs; pixelId: 1-based, as in ev44.
  virtual void add(int64_t pulseTimeNs, int64_t tofNs, int32_t pixelId) = 0;
};

/// One neutron chosen by the framework. The source decides how it looks on the wire.
struct Neutron {
  uint32_t x = 0;                ///< column in the detector image, 0 <= x < imageWidth()
  uint32_t y = 0;                ///< row in the detector image, 0 <= y < imageHeight()
  readout::EssTime pulse;        ///< the datagram header's pulse time (ticks)
  int64_t pulseTimeNs = 0;       ///< ticksToNs(pulse)
  readout::EssTime eventTime;    ///< absolute event time (ticks): pulse + drawn TOF, on a tick
  int64_t eventTimeNs = 0;       ///< ticksToNs(eventTime)
  uint64_t index = 0;            ///< 0, 1, 2 ... over the run (for deterministic choices)
};

/// A detector family's readout encoder. The framework (Generator) owns datagrams, headers,
/// pulses, sequence numbers, pacing and the image pattern; a source only knows its geometry and
/// its readout layout. Implementations: CaenSource (caen), Vmm3Source (vmm3).
/// A source is used by one thread; encodeEvent() runs on the hot path (no allocation).
class ReadoutSource {
public:
  virtual ~ReadoutSource() = default;

  /// ESS detector type written in every header (e.g. readout::kTypeLoki).
  [[nodiscard]] virtual uint8_t detectorType() const = 0;
  /// Size of the 2-D detector image that patterns are drawn on; pixel ids are the source's
  /// business, but conventionally pixel = y * imageWidth() + x + 1.
  [[nodiscard]] virtual uint32_t imageWidth() const = 0;
  [[nodiscard]] virtual uint32_t imageHeight() const = 0;
  /// Upper bound of the bytes encodeEvent() may write for one neutron (noise included). The
  /// framework starts a new datagram when less than this is left.
  [[nodiscard]] virtual size_t maxEventBytes() const = 0;
  /// Writes the readouts of one neutron (and any noise readouts that go with it) into `out`,
  /// reports the event to `truth` (once, unless the neutron cannot be encoded) and returns the
  /// bytes written. Return 0 (and report nothing) for a position the geometry cannot show.
  virtual size_t encodeEvent(const Neutron &neutron, std::span<uint8_t> out,
                             TruthSink &truth) = 0;
  /// Readouts written so far (for progress and the summary).
  [[nodiscard]] virtual uint64_t readouts() const = 0;
};

/// Builds the source for `detector` ("caen", "vmm3", ...) from the instrument JSON (the same
/// file the module reads with `efu -d NAME --config FILE`; `configSource` names it in errors).
/// `seed` makes runs reproducible. Throws std::invalid_argument for an unknown detector and
/// sdk::ConfigError for a bad configuration. Defined in Sources.cpp, the one place to register
/// a new source.
std::unique_ptr<ReadoutSource> makeSource(const std::string &detector, const nlohmann::json &config,
                                          const std::string &configSource, uint64_t seed);

/// Names makeSource() accepts, comma-separated (for --help and error messages).
std::string sourceNames();

} // namespace efu::readoutgen
