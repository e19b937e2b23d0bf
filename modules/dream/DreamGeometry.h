// SPDX-License-Identifier: BSD-2-Clause
// The CDT readout and what it becomes: the parser's checks, the (ring, FEN) checks, and the pixel
// of every DREAM, MAGIC and HEIMDAL part as the ESS EFU computes it (its geometry classes under
// src/modules/dream/geometry/ are the definition; our tests hold its geometry tests' tables).
// Inline: this is the hot path.
#pragma once

#include "modules/dream/DreamConfig.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>

namespace efu::dream {

#pragma pack(push, 1)
/// One CDT readout after the ESS header (16 bytes, little-endian).
struct CdtReadout {
  uint8_t fiber = 0;
  uint8_t fen = 0;
  uint16_t length = 0; ///< must be 16
  uint32_t timeHigh = 0;
  uint32_t timeLow = 0;
  uint8_t om = 0;      ///< operating mode (not used)
  uint8_t unit = 0;    ///< SUMO (3..6) of an endcap, cuboid (0, 1) of HR/SANS
  uint8_t cathode = 0; ///< strips
  uint8_t anode = 0;   ///< wires
};
#pragma pack(pop)
static_assert(sizeof(CdtReadout) == 16);
constexpr size_t kReadoutBytes = sizeof(CdtReadout);
/// The parser's limits (the ESS EFU's DataParser).
constexpr uint8_t kMaxFiber = 23;
constexpr uint8_t kMaxReadoutFen = 12;

/// Why a readout gets no pixel (after the parser took it), in the order the ESS EFU checks.
enum class Reject : uint8_t {
  None,
  Fen,      ///< FEN > 11: geometry.fen_errors (and geometry.validation_errors)
  Config,   ///< ring or FEN 11, or no Config entry: geometry.config_errors (and validation)
  Sector,   ///< the part's sector too high: <part>.geometry.max_sector_errors (and pixel_errors)
  Sumo,     ///< endcap unit not a SUMO 3..6: <part>.geometry.sumo_id_errors (and pixel_errors)
  Cassette, ///< cassette beyond the SUMO's or PA's: <part>.geometry.cassette_id_errors (and pixel)
  Index,    ///< no cuboid of that index: <part>.geometry.index_errors (and pixel_errors)
  Outside,  ///< outside the part's logical geometry: geometry.pixel_errors
  Count_
};
constexpr size_t kRejects = static_cast<size_t>(Reject::Count_);

/// The first check of a readout that passed the parser: the ESS EFU's validation of ring and
/// FEN. Its Config reader allows rings and FENs up to 11, but its validation refuses 11 itself
/// (geometry.config_errors): DreamInst.json's Ring 0 FEN 11 and mantle.json's Ring 6 FEN 11 are
/// refused there, and here.
inline Reject validate(const DreamConfig &c, const CdtReadout &r) noexcept {
  const uint8_t ring = r.fiber / 2; // the parser took fibers up to 23: rings up to 11
  if (r.fen > kMaxFen) {
    return Reject::Fen;
  }
  if (ring >= kMaxRing || r.fen >= kMaxFen || !c.parts[slotOf(ring, r.fen)].used) {
    return Reject::Config;
  }
  return Reject::None;
}

/// A logical geometry: nx × ny pixels numbered 1 + y·nx + x, after `offset` (ESS ICD values).
struct Panel {
  uint32_t offset;
  uint32_t nx;
  uint32_t ny;
};
constexpr Panel kFwEndCap{0, 280, 256};
constexpr Panel kBwEndCap{71680, 616, 256};
constexpr Panel kDreamMantle{229376, 256, 1920};
constexpr Panel kSans{720896, 112, 3584};
constexpr Panel kHr{1122304, 112, 3584};
constexpr Panel kFrDetector{0, 128, 1920};
constexpr Panel kPaDetector{245760, 256, 512};
constexpr Panel kHeimdalMantle{0, 144, 2048};

constexpr Panel panelOf(PartType t) noexcept {
  switch (t) {
  case PartType::BwEndCap:
    return kBwEndCap;
  case PartType::FwEndCap:
    return kFwEndCap;
  case PartType::DreamMantle:
    return kDreamMantle;
  case PartType::HR:
    return kHr;
  case PartType::SANS:
    return kSans;
  case PartType::FRDetector:
    return kFrDetector;
  case PartType::PADetector:
    return kPaDetector;
  case PartType::HeimdalMantle:
    return kHeimdalMantle;
  }
  return {0, 0, 0};
}

/// 1 + y·nx + x inside the panel (offset not added), 0 outside.
constexpr uint32_t local(const Panel &p, int64_t x, int64_t y) noexcept {
  if (x < 0 || y < 0 || x >= p.nx || y >= p.ny) {
    return 0;
  }
  return static_cast<uint32_t>(y * p.nx + x + 1);
}

/// The SUMO cassette of an endcap readout (the ESS EFU's formula per SUMO, into 8 bits).
constexpr uint8_t sumoCassette(uint8_t sumo, uint8_t anode, uint8_t cathode) noexcept {
  switch (sumo) {
  case 6:
    return static_cast<uint8_t>(-(anode / 32) + 2 * (cathode / 16));
  case 5:
    return static_cast<uint8_t>(anode / 32 + 2 * (cathode / 16));
  case 4:
    return static_cast<uint8_t>(anode / 32 + 2 * (cathode / 16) - 1);
  case 3:
    return static_cast<uint8_t>(anode / 32 + 2 * (cathode / 32));
  default:
    return 255;
  }
}

/// Endcap (SUMO) x of sector, SUMO, cassette and counter; −1 and `why` when refused.
constexpr int64_t sumoX(uint8_t sector, uint8_t sumo, uint8_t cassette, uint8_t counter,
                        Reject &why) noexcept {
  constexpr uint8_t kSumoOffset[7] = {0, 0, 0, 48, 36, 20, 0};
  constexpr uint8_t kSumoCassettes[7] = {0, 0, 0, 4, 6, 8, 10};
  if (sector > 22) {
    why = Reject::Sector;
    return -1;
  }
  if (sumo < 3 || sumo > 6) {
    why = Reject::Sumo;
    return -1;
  }
  if (cassette >= kSumoCassettes[sumo]) {
    why = Reject::Cassette;
    return -1;
  }
  return int64_t{sector} * 56 + kSumoOffset[sumo] + 2 * cassette + counter;
}

/// The endcap x of (SUMO, anode / 32, cathode / 16) without the sector: the SUMO's offset plus
/// twice the cassette, or −1 (not a SUMO 3..6) or −2 (a cassette the SUMO lacks). Built from
/// sumoCassette() and sumoX(), so the hot path needs no branch per SUMO.
inline constexpr std::array<int16_t, 8 * 8 * 16> kSumoXBase = [] {
  std::array<int16_t, 8 * 8 * 16> t{};
  for (uint8_t sumo = 0; sumo < 8; ++sumo) {
    for (uint8_t a = 0; a < 8; ++a) {
      for (uint8_t c = 0; c < 16; ++c) {
        Reject why = Reject::None;
        const int64_t x = sumoX(
            0, sumo, sumoCassette(sumo, static_cast<uint8_t>(a * 32), static_cast<uint8_t>(c * 16)),
            0, why);
        t[size_t{sumo} * 128 + a * 16 + c] = static_cast<int16_t>(x >= 0                ? x
                                                                  : why == Reject::Sumo ? -1
                                                                                        : -2);
      }
    }
  }
  return t;
}();

constexpr uint32_t sumoPixel(const Panel &p, const Part &part, const CdtReadout &r,
                             Reject &why) noexcept {
  if (part.index > 22) {
    why = Reject::Sector;
    return 0;
  }
  const int16_t base =
      r.unit > 7 ? int16_t{-1}
                 : kSumoXBase[size_t{r.unit} * 128 + (r.anode >> 5) * 16 + (r.cathode >> 4)];
  if (base < 0) {
    why = base == -1 ? Reject::Sumo : Reject::Cassette;
    return 0;
  }
  const int64_t x = int64_t{part.index} * 56 + base + (r.anode >> 4) % 2;
  const int64_t y = int64_t{r.cathode % 16} * 16 + r.anode % 16;
  return local(p, x, y);
}

/// Where each cuboid of HR and SANS sits (its x, y in units of pixels) and how it is turned
/// (quarter turns clockwise); from the ESS EFU's Cuboid tables.
struct CuboidPlace {
  int16_t x, y;
  uint8_t turns;
};
constexpr CuboidPlace kHrCuboids[] = {
    {32, 0, 0},  {48, 0, 1},  {64, 0, 1},  {16, 16, 0}, {32, 16, 0}, {48, 16, 1}, {64, 16, 1},
    {80, 16, 1}, {0, 32, 0},  {16, 32, 0}, {32, 32, 0}, {48, 32, 1}, {64, 32, 1}, {80, 32, 1},
    {96, 32, 1}, {0, 48, 0},  {16, 48, 0}, {32, 48, 0}, {64, 48, 2}, {80, 48, 2}, {96, 48, 2},
    {0, 64, 3},  {16, 64, 3}, {32, 64, 3}, {64, 64, 2}, {80, 64, 2}, {96, 64, 2}, {16, 80, 3},
    {32, 80, 3}, {64, 80, 2}, {80, 80, 2}, {32, 96, 3}, {64, 96, 2}};
constexpr CuboidPlace kSansCuboids[] = {
    {32, 0, 0},  {48, 0, 1},  {64, 0, 1},  {16, 16, 0}, {32, 16, 0}, {48, 16, 1},
    {64, 16, 1}, {80, 16, 1}, {0, 32, 0},  {16, 32, 0}, {32, 32, 0}, {48, 32, 1},
    {64, 32, 1}, {80, 32, 1}, {96, 32, 1}, {0, 48, 0},  {16, 48, 0}, {32, 48, 0},
    {64, 48, 2}, {80, 48, 2}, {96, 48, 2}, {0, 64, 3},  {16, 64, 3}, {32, 64, 3},
    {48, 64, 3}, {64, 64, 2}, {80, 64, 2}, {96, 64, 2}, {16, 80, 3}, {32, 80, 3},
    {48, 80, 3}, {64, 80, 2}, {80, 80, 2}, {32, 96, 3}, {48, 96, 3}, {64, 96, 2}};

/// (x, y) of a 16 × 16 cuboid turned `turns` quarter turns clockwise.
constexpr void turn(uint8_t turns, int &x, int &y) noexcept {
  const int x0 = x;
  const int y0 = y;
  switch (turns) {
  case 1:
    x = 15 - y0;
    y = x0;
    break;
  case 2:
    x = 15 - x0;
    y = 15 - y0;
    break;
  case 3:
    x = y0;
    y = 15 - x0;
    break;
  default:
    break;
  }
}

/// A cuboid's place and turn as one affine map of the unturned (x, y): x' = x0 + xx·x + xy·y,
/// y' = y0 + yx·x + yy·y (built from turn(), so the hot path needs no branch per turn).
struct CuboidMap {
  int16_t x0, y0;
  int8_t xx, xy, yx, yy;
};
constexpr CuboidMap mapOf(const CuboidPlace &place) noexcept {
  int ox = 0, oy = 0, ux = 1, uy = 0, vx = 0, vy = 1;
  turn(place.turns, ox, oy); // (0, 0)
  turn(place.turns, ux, uy); // (1, 0)
  turn(place.turns, vx, vy); // (0, 1)
  return {static_cast<int16_t>(place.x + ox), static_cast<int16_t>(place.y + oy),
          static_cast<int8_t>(ux - ox),       static_cast<int8_t>(vx - ox),
          static_cast<int8_t>(uy - oy),       static_cast<int8_t>(vy - oy)};
}
template <size_t N>
constexpr std::array<CuboidMap, N> mapsOf(const CuboidPlace (&places)[N]) noexcept {
  std::array<CuboidMap, N> out{};
  for (size_t i = 0; i < N; ++i) {
    out[i] = mapOf(places[i]);
  }
  return out;
}
inline constexpr auto kHrMaps = mapsOf(kHrCuboids);
inline constexpr auto kSansMaps = mapsOf(kSansCuboids);

constexpr uint32_t cuboidPixel(const Panel &p, PartType type, const Part &part, const CdtReadout &r,
                               Reject &why) noexcept {
  // Unit 0 is the entry's Index, unit 1 its Index2; any other unit is no cuboid.
  const uint8_t index = r.unit == 0 ? part.index : r.unit == 1 ? part.index2 : 255;
  const bool sans = type == PartType::SANS;
  if (index >= (sans ? kSansMaps.size() : kHrMaps.size())) {
    why = Reject::Index;
    return 0;
  }
  const CuboidMap &m = sans ? kSansMaps[index] : kHrMaps[index];
  const int x = 2 * (r.anode / 32 + 2 * (r.cathode / 32)) + (r.anode / 16) % 2;
  const int y = 15 - r.anode % 16;
  const int64_t gx = m.x0 + m.xx * x + m.xy * y;
  const int64_t gy = int64_t{7 * 16} * (r.cathode % 32) + m.y0 + m.yx * x + m.yy * y;
  return local(p, gx, gy);
}

/// A turned (x, y) offset of CuboidTable.
struct CuboidOffset {
  int8_t x, y;
};
/// The map of a cuboid turned `turns` times applied to (x, y), less its corner.
constexpr CuboidOffset cuboidOffset(uint8_t turns, int x, int y) noexcept {
  const CuboidMap m = mapOf({0, 0, turns});
  return {static_cast<int8_t>(m.xx * x + m.xy * y), static_cast<int8_t>(m.yx * x + m.yy * y)};
}
inline constexpr std::array<std::array<CuboidOffset, 256>, 4> kCuboidAnode = [] {
  std::array<std::array<CuboidOffset, 256>, 4> t{};
  for (uint8_t turns = 0; turns < 4; ++turns) {
    for (int a = 0; a < 256; ++a) {
      t[turns][static_cast<size_t>(a)] =
          cuboidOffset(turns, 2 * (a / 32) + (a / 16) % 2, 15 - a % 16);
    }
  }
  return t;
}();
inline constexpr std::array<std::array<CuboidOffset, 8>, 4> kCuboidCathode = [] {
  std::array<std::array<CuboidOffset, 8>, 4> t{};
  for (uint8_t turns = 0; turns < 4; ++turns) {
    for (int c = 0; c < 8; ++c) {
      t[turns][static_cast<size_t>(c)] = cuboidOffset(turns, 4 * c, 0);
    }
  }
  return t;
}();

/// cuboidPixel() by tables, for the module's hot path. The cuboid's x and y are sums of an
/// anode part (cassette half and counter: 2·(anode / 32) + (anode / 16) % 2, and 15 − anode % 16)
/// and a cathode part (4·(cathode / 32)), and a turn is linear, so each part's turned offset is
/// a table entry per turn; the cuboid of each (ring, FEN) and unit is looked up once, at the
/// start, instead of by unit and index per readout. Equal to cuboidPixel() for every readout
/// (tested over all of them).
class CuboidTable {
public:
  /// The cuboids of the file's entries of `type` (HR or SANS).
  CuboidTable(const DreamConfig &c, PartType type) noexcept : offset_(panelOf(type).offset) {
    const bool sans = type == PartType::SANS;
    for (size_t slot = 0; slot < kSlots; ++slot) {
      const Part &part = c.parts[slot];
      if (!part.used || part.type != type) {
        continue;
      }
      for (size_t unit = 0; unit < 2; ++unit) {
        const uint8_t index = unit == 0 ? part.index : part.index2;
        if (index >= (sans ? kSansMaps.size() : kHrMaps.size())) {
          continue; // no cuboid: Reject::Index
        }
        const CuboidPlace &place = sans ? kSansCuboids[index] : kHrCuboids[index];
        const CuboidMap m = mapOf(place);
        cuboids_[slot * 2 + unit] = {m.x0, m.y0, place.turns, true};
      }
    }
  }

  /// cuboidPixel() + the panel's offset (pixelOfType()) of a readout of the entry at `slot`.
  [[nodiscard]] uint32_t pixel(const CdtReadout &r, size_t slot, Reject &why) const noexcept {
    if (r.unit > 1) {
      why = Reject::Index;
      return 0;
    }
    const Cuboid &q = cuboids_[slot * 2 + r.unit];
    if (!q.valid) {
      why = Reject::Index;
      return 0;
    }
    const CuboidOffset a = kCuboidAnode[q.turns][r.anode];
    const CuboidOffset c = kCuboidCathode[q.turns][r.cathode >> 5];
    const int32_t x = q.x0 + a.x + c.x;
    const int32_t y = int32_t{kHr.nx} * (r.cathode & 31) + q.y0 + a.y + c.y;
    // HR and SANS panels have the same shape.
    if (static_cast<uint32_t>(x) >= kHr.nx || static_cast<uint32_t>(y) >= kHr.ny) {
      why = Reject::Outside;
      return 0;
    }
    return offset_ + static_cast<uint32_t>(y) * kHr.nx + static_cast<uint32_t>(x) + 1;
  }

private:
  struct Cuboid {
    int16_t x0 = 0, y0 = 0;
    uint8_t turns = 0;
    bool valid = false;
  };
  static_assert(kSans.nx == kHr.nx && kSans.ny == kHr.ny);

  uint32_t offset_;
  std::array<Cuboid, kSlots * 2> cuboids_{}; ///< by slot and unit (0, 1)
};

/// A mantle (DREAM's, MAGIC's forward detector): strip across, wire / mounting unit / cassette
/// / counter down.
constexpr uint32_t mantlePixel(const Panel &p, const Part &part, const CdtReadout &r) noexcept {
  const int64_t x = r.cathode % p.nx; // strips per cassette = the panel's width
  const int64_t y =
      int64_t{60} * (r.anode % 32) + 12 * part.index + 2 * part.index2 + (r.anode / 32) % 2;
  return local(p, x, y);
}

/// MAGIC's polarisation analyser.
constexpr uint32_t paPixel(const Panel &p, const Part &part, const CdtReadout &r,
                           Reject &why) noexcept {
  const int cassette = r.anode / 32 + 4 * (r.cathode / 64);
  if (part.index > 7) {
    why = Reject::Sector;
    return 0;
  }
  if (cassette >= 16) {
    why = Reject::Cassette;
    return 0;
  }
  const int64_t x = int64_t{part.index} * 32 + 2 * cassette + (r.anode / 16) % 2;
  const int64_t y = int64_t{r.cathode % 32} * 16 + r.anode % 16;
  return local(p, x, y);
}

/// HEIMDAL's mantle: mounting unit / cassette / counter across, wire and strip down.
constexpr uint32_t heimdalPixel(const Panel &p, const Part &part, const CdtReadout &r) noexcept {
  const int64_t x = int64_t{12} * part.index + 2 * part.index2 + (r.anode / 32) % 2;
  const int64_t y = r.cathode % 64 + int64_t{64} * (r.anode % 32);
  return local(p, x, y);
}

/// The global pixel of a readout of a part of type T (validate() passed), or 0 with `why` set
/// (Outside when the part's own checks passed). Offsets are the ESS ICD's.
template <PartType T>
constexpr uint32_t pixelOfType(const Part &part, const CdtReadout &r, Reject &why) noexcept {
  constexpr Panel p = panelOf(T);
  uint32_t pixel = 0;
  if constexpr (T == PartType::BwEndCap || T == PartType::FwEndCap) {
    pixel = sumoPixel(p, part, r, why);
  } else if constexpr (T == PartType::HR || T == PartType::SANS) {
    pixel = cuboidPixel(p, T, part, r, why);
  } else if constexpr (T == PartType::DreamMantle || T == PartType::FRDetector) {
    pixel = mantlePixel(p, part, r);
  } else if constexpr (T == PartType::PADetector) {
    pixel = paPixel(p, part, r, why);
  } else {
    pixel = heimdalPixel(p, part, r);
  }
  if (pixel == 0) {
    if (why == Reject::None) {
      why = Reject::Outside;
    }
    return 0;
  }
  return p.offset + pixel;
}

/// Calls f.template operator()<T>() with the part type `t` as a constant.
template <class F> constexpr decltype(auto) withPartType(PartType t, F &&f) {
  switch (t) {
  case PartType::BwEndCap:
    return f.template operator()<PartType::BwEndCap>();
  case PartType::FwEndCap:
    return f.template operator()<PartType::FwEndCap>();
  case PartType::DreamMantle:
    return f.template operator()<PartType::DreamMantle>();
  case PartType::HR:
    return f.template operator()<PartType::HR>();
  case PartType::SANS:
    return f.template operator()<PartType::SANS>();
  case PartType::FRDetector:
    return f.template operator()<PartType::FRDetector>();
  case PartType::PADetector:
    return f.template operator()<PartType::PADetector>();
  case PartType::HeimdalMantle:
    break;
  }
  return f.template operator()<PartType::HeimdalMantle>();
}

/// pixelOfType() of the part's type.
constexpr uint32_t pixelOf(const Part &part, const CdtReadout &r, Reject &why) noexcept {
  return withPartType(part.type, [&]<PartType T>() { return pixelOfType<T>(part, r, why); });
}

/// The image efu-dump draws: from the first pixel of the file's parts, as wide as its largest
/// part (a file of one kind of part is drawn exactly in its part's shape; in a mixed file the
/// largest part, and the others as their widths allow), as high as the last pixel needs.
struct ImageShape {
  uint32_t width = 1;
  uint32_t height = 1;
  uint32_t firstPixel = 1;
};
inline ImageShape imageShape(const DreamConfig &c) noexcept {
  uint64_t largest = 0;
  uint32_t width = 1;
  uint64_t first = UINT32_MAX;
  uint64_t end = 0; // one past the last pixel id
  for (size_t t = 0; t < kPartTypes; ++t) {
    if (!c.hasType[t]) {
      continue;
    }
    const Panel p = panelOf(static_cast<PartType>(t));
    const uint64_t size = uint64_t{p.nx} * p.ny;
    if (size > largest) {
      largest = size;
      width = p.nx;
    }
    first = std::min<uint64_t>(first, p.offset + 1);
    end = std::max<uint64_t>(end, p.offset + 1 + size);
  }
  if (largest == 0) {
    return {};
  }
  return {width, static_cast<uint32_t>((end - first + width - 1) / width),
          static_cast<uint32_t>(first)};
}

} // namespace efu::dream
