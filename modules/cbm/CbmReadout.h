// SPDX-License-Identifier: BSD-2-Clause
// The ESS common beam monitor readout (20 bytes after the ESS header) and its field checks.
#pragma once

#include "common/readout/EssHeader.h"
#include "common/readout/EssReadout.h"
#include "modules/cbm/CbmConfig.h"
#include "modules/cbm/CbmDivider.h"

#include <cstdint>
#include <cstring>

namespace efu::cbm {

#pragma pack(push, 1)
/// One readout, little-endian. The last four bytes depend on the type: EVENT_2D carries the
/// position (x, y); IBM the ADC summed by the electronics over the readout's period (24 bits)
/// and the number of readouts summed (MCASum); EVENT_0D does not use them.
struct CbmReadout {
  uint8_t fiber;
  uint8_t fen;
  uint16_t length; ///< 20
  uint32_t timeHigh;
  uint32_t timeLow;
  uint8_t type; ///< MonitorType: 1, 2 or 3
  uint8_t channel;
  uint16_t adc; ///< not used
  uint8_t last[4];

  [[nodiscard]] constexpr uint16_t x() const noexcept {
    return static_cast<uint16_t>(last[0] | last[1] << 8);
  }
  [[nodiscard]] constexpr uint16_t y() const noexcept {
    return static_cast<uint16_t>(last[2] | last[3] << 8);
  }
  /// IBM: the summed ADC (bytes 16..18).
  [[nodiscard]] constexpr uint32_t nadc() const noexcept {
    return static_cast<uint32_t>(last[0]) | static_cast<uint32_t>(last[1]) << 8 |
           static_cast<uint32_t>(last[2]) << 16;
  }
  /// IBM: how many readouts the ADC sums (byte 19).
  [[nodiscard]] constexpr uint8_t mcaSum() const noexcept { return last[3]; }
  void setPosition(uint16_t px, uint16_t py) noexcept {
    last[0] = static_cast<uint8_t>(px);
    last[1] = static_cast<uint8_t>(px >> 8);
    last[2] = static_cast<uint8_t>(py);
    last[3] = static_cast<uint8_t>(py >> 8);
  }
  /// IBM: the ADC (saturating at 24 bits, as the ESS generator writes it) and the count.
  void setNadc(uint32_t value, uint8_t sum) noexcept {
    value = value > 0xFFFFFF ? 0xFFFFFF : value;
    last[0] = static_cast<uint8_t>(value);
    last[1] = static_cast<uint8_t>(value >> 8);
    last[2] = static_cast<uint8_t>(value >> 16);
    last[3] = sum;
  }
};
#pragma pack(pop)
static_assert(sizeof(CbmReadout) == 20, "a CBM readout is 20 bytes");

constexpr size_t kReadoutBytes = sizeof(CbmReadout);

/// Why the parser refused a readout, in the order the ESS EFU checks (Ok: it did not).
enum class ReadoutError : uint8_t {
  Ok,
  Fiber,      ///< parser.readout.errors.fiber: fiber > 23
  Fen,        ///< parser.readout.errors.fen: FEN > 23
  DataLength, ///< parser.readout.errors.datalen: length field != 20
  TimeFrac,   ///< parser.readout.errors.timefrac: time low > 88 052 499
  Type,       ///< parser.readout.errors.type: type not 1, 2 or 3 (BEER: not 2)
  Count_
};
static_assert(static_cast<int>(ReadoutError::TimeFrac) ==
                  static_cast<int>(readout::CommonReadoutError::TimeFrac),
              "the common checks come first, in readout::CommonReadoutError's order");

/// The last part of the counter parser.readout.errors.<name>.
constexpr const char *readoutErrorName(ReadoutError e) noexcept {
  switch (e) {
  case ReadoutError::Ok:
  case ReadoutError::Fiber:
  case ReadoutError::Fen:
  case ReadoutError::DataLength:
  case ReadoutError::TimeFrac:
    return readout::commonReadoutErrorName(static_cast<readout::CommonReadoutError>(e));
  case ReadoutError::Type:
    return "type";
  case ReadoutError::Count_:
    break;
  }
  return "?";
}

/// The parser's checks of one readout, first failing one counted. `event2DOnly` (BEER): a type
/// other than EVENT_2D is refused as ReadoutError::Type too.
constexpr ReadoutError checkReadout(const CbmReadout &r, bool event2DOnly = false) noexcept {
  if (const auto e = readout::checkCommonFields(r); e != readout::CommonReadoutError::Ok) {
    return static_cast<ReadoutError>(e);
  }
  if (r.type < static_cast<uint8_t>(MonitorType::Event0D) ||
      r.type > static_cast<uint8_t>(MonitorType::Ibm) ||
      (event2DOnly && r.type != static_cast<uint8_t>(MonitorType::Event2D))) {
    return ReadoutError::Type;
  }
  return ReadoutError::Ok;
}

/// Why a parsed readout failed the geometry (the ESS EFU's order; each also counts
/// geometry.validation_errors).
enum class GeometryError : uint8_t {
  Ring,        ///< geometry.ring_errors: fiber / 2 > MaxRing
  MonitorRing, ///< geometry.monitor_ring_mismatch_errors: fiber / 2 != MonitorRing
  Fen,         ///< geometry.fen_errors: FEN > MaxFENId
  Topology,    ///< geometry.topology_errors: no Topology entry for (FEN, Channel)
  Type,        ///< geometry.type_mismatch_errors: type != the entry's Type
  XPos,        ///< geometry.xpos_errors: EVENT_2D x >= Width
  YPos,        ///< geometry.ypos_errors: EVENT_2D y >= Height
  Count_
};

constexpr const char *geometryErrorCounter(GeometryError e) noexcept {
  switch (e) {
  case GeometryError::Ring:
    return "geometry.ring_errors";
  case GeometryError::MonitorRing:
    return "geometry.monitor_ring_mismatch_errors";
  case GeometryError::Fen:
    return "geometry.fen_errors";
  case GeometryError::Topology:
    return "geometry.topology_errors";
  case GeometryError::Type:
    return "geometry.type_mismatch_errors";
  case GeometryError::XPos:
    return "geometry.xpos_errors";
  case GeometryError::YPos:
    return "geometry.ypos_errors";
  case GeometryError::Count_:
    break;
  }
  return "?";
}

/// The geometry checks of a parsed readout; `slot` gets the Topology index when it passes.
inline GeometryError checkGeometry(const CbmConfig &c, const CbmReadout &r,
                                   int16_t &slot) noexcept {
  const auto ring = static_cast<uint8_t>(r.fiber / 2);
  if (ring > c.maxRing) {
    return GeometryError::Ring;
  }
  if (ring != c.monitorRing) {
    return GeometryError::MonitorRing;
  }
  if (r.fen > c.maxFenId) {
    return GeometryError::Fen;
  }
  slot = c.slot(r.fen, r.channel);
  if (slot < 0) {
    return GeometryError::Topology;
  }
  const Monitor &m = c.monitors[static_cast<size_t>(slot)];
  if (r.type != static_cast<uint8_t>(m.type)) {
    return GeometryError::Type;
  }
  if (m.type == MonitorType::Event2D) {
    if (r.x() >= m.width) {
      return GeometryError::XPos;
    }
    if (r.y() >= m.height) {
      return GeometryError::YPos;
    }
  }
  return GeometryError::Count_;
}

/// The pixel of an EVENT_2D readout that passed the geometry: y * Width + x + 1 + PixelOffset.
constexpr uint32_t pixel2D(const Monitor &m, uint16_t x, uint16_t y) noexcept {
  return static_cast<uint32_t>(y) * m.width + x + 1 + static_cast<uint32_t>(m.pixelOffset);
}

/// The value an IBM readout adds to its histogram: the summed ADC, divided (integer) by MCASum
/// when normalising and MCASum is not 0.
constexpr uint32_t ibmValue(const CbmReadout &r, bool normalize) noexcept {
  const uint32_t adc = r.nadc();
  return normalize && r.mcaSum() != 0 ? adc / r.mcaSum() : adc;
}

/// ibmValue() with the division by a table's multiply and no branch (the module's hot path,
/// where the last bytes of other types' readouts would mispredict one; the same value): MCASum 0,
/// or no normalising, divides by kByteDividers[0], by 1.
constexpr uint32_t ibmValueFast(const CbmReadout &r, bool normalize) noexcept {
  return kByteDividers[normalize ? r.mcaSum() : 0](r.nadc());
}

} // namespace efu::cbm
