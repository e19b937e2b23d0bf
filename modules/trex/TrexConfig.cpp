// SPDX-License-Identifier: BSD-2-Clause
// The ESS Multi-Grid instrument file: key table, Vessel_Config, the Config entries, their checks.
#include "modules/trex/TrexConfig.h"

#include "common/readout/EssReadout.h"
#include "common/sdk/CalibrationCheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

namespace efu::trex {

using sdk::ConfigType;

const EfuConfigKey kTrexConfigKeys[] = {
    {"Detector", ConfigType::String, nullptr, "Must be \"TREX\" (the ESS Multi-Grid files say so)",
     1, 0},
    {"InstrumentGeometry", ConfigType::String, nullptr,
     "TREX or LET (exactly so): the wire hybrid and the channel maps", 1, 0},
    {"Vessel_Config", ConfigType::Object, nullptr,
     "Vessels by id: {\"<id>\": {\"NumGrids\": N, \"Rotation\": bool, \"Short\": bool, "
     "\"XOffset\": n, \"YOffset\": n, \"MinADC\": n}}; Rotation is required, the rest optional",
     1, 0},
    {"Config", ConfigType::Array, nullptr,
     "The hybrids: [{\"Ring\": 0..10, \"VesselId\": \"<id>\", \"FEN\": 0..13, \"Hybrid\": 0..10, "
     "\"HybridId\": \"<32 characters>\"}, ...]",
     1, 0},
    readout::kMaxPulseTimeKey,
    {"DefaultMinADC", ConfigType::Integer, "50",
     "Readouts with an ADC below this are dropped (readouts.adc_below_min), unless the vessel "
     "sets MinADC",
     0, 65535},
    {"SizeX", ConfigType::Integer, "384",
     "Pixels in x (wire columns); SizeX x SizeY x SizeZ at most 2^31 - 2 (ev44 pixel ids are "
     "int32)",
     1, 65535},
    {"SizeY", ConfigType::Integer, "140", "Pixels in y (grids)", 1, 65535},
    {"SizeZ", ConfigType::Integer, "16", "Pixels in z (wire depth)", 1, 65535},
    {"MaxGridsSpan", ConfigType::Integer, "3",
     "Not read, as in the ESS EFU: events spanning more than 3 grids are rejected", 0, 65535},
    {"MaxGridsPerEvent", ConfigType::Integer, "3", "Not read, as in the ESS EFU", 0, 65535},
};
const size_t kTrexConfigKeyCount = std::size(kTrexConfigKeys);

namespace {

struct Vessel {
  bool rotated = false, isShort = false;
  uint16_t xOffset = 0, yOffset = 0, minAdc = 0;
};

Vessel parseVessel(const nlohmann::json &v, const std::string &path, uint16_t defaultMinAdc,
                   const sdk::CalibrationCheck &check) {
  if (!v.is_object()) {
    check.fail(path, v, "expected an object");
  }
  check.keys(v, path, {"NumGrids", "Rotation", "Short", "XOffset", "YOffset", "MinADC"});
  Vessel out;
  const nlohmann::json &rotation = check.member(v, path, "Rotation");
  if (!rotation.is_boolean()) {
    check.fail(path + ".Rotation", rotation, "expected true or false");
  }
  out.rotated = rotation.get<bool>();
  if (v.contains("Short")) {
    if (!v["Short"].is_boolean()) {
      check.fail(path + ".Short", v["Short"], "expected true or false");
    }
    out.isShort = v["Short"].get<bool>();
  }
  const auto u16 = [&](const char *key, uint16_t fallback) {
    return v.contains(key)
               ? static_cast<uint16_t>(check.integer(v[key], path + "." + key, 0, 65535))
               : fallback;
  };
  if (v.contains("NumGrids")) {
    (void)check.integer(v["NumGrids"], path + ".NumGrids", 0, 65535); // not used, as in ESS
  }
  out.xOffset = u16("XOffset", 0);
  out.yOffset = u16("YOffset", 0);
  out.minAdc = u16("MinADC", defaultMinAdc);
  return out;
}

bool placeholderId(const std::string &id) {
  return std::all_of(id.begin(), id.end(), [](char c) { return c == '0'; });
}

} // namespace

TrexConfig parseTrexConfig(const nlohmann::json &config, const std::string &source) {
  const sdk::CalibrationCheck check(source, "");
  TrexConfig c;
  const nlohmann::json &detector = config.at("Detector");
  if (detector.get<std::string>() != "TREX") {
    check.fail("Detector", detector,
               "the ESS Multi-Grid files (TREX, LET) say \"TREX\", as the ESS EFU requires");
  }
  const nlohmann::json &geometry = config.at("InstrumentGeometry");
  c.geometryName = geometry.get<std::string>();
  if (c.geometryName == "TREX") {
    c.instrument = Instrument::Trex;
  } else if (c.geometryName == "LET") {
    c.instrument = Instrument::Let;
  } else {
    check.fail("InstrumentGeometry", geometry,
               "expected \"TREX\" or \"LET\" (the ESS EFU compares exactly)");
  }
  c.maxPulseTimeNs = config.at("MaxPulseTimeNS").get<int64_t>();
  c.defaultMinAdc = config.at("DefaultMinADC").get<uint16_t>();
  c.sizeX = config.at("SizeX").get<uint16_t>();
  c.sizeY = config.at("SizeY").get<uint16_t>();
  c.sizeZ = config.at("SizeZ").get<uint16_t>();
  // Pixel ids 1 .. SizeX * SizeY * SizeZ in ev44's int32 (issue 37: LET with 65535 x 65535 x 16
  // gave pixel -362998363, counted as a good event).
  if (const uint64_t pixels = uint64_t{c.sizeX} * c.sizeY * c.sizeZ;
      pixels > uint64_t{INT32_MAX} - 1) {
    check.fail("SizeZ", config.at("SizeZ"),
               fmt::format("SizeX x SizeY x SizeZ = {} x {} x {} = {} pixels: ev44 pixel ids are "
                           "int32 (at most 2147483646 pixels)",
                           c.sizeX, c.sizeY, c.sizeZ, pixels));
  }
  const nlohmann::json &vessels = config.at("Vessel_Config");
  c.slots.fill(-1);
  const nlohmann::json &entries = config.at("Config");
  if (entries.empty()) {
    check.fail("Config", entries, "no hybrids: at least one entry is needed");
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const nlohmann::json &e = entries[i];
    const std::string path = fmt::format("Config[{}]", i);
    if (!e.is_object()) {
      check.fail(path, e, "expected an object");
    }
    check.keys(e, path, {"Ring", "VesselId", "FEN", "Hybrid", "HybridId"});
    TrexHybrid h;
    vmm3::readHybridAddress(e, path, check, h);
    const nlohmann::json &vid = check.member(e, path, "VesselId");
    h.vesselId = check.string(vid, path + ".VesselId");
    if (!vessels.contains(h.vesselId)) {
      check.fail(path + ".VesselId", vid, "no such vessel in Vessel_Config");
    }
    const Vessel v =
        parseVessel(vessels[h.vesselId], "Vessel_Config." + h.vesselId, c.defaultMinAdc, check);
    h.rotated = v.rotated;
    h.isShort = v.isShort;
    h.xOffset = v.xOffset;
    h.yOffset = v.yOffset;
    h.minAdc = v.minAdc;
    int16_t &slot = c.slots[(size_t{h.ring} * (kMaxFen + 1) + h.fen) * (kMaxHybrid + 1) + h.hybrid];
    if (slot >= 0) {
      check.fail(path, e,
                 fmt::format("Ring {} FEN {} Hybrid {} is Config[{}] already", h.ring, h.fen,
                             h.hybrid, slot));
    }
    // The ESS EFU refuses any repeated HybridId, so it refuses its own let.json, whose four
    // entries all say 32 zeros; efu takes all-zero ids as placeholders (nothing is calibrated
    // by id here) and refuses other repeats.
    if (!placeholderId(h.hybridId)) {
      for (size_t j = 0; j < c.hybrids.size(); ++j) {
        if (c.hybrids[j].hybridId == h.hybridId) {
          check.fail(path + ".HybridId", e.at("HybridId"), fmt::format("Config[{}] has it too", j));
        }
      }
    }
    slot = static_cast<int16_t>(c.hybrids.size());
    c.hybrids.push_back(std::move(h));
  }
  // Every vessel is checked, also one no entry uses.
  for (auto it = vessels.begin(); it != vessels.end(); ++it) {
    (void)parseVessel(it.value(), "Vessel_Config." + it.key(), c.defaultMinAdc, check);
  }
  return c;
}

} // namespace efu::trex
