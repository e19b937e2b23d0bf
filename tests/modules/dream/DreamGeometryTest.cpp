// SPDX-License-Identifier: BSD-2-Clause
// The CDT geometry against the ESS EFU's expectations: each table below is taken from a geometry
// test of ess-dmsc/event-formation-unit (commit 8b399165), named above it; the values are the
// ESS tests' own, the exact pixels worked by hand from the ESS definitions where the ESS test
// only bounds them.
#include "modules/dream/DreamGeometry.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

namespace efu::dream {
namespace {

CdtReadout readout(uint8_t unit, uint8_t cathode, uint8_t anode, uint8_t fiber = 0,
                   uint8_t fen = 0) {
  CdtReadout r;
  r.fiber = fiber;
  r.fen = fen;
  r.length = kReadoutBytes;
  r.unit = unit;
  r.cathode = cathode;
  r.anode = anode;
  return r;
}

Part part(PartType type, uint8_t index = 0, uint8_t index2 = 0) {
  return Part{true, type, index, index2};
}

uint32_t pixel(const Part &p, const CdtReadout &r, Reject *why = nullptr) {
  Reject w = Reject::None;
  const uint32_t id = pixelOf(p, r, w);
  if (why != nullptr) {
    *why = w;
  }
  return id;
}

// src/modules/dream/test/DreamGeometryTest.cpp (PixelOffsets), MagicGeometryTest.cpp and
// HeimdalGeometryTest.cpp (PixelOffsets): the ICD's offsets of each part.
TEST(DreamGeometry, PixelOffsetsAreTheIcds) {
  EXPECT_EQ(panelOf(PartType::FwEndCap).offset, 0u);
  EXPECT_EQ(panelOf(PartType::BwEndCap).offset, 71680u);
  EXPECT_EQ(panelOf(PartType::DreamMantle).offset, 229376u);
  EXPECT_EQ(panelOf(PartType::SANS).offset, 720896u);
  EXPECT_EQ(panelOf(PartType::HR).offset, 1122304u);
  EXPECT_EQ(panelOf(PartType::FRDetector).offset, 0u);
  EXPECT_EQ(panelOf(PartType::PADetector).offset, 245760u);
  EXPECT_EQ(panelOf(PartType::HeimdalMantle).offset, 0u);
  // Each DREAM part ends where the next begins.
  EXPECT_EQ(kFwEndCap.nx * kFwEndCap.ny, kBwEndCap.offset);
  EXPECT_EQ(kBwEndCap.offset + kBwEndCap.nx * kBwEndCap.ny, kDreamMantle.offset);
  EXPECT_EQ(kDreamMantle.offset + kDreamMantle.nx * kDreamMantle.ny, kSans.offset);
  EXPECT_EQ(kSans.offset + kSans.nx * kSans.ny, kHr.offset);
  EXPECT_EQ(kFrDetector.nx * kFrDetector.ny, kPaDetector.offset);
}

// DreamGeometryTest.cpp (GetPixel): the ESS test bounds the pixels; here they are exact.
TEST(DreamGeometry, GetPixelOfEachDreamPart) {
  // BwEndCap, SUMO 6, anode 32, cathode 32: cassette −1 + 4 = 3, x = 6, y = 0.
  EXPECT_EQ(pixel(part(PartType::BwEndCap), readout(6, 32, 32)), 71680u + 7);
  // DreamMantle MU 0 cassette 0, anode 16 (wire 16), cathode 16: x = 16, y = 960.
  EXPECT_EQ(pixel(part(PartType::DreamMantle), readout(2, 16, 16)), 229376u + 960 * 256 + 17);
  // HR cuboid 0 (32, 0, not turned), anode 16 (counter 1, wire 0), cathode 16 (strip 16).
  EXPECT_EQ(pixel(part(PartType::HR), readout(0, 16, 16)), 1122304u + (112 * 16 + 15) * 112 + 34);
}

// CuboidTest.cpp (IndexSizes, Rotate0..3, OffsetRange, InvalidModuleType).
TEST(DreamGeometry, Cuboids) {
  EXPECT_EQ(std::size(kHrCuboids), 33u);
  EXPECT_EQ(std::size(kSansCuboids), 36u);
  for (uint8_t turns = 0; turns < 4; ++turns) {
    int x = 1, y = 12;
    turn(turns, x, y);
    if (turns != 0) {
      EXPECT_NE(std::make_tuple(x, y), std::make_tuple(1, 12)) << int(turns);
    }
    for (int k = 1; k < 4; ++k) {
      turn(turns, x, y);
    }
    EXPECT_EQ(std::make_tuple(x, y), std::make_tuple(1, 12)) << int(turns);
  }
  int x = 1, y = 12;
  turn(3, x, y);
  turn(1, x, y);
  EXPECT_EQ(std::make_tuple(x, y), std::make_tuple(1, 12));

  Reject why = Reject::None;
  EXPECT_NE(pixel(part(PartType::HR, 32), readout(0, 0, 0)), 0u);
  EXPECT_EQ(pixel(part(PartType::HR, 33), readout(0, 0, 0), &why), 0u);
  EXPECT_EQ(why, Reject::Index);
  EXPECT_NE(pixel(part(PartType::SANS, 35), readout(0, 0, 0)), 0u);
  EXPECT_EQ(pixel(part(PartType::SANS, 36), readout(0, 0, 0), &why), 0u);
  EXPECT_EQ(why, Reject::Index);
  // Unit 1 is Index2; other units are no cuboid (hr.json's Index2 255 is none either).
  EXPECT_NE(pixel(part(PartType::HR, 40, 2), readout(1, 0, 0)), 0u);
  EXPECT_EQ(pixel(part(PartType::HR, 0, 255), readout(1, 0, 0), &why), 0u);
  EXPECT_EQ(why, Reject::Index);
  EXPECT_EQ(pixel(part(PartType::HR), readout(2, 0, 0), &why), 0u);
  EXPECT_EQ(why, Reject::Index);
  // HR cuboid 32 at (64, 96) turned twice: cassette 0, counter 0, wire 0 → (15, 0) → (79, 96).
  EXPECT_EQ(pixel(part(PartType::HR, 32), readout(0, 0, 0)), 1122304u + 96 * 112 + 80);
}

// SUMOGeometryTest.cpp: sectors, SUMOs, cassettes and the ICD's box corners, on the backward
// endcap (616 × 256).
TEST(DreamGeometry, SumoSectorsAndIds) {
  Reject why = Reject::None;
  for (uint8_t sector : {23, 24}) {
    EXPECT_EQ(pixel(part(PartType::BwEndCap, sector), readout(6, 16, 16), &why), 0u);
    EXPECT_EQ(why, Reject::Sector);
  }
  for (uint8_t sector = 0; sector < 11; ++sector) {
    EXPECT_NE(pixel(part(PartType::BwEndCap, sector), readout(6, 16, 16)), 0u) << int(sector);
  }
  // Sectors 11..22 pass the SUMO's check but lie beyond the backward endcap's 616 columns.
  EXPECT_EQ(pixel(part(PartType::BwEndCap, 11), readout(6, 16, 16), &why), 0u);
  EXPECT_EQ(why, Reject::Outside);
  for (uint8_t sumo : {0, 1, 2, 7, 8}) {
    EXPECT_EQ(pixel(part(PartType::BwEndCap), readout(sumo, 16, 16), &why), 0u) << int(sumo);
    EXPECT_EQ(why, Reject::Sumo);
    why = Reject::None;
    EXPECT_EQ(sumoX(0, sumo, 1, 0, why), -1);
    EXPECT_EQ(why, Reject::Sumo);
  }
  for (uint8_t sumo : {3, 4, 5, 6}) {
    EXPECT_NE(pixel(part(PartType::BwEndCap), readout(sumo, 16, 16)), 0u) << int(sumo);
  }
}

TEST(DreamGeometry, SumoCassettesAndCorners) {
  // GetXInvalidCassette: the first cassette each SUMO lacks.
  for (const auto &[sumo, lacking] : {std::pair{3, 4}, {4, 6}, {5, 8}, {6, 10}}) {
    Reject why = Reject::None;
    EXPECT_NE(sumoX(0, sumo, 0, 0, why), -1);
    EXPECT_EQ(sumoX(0, sumo, lacking, 0, why), -1) << sumo;
    EXPECT_EQ(why, Reject::Cassette);
  }
  // TestingICD4BoxCorners.
  Reject why = Reject::None;
  EXPECT_EQ(sumoX(0, 6, 0, 0, why), 0);
  EXPECT_EQ(sumoX(22, 3, 3, 1, why), 1287);
  EXPECT_EQ(sumoX(3, 6, 0, 0, why), 168);
  EXPECT_EQ(sumoX(3, 3, 3, 1, why), 168 + 55);
  EXPECT_EQ(why, Reject::None);
}

// SUMOGeometryTest.cpp (CDTMappingSumo3..6): cassette of (SUMO, anode, cathode).
TEST(DreamGeometry, SumoCassetteMapping) {
  struct Row {
    uint8_t sumo, anode, cathode, cassette;
  };
  const Row rows[] = {
      {6, 0, 0, 0},   {6, 31, 15, 0}, {6, 0, 16, 2},  {6, 32, 16, 1}, {6, 0, 32, 4},
      {6, 32, 32, 3}, {6, 0, 48, 6},  {6, 32, 48, 5}, {6, 0, 64, 8},  {6, 32, 64, 7},
      {6, 32, 80, 9}, {5, 0, 0, 0},   {5, 32, 0, 1},  {5, 0, 16, 2},  {5, 32, 16, 3},
      {5, 0, 32, 4},  {5, 32, 32, 5}, {5, 0, 48, 6},  {5, 32, 48, 7}, {4, 32, 0, 0},
      {4, 0, 16, 1},  {4, 32, 16, 2}, {4, 0, 32, 3},  {4, 32, 32, 4}, {4, 0, 48, 5},
      {3, 0, 0, 0},   {3, 31, 15, 0}, {3, 32, 16, 1}, {3, 47, 31, 1}, {3, 0, 32, 2},
      {3, 31, 47, 2}, {3, 32, 48, 3}, {3, 47, 63, 3},
  };
  for (const Row &r : rows) {
    EXPECT_EQ(sumoCassette(r.sumo, r.anode, r.cathode), r.cassette)
        << int(r.sumo) << " " << int(r.anode) << " " << int(r.cathode);
  }
  // SUMO 6 anode 32 cathode 0 and SUMO 4 anode 0 cathode 0 go below cassette 0: refused.
  Reject why = Reject::None;
  EXPECT_EQ(pixel(part(PartType::FwEndCap), readout(6, 0, 32), &why), 0u);
  EXPECT_EQ(why, Reject::Cassette);
  EXPECT_EQ(pixel(part(PartType::FwEndCap), readout(4, 0, 0), &why), 0u);
  EXPECT_EQ(why, Reject::Cassette);
}

// PADetectorTest.cpp: sectors 0..7, cassettes 0..15 and the corners (256 × 512).
TEST(DreamGeometry, MagicPolarisationAnalyser) {
  Reject why = Reject::None;
  EXPECT_NE(pixel(part(PartType::PADetector, 7), readout(0, 16, 16)), 0u);
  EXPECT_EQ(pixel(part(PartType::PADetector, 8), readout(0, 16, 16), &why), 0u);
  EXPECT_EQ(why, Reject::Sector);
  // Cassette = anode / 32 + 4 · (cathode / 64): 16 and more is refused.
  EXPECT_NE(pixel(part(PartType::PADetector), readout(0, 192, 96)), 0u);        // 3 + 12 = 15
  EXPECT_EQ(pixel(part(PartType::PADetector), readout(0, 192, 128), &why), 0u); // 16
  EXPECT_EQ(why, Reject::Cassette);
  // TestingLogicalGeometryCorners: x 0 and 255, y 0 and 511.
  EXPECT_EQ(pixel(part(PartType::PADetector), readout(0, 0, 0)), 245760u + 1);
  EXPECT_EQ(pixel(part(PartType::PADetector, 7), readout(0, 255, 127)), 245760u + 511 * 256 + 256);
}

// MagicGeometryTest.cpp (GetPixel): FR pixels lie in 1..245760, PA pixels above.
TEST(DreamGeometry, MagicForwardDetector) {
  EXPECT_EQ(pixel(part(PartType::FRDetector), readout(0, 0, 0)), 1u);
  EXPECT_EQ(pixel(part(PartType::FRDetector), readout(0, 0, 0)), 1u);
  // 128 strips: cathode 200 is strip 72.
  EXPECT_EQ(pixel(part(PartType::FRDetector), readout(0, 200, 0)), 73u);
  EXPECT_EQ(pixel(part(PartType::PADetector), readout(0, 0, 0)), 245761u);
}

// HeimdalGeometryTest.cpp (GetPixel): anode 70, cathode 70.
TEST(DreamGeometry, HeimdalMantle) {
  EXPECT_EQ(pixel(part(PartType::HeimdalMantle, 0, 0), readout(0, 70, 70)), 56161u);
  EXPECT_EQ(pixel(part(PartType::HeimdalMantle, 1, 0), readout(0, 70, 70)), 56161u + 12);
  EXPECT_EQ(pixel(part(PartType::HeimdalMantle, 2, 0), readout(0, 70, 70)), 56161u + 24);
  EXPECT_EQ(pixel(part(PartType::HeimdalMantle, 11, 5), readout(0, 70, 70)), 56161u + 142);
  // Mounting unit 12 is beyond the 144 columns.
  Reject why = Reject::None;
  EXPECT_EQ(pixel(part(PartType::HeimdalMantle, 12, 0), readout(0, 70, 70), &why), 0u);
  EXPECT_EQ(why, Reject::Outside);
}

// The DREAM mantle: y = 60 · wire + 12 · MU + 2 · cassette + counter within 1920 rows.
TEST(DreamGeometry, DreamMantle) {
  // MU 4 cassette 5, anode 63 (counter 1, wire 31), cathode 255: the last pixel.
  EXPECT_EQ(pixel(part(PartType::DreamMantle, 4, 5), readout(0, 255, 63)),
            229376u + 1919 * 256 + 256);
  Reject why = Reject::None;
  EXPECT_EQ(pixel(part(PartType::DreamMantle, 5, 0), readout(0, 0, 31), &why), 0u); // row 1920
  EXPECT_EQ(why, Reject::Outside);
}

/// The ESS EFU's definitions read literally (SUMO, Cuboid): the hot path's tables must agree
/// with them for every readout.
uint32_t literalPixel(const Part &part, const CdtReadout &r, Reject &why) {
  const Panel p = panelOf(part.type);
  uint32_t pixel = 0;
  if (part.type == PartType::BwEndCap || part.type == PartType::FwEndCap) {
    const uint8_t cassette = sumoCassette(r.unit, r.anode, r.cathode);
    const int64_t x = sumoX(part.index, r.unit, cassette, (r.anode / 16) % 2, why);
    if (x >= 0) {
      pixel = local(p, x, int64_t{r.cathode % 16} * 16 + r.anode % 16);
    }
  } else if (part.type == PartType::HR || part.type == PartType::SANS) {
    const uint8_t index = r.unit == 0 ? part.index : r.unit == 1 ? part.index2 : 255;
    const bool sans = part.type == PartType::SANS;
    if (index >= (sans ? std::size(kSansCuboids) : std::size(kHrCuboids))) {
      why = Reject::Index;
    } else {
      const CuboidPlace &place = sans ? kSansCuboids[index] : kHrCuboids[index];
      const auto cassette = static_cast<uint8_t>(r.anode / 32 + 2 * (r.cathode / 32));
      int x = 2 * cassette + (r.anode / 16) % 2;
      int y = 15 - r.anode % 16;
      turn(place.turns, x, y);
      pixel = local(p, place.x + x, int64_t{112} * (r.cathode % 32) + place.y + y);
    }
  } else {
    return pixelOf(part, r, why); // the others have no table
  }
  if (pixel == 0) {
    why = why == Reject::None ? Reject::Outside : why;
    return 0;
  }
  return p.offset + pixel;
}

TEST(DreamGeometry, TheHotPathsTablesAgreeWithTheLiteralDefinitionForEveryReadout) {
  const std::pair<uint8_t, uint8_t> indices[] = {{0, 0}, {10, 4}, {22, 35}, {23, 255}, {32, 33}};
  for (const PartType type :
       {PartType::BwEndCap, PartType::FwEndCap, PartType::HR, PartType::SANS}) {
    for (const auto &[index, index2] : indices) {
      const Part p = part(type, index, index2);
      for (int unit = 0; unit < 10; ++unit) {
        for (int anode = 0; anode < 256; ++anode) {
          for (int cathode = 0; cathode < 256; ++cathode) {
            const CdtReadout r = readout(static_cast<uint8_t>(unit), static_cast<uint8_t>(cathode),
                                         static_cast<uint8_t>(anode));
            Reject fast = Reject::None, literal = Reject::None;
            const uint32_t a = pixelOf(p, r, fast);
            const uint32_t b = literalPixel(p, r, literal);
            if (a != b || fast != literal) {
              FAIL() << partTypeName(type) << " " << int(index) << "/" << int(index2) << " unit "
                     << unit << " anode " << anode << " cathode " << cathode << ": " << a << " vs "
                     << b;
            }
          }
        }
      }
    }
  }
}

// The module's cuboid tables against pixelOf() for every cuboid index pair (valid, absent,
// out of range), every unit and every anode and cathode, HR and SANS.
TEST(DreamGeometry, CuboidTableAgreesWithPixelOfForEveryReadout) {
  for (const PartType type : {PartType::HR, PartType::SANS}) {
    DreamConfig c;
    std::vector<size_t> slots;
    for (int k = 0; k < 256; k += 2) { // index pairs (k, k + 1) and (k + 1, k) on the slots
      const size_t slot = static_cast<size_t>(k / 2) % kSlots;
      c.parts[slot] = part(type, static_cast<uint8_t>(k), static_cast<uint8_t>(255 - k));
      slots.push_back(slot);
    }
    c.parts[kSlots - 1] = part(type == PartType::HR ? PartType::SANS : PartType::HR, 1, 2);
    const CuboidTable table(c, type);
    for (const size_t slot : slots) {
      for (int unit = 0; unit < 256; unit += unit < 4 ? 1 : 37) {
        for (int anode = 0; anode < 256; ++anode) {
          for (int cathode = 0; cathode < 256; ++cathode) {
            const CdtReadout r = readout(static_cast<uint8_t>(unit), static_cast<uint8_t>(cathode),
                                         static_cast<uint8_t>(anode));
            Reject fast = Reject::None, reference = Reject::None;
            const uint32_t a = table.pixel(r, slot, fast);
            const uint32_t b = pixelOf(c.parts[slot], r, reference);
            if (a != b || fast != reference) {
              FAIL() << partTypeName(type) << " slot " << slot << " unit " << unit << " anode "
                     << anode << " cathode " << cathode << ": " << a << " vs " << b;
            }
          }
        }
      }
    }
  }
}

// The ESS validation: FENs above 11 (fen_errors); ring 11, FEN 11 and unconfigured pairs
// (config_errors).
TEST(DreamGeometry, RingAndFenValidation) {
  DreamConfig c;
  c.parts[slotOf(0, 0)] = part(PartType::BwEndCap);
  c.parts[slotOf(0, 11)] = part(PartType::BwEndCap);
  c.parts[slotOf(11, 0)] = part(PartType::BwEndCap);
  EXPECT_EQ(validate(c, readout(3, 0, 0, 0, 0)), Reject::None);
  EXPECT_EQ(validate(c, readout(3, 0, 0, 1, 0)), Reject::None); // fiber 1 is ring 0
  EXPECT_EQ(validate(c, readout(3, 0, 0, 0, 12)), Reject::Fen);
  EXPECT_EQ(validate(c, readout(3, 0, 0, 0, 11)), Reject::Config);
  EXPECT_EQ(validate(c, readout(3, 0, 0, 22, 0)), Reject::Config);
  EXPECT_EQ(validate(c, readout(3, 0, 0, 2, 0)), Reject::Config);
}

} // namespace
} // namespace efu::dream
