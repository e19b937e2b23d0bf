// SPDX-License-Identifier: BSD-2-Clause
// The ESS TREX and LET channel maps, table by table from the ESS EFU's tests
// (ess-dmsc/event-formation-unit 8b399165, src/modules/trex/test/TREXGeometryTest.cpp and
// LETGeometryTest.cpp), and the shipped files' configuration.
#include "modules/trex/TrexGeometry.h"
#include "tests/modules/trex/TrexTestSupport.h"

#include <gtest/gtest.h>

namespace efu::trex {
namespace {

constexpr Instrument T = Instrument::Trex;
constexpr Instrument L = Instrument::Let;

// TREXGeometryTest.cpp: wires on hybrid 0, grids on hybrids 1 and 2.
TEST(TrexGeometry, EssTrexWireTable) {
  EXPECT_TRUE(isWire(T, 0));
  EXPECT_FALSE(isWire(T, 1));
  EXPECT_EQ(wireCoord(T, 0, 0, 0, 0, 32, 0, false), 0);
  EXPECT_EQ(wireCoord(T, 0, 0, 0, 1, 43, 168, false), 2763);
  EXPECT_EQ(wireCoord(T, 0, 0, 0, 1, 43, 300, true), 4923);
  EXPECT_EQ(wireCoord(T, 0, 1, 0, 1, 43, 300, true), 4827);
  EXPECT_EQ(wireCoord(T, 0, 1, 0, 1, 63, 372, false), 6143);
  for (uint8_t ch = 32; ch < 64; ++ch) { // VMM 0: channels 32..63 are wires 0..31
    EXPECT_EQ(wireCoord(T, 0, 0, 0, 0, ch, 0, false), ch - 32);
  }
  for (uint8_t ch = 0; ch < 64; ++ch) { // VMM 1: wires 32..95; odd FENs 96 further
    EXPECT_EQ(wireCoord(T, 0, 0, 0, 1, ch, 0, false), ch + 32);
    EXPECT_EQ(wireCoord(T, 0, 1, 0, 1, ch, 0, false), ch + 128);
  }
  EXPECT_EQ(wireCoord(T, 0, 0, 1, 0, 0, 0, false), kInvalidCoord);
  EXPECT_EQ(wireCoord(T, 0, 0, 0, 0, 10, 0, false), kInvalidCoord);
}

TEST(TrexGeometry, EssTrexGridTable) {
  EXPECT_EQ(gridCoord(T, 1, 0, 58, 0, false, false), 0);
  EXPECT_EQ(gridCoord(T, 2, 1, 5, 0, false, false), 139);
  EXPECT_EQ(gridCoord(T, 1, 0, 40, 50, true, true), 10);
  EXPECT_EQ(gridCoord(T, 1, 0, 40, 89, false, true), 129);
  for (uint8_t ch = 58; ch < 64; ++ch) {
    EXPECT_EQ(gridCoord(T, 1, 0, ch, 0, false, false), ch - 58);
  }
  for (uint8_t ch = 0; ch < 64; ++ch) {
    EXPECT_EQ(gridCoord(T, 1, 1, ch, 0, false, false), ch + 6);
    EXPECT_EQ(gridCoord(T, 2, 0, ch, 0, false, false), ch + 70);
  }
  for (uint8_t ch = 0; ch < 6; ++ch) {
    EXPECT_EQ(gridCoord(T, 2, 1, ch, 0, false, false), ch + 134);
  }
  EXPECT_EQ(gridCoord(T, 1, 0, 60, 0, false, true), kInvalidCoord);
  EXPECT_EQ(gridCoord(T, 2, 1, 6, 0, false, false), kInvalidCoord);
  EXPECT_EQ(gridCoord(T, 1, 0, 57, 0, false, false), kInvalidCoord);
  // A rotated short vessel without YOffset wraps below 0 in 16 bits; 65535 is invalid.
  EXPECT_EQ(gridCoord(T, 1, 0, 2, 0, true, true), 65534);
  EXPECT_EQ(gridCoord(T, 1, 0, 1, 0, true, true), kInvalidCoord);
}

// LETGeometryTest.cpp: wires on hybrid 1 with channel pairs swapped, grids on hybrid 0 (short).
TEST(TrexGeometry, EssLetTables) {
  EXPECT_TRUE(isWire(L, 1));
  EXPECT_FALSE(isWire(L, 0));
  EXPECT_EQ(wireCoord(L, 1, 0, 1, 0, 33, 0, false), 0);
  EXPECT_EQ(wireCoord(L, 1, 0, 1, 0, 32, 0, false), 1);
  EXPECT_EQ(wireCoord(L, 0, 0, 1, 0, 33, 0, false), 96); // even rings: the second block
  EXPECT_EQ(wireCoord(L, 0, 0, 1, 0, 0, 0, false), kInvalidCoord);
  EXPECT_EQ(wireCoord(L, 0, 0, 1, 0, 30, 0, false), kInvalidCoord);
  EXPECT_EQ(wireCoord(L, 0, 0, 1, 0, 31, 0, false), kInvalidCoord); // swapped to 30
  EXPECT_EQ(wireCoord(L, 1, 0, 1, 0, 33, 0, true), 176);            // column 0 -> 11
  EXPECT_EQ(gridCoord(L, 1, 0, 58, 0, false, false), 0);
  EXPECT_EQ(gridCoord(L, 2, 1, 5, 0, false, false), 139);
  EXPECT_EQ(gridCoord(L, 1, 0, 60, 0, false, true), kInvalidCoord);
  EXPECT_EQ(gridCoord(L, 0, 0, 0, 0, true, true), 0);
  EXPECT_EQ(gridCoord(L, 0, 0, 1, 0, true, true), kInvalidCoord);
}

TEST(TrexGeometry, ShippedFiles) {
  const TrexConfig trex = parseTrexConfig(test::shipped("trex.json"), "trex.json");
  EXPECT_EQ(trex.instrument, Instrument::Trex);
  EXPECT_EQ(trex.hybrids.size(), 198u);
  EXPECT_EQ(trex.sizeX, 384);
  EXPECT_EQ(trex.sizeY, 51);
  EXPECT_EQ(trex.sizeZ, 16);
  EXPECT_EQ(trex.maxPulseTimeNs, 71428570);
  EXPECT_EQ(trex.pixel(0, 0, 0), 1u);
  EXPECT_EQ(trex.pixel(383, 50, 15), 384u * 51 * 16);
  EXPECT_EQ(trex.pixel(0, 51, 0), 0u);
  const TrexHybrid &h = trex.hybrids[static_cast<size_t>(trex.slot(6, 2, 1))];
  EXPECT_EQ(h.vesselId, "25");
  EXPECT_TRUE(h.rotated);
  EXPECT_TRUE(h.isShort);
  EXPECT_EQ(h.xOffset, 300);
  EXPECT_EQ(h.yOffset, 51);
  EXPECT_EQ(h.minAdc, 50);
  const TrexConfig let = parseTrexConfig(test::shipped("let.json"), "let.json");
  EXPECT_EQ(let.instrument, Instrument::Let);
  EXPECT_EQ(let.hybrids.size(), 4u);
  EXPECT_EQ(let.hybrids[0].minAdc, 20);
  EXPECT_EQ(let.maxPulseTimeNs, 71438570);
  // (ring, FEN 13) and (ring + 1, FEN 0) share an ESS event builder.
  EXPECT_EQ(builderKey(6, 13), builderKey(7, 0));
}

TEST(TrexConfig, Refusals) {
  const nlohmann::json good = test::rawShipped("trex.json");
  EXPECT_EQ(test::configError(good), "");
  const auto with = [&](const std::function<void(nlohmann::json &)> &change) {
    nlohmann::json j = good;
    change(j);
    return test::configError(j);
  };
  EXPECT_NE(with([](auto &j) { j["Detector"] = "Freia"; }).find("Detector"), std::string::npos);
  EXPECT_NE(with([](auto &j) { j["InstrumentGeometry"] = "trex"; }).find("InstrumentGeometry"),
            std::string::npos);
  EXPECT_NE(with([](auto &j) { j["Config"][0]["Ring"] = 11; }).find("Config[0].Ring"),
            std::string::npos);
  EXPECT_NE(with([](auto &j) { j["Config"][0]["FEN"] = 14; }).find("Config[0].FEN"),
            std::string::npos);
  EXPECT_NE(with([](auto &j) { j["Config"][0]["Hybrid"] = 11; }).find("Config[0].Hybrid"),
            std::string::npos);
  EXPECT_NE(with([](auto &j) { j["Config"][0]["HybridId"] = "E55"; }).find("32 characters"),
            std::string::npos);
  EXPECT_NE(with([](auto &j) {
              j["Config"][1]["HybridId"] = j["Config"][0]["HybridId"];
            }).find("Config[0] has it too"),
            std::string::npos);
  EXPECT_NE(with([](auto &j) { j["Config"][1]["Hybrid"] = 0; }).find("is Config[0] already"),
            std::string::npos);
  EXPECT_NE(with([](auto &j) { j["Config"][0]["VesselId"] = "99"; }).find("no such vessel"),
            std::string::npos);
  EXPECT_NE(with([](auto &j) { j["Config"][0]["Extra"] = 1; }).find("unknown key"),
            std::string::npos);
  EXPECT_NE(with([](auto &j) { j["Vessel_Config"]["0"].erase("Rotation"); }).find("Rotation"),
            std::string::npos);
  EXPECT_NE(with([](auto &j) { j["Vessel_Config"]["0"]["Short"] = 1; }).find("Short"),
            std::string::npos);
  EXPECT_NE(with([](auto &j) { j["Vessel_Config"]["0"]["XOffset"] = -1; }).find("XOffset"),
            std::string::npos);
  EXPECT_NE(with([](auto &j) { j["Vessel_Config"]["7"]["MinADC"] = 70000; }).find("MinADC"),
            std::string::npos);
  EXPECT_NE(with([](auto &j) { j["Unknown"] = 1; }), "");
  EXPECT_NE(with([](auto &j) { j.erase("Config"); }), "");
  // Issue 37 item 10: pixel ids beyond int32 wrapped (LET 65535 x 65535 x 16 gave pixel
  // -362998363 as a good event); sizes 0 and no hybrids were accepted.
  const std::string big = with([](auto &j) {
    j["SizeX"] = 65535;
    j["SizeY"] = 65535;
    j["SizeZ"] = 16;
  });
  EXPECT_NE(big.find("SizeZ = 16"), std::string::npos) << big;
  EXPECT_NE(big.find("65535 x 65535 x 16 = 68717379600 pixels"), std::string::npos) << big;
  const std::string justFits = with([](auto &j) {
    j["SizeX"] = 65535;
    j["SizeY"] = 32767;
    j["SizeZ"] = 1;
  });
  EXPECT_EQ(justFits, "") << "2147385345 pixels fit";
  for (const char *key : {"SizeX", "SizeY", "SizeZ"}) {
    const std::string zero = with([key](auto &j) { j[key] = 0; });
    EXPECT_NE(zero.find(key), std::string::npos) << zero;
  }
  const std::string none = with([](auto &j) { j["Config"] = nlohmann::json::array(); });
  EXPECT_NE(none.find("Config = []"), std::string::npos) << none;
  EXPECT_NE(none.find("at least one entry"), std::string::npos) << none;
  // let.json repeats an all-zero HybridId (the ESS EFU refuses that): a placeholder here.
  EXPECT_EQ(test::configError(test::rawShipped("let.json")), "");
}

} // namespace
} // namespace efu::trex
