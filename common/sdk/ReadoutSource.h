// SPDX-License-Identifier: BSD-2-Clause
// The readout-source part of the module SDK: how a module tells readoutgen to encode one neutron
// as its readouts (EfuModuleDescriptor::createSource).
#pragma once

#include "common/readout/EssHeader.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace efu::sdk {

/// Where sources report the events a correct module must form (ground truth, `--truth FILE`).
/// Called once per neutron that will be sent; never for noise readouts.
class TruthSink {
public:
  virtual ~TruthSink() = default;
  /// pulseTimeNs: the pulse the event belongs to (ns since epoch, ticksToNs of the header's
  /// pulse time); tofNs: ticksToNs(event time) - pulseTimeNs; pixelId: 1-based, as in ev44.
  virtual void add(int64_t pulseTimeNs, int64_t tofNs, int32_t pixelId) = 0;
  // Appended with module ABI 4:
  /// The same for a source whose events go to several named outputs (ev44 source names, or
  /// da00 histograms whose entries are values rather than pixels): `source` names the output
  /// (a view that stays valid for the source's life) and `pixelId` is the pixel, or the value a
  /// histogram adds. Sources that use it say so with ReadoutSource::namesSources().
  virtual void addFrom(std::string_view source, int64_t pulseTimeNs, int64_t tofNs,
                       int32_t pixelId) {
    (void)source;
    add(pulseTimeNs, tofNs, pixelId);
  }
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

/// A pulse the framework starts (module ABI 6): for sources that announce pulses themselves.
struct Pulse {
  int64_t pulseTimeNs = 0;     ///< ticksToNs of the pulse (as Neutron::pulseTimeNs)
  int64_t prevPulseTimeNs = 0; ///< ticksToNs of the previous pulse
  uint64_t index = 0;          ///< 0, 1, 2 ... over the run
};

/// A detector family's readout encoder. The framework (readoutgen's Generator) owns datagrams,
/// headers, pulses, sequence numbers, pacing and the image pattern; a source only knows its
/// geometry and its readout layout. A module provides one by declaring `using Source = ...;`
/// (a class constructible from (config, configSource, seed)); see docs/modules.md.
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
  // Appended with module ABI 4:
  /// True when the source reports its truth with TruthSink::addFrom() (readoutgen then writes a
  /// source column in --truth).
  [[nodiscard]] virtual bool namesSources() const { return false; }
  // Appended with module ABI 6:
  /// False for a detector whose datagrams carry no ESS readout header (Timepix3): readoutgen
  /// then sends only what the source writes, and refuses header injections.
  [[nodiscard]] virtual bool essHeader() const { return true; }
  /// A datagram of the source's own that announces `pulse` (Timepix3: the EVR's), written into
  /// `out` (at least 64 bytes); readoutgen sends it right before the pulse's first readout
  /// datagram. Returns its size; 0 (the default) sends none. Called before the pulse's
  /// encodeEvent() calls.
  virtual size_t pulseDatagram(const Pulse &pulse, std::span<uint8_t> out) {
    (void)pulse;
    (void)out;
    return 0;
  }
};

} // namespace efu::sdk
