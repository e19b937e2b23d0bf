// SPDX-License-Identifier: BSD-2-Clause
// The ESS NMX instrument file: key table, the Config entries and their checks.
#include "modules/nmx/NmxConfig.h"

#include "common/readout/EssReadout.h"
#include "common/reduction/BuilderKeys.h"
#include "common/sdk/CalibrationCheck.h"
#include "common/sdk/ModuleConfig.h"

#include <fmt/format.h>

namespace efu::nmx {

using sdk::ConfigType;

const EfuConfigKey kNmxConfigKeys[] = {
    {"Detector", ConfigType::String, nullptr, "Must be \"NMX\" (the ESS EFU's NMX files)", 1, 0},
    {"InstrumentGeometry", ConfigType::String, nullptr,
     "Must be \"NMX\": the ESS NMX logical geometry", 1, 0},
    {"comment", ConfigType::String, "\"\"", "Free text, not read (mininmx.json has one)", 1, 0},
    {"Config", ConfigType::Array, nullptr,
     "The hybrids: [{\"Ring\": 0..10, \"FEN\": 0..13, \"Hybrid\": 0..10, \"HybridId\": \"<32 "
     "characters>\", \"Plane\": 0|1, \"Offset\": N, \"ReversedChannels\": bool, \"Panel\": "
     "0..3}, ...]; Plane, Offset, ReversedChannels and Panel default to 0, 0, false, 0",
     1, 0},
    readout::kMaxPulseTimeKey,
    {"DefaultMinADC", ConfigType::Integer, "50",
     "Readouts whose raw ADC (OTADC bits 0-9) is below this are dropped (geometry.adc_errors)", 0,
     65535},
    {"SizeX", ConfigType::Integer, "1280", "Image width: pixel = y * SizeX + x + 1", 1, 65535},
    {"SizeY", ConfigType::Integer, "1280", "Image height", 1, 65535},
    {"NumPanels", ConfigType::Integer, "4",
     "Event builders (one per panel; entries name panels 0..min(NumPanels, 4) - 1)", 1, 65535},
    {"MaxSpanX", ConfigType::Integer, "10",
     "Events whose x plane spans more coordinates are rejected (cluster.span.x_too_large)", 0,
     65535},
    {"MaxSpanY", ConfigType::Integer, "10",
     "Events whose y plane spans more coordinates are rejected (cluster.span.y_too_large)", 0,
     65535},
    {"MinSpanX", ConfigType::Integer, "1",
     "Events whose x plane spans fewer coordinates are rejected (cluster.span.x_too_small)", 0,
     65535},
    {"MinSpanY", ConfigType::Integer, "1",
     "Events whose y plane spans fewer coordinates are rejected (cluster.span.y_too_small)", 0,
     65535},
    {"MaxGapX", ConfigType::Integer, "10",
     "Read and not used, as in the ESS EFU (its NMX code checks no gap)", 0, 65535},
    {"MaxGapY", ConfigType::Integer, "10",
     "Read and not used, as in the ESS EFU (its NMX code checks no gap)", 0, 65535},
    reduction::kSplitMultiEventsKey,
    reduction::kSplitLowKey,
    reduction::kSplitHighKey,
    reduction::kMatchingGapKey,
    reduction::kClusteringGapKey,
};
const size_t kNmxConfigKeyCount = std::size(kNmxConfigKeys);

namespace {

/// An optional key of an entry: absent means the ESS default.
const nlohmann::json *optional(const nlohmann::json &entry, const char *key) {
  const auto it = entry.find(key);
  return it == entry.end() ? nullptr : &*it;
}

Hybrid parseEntry(const nlohmann::json &entry, size_t index, size_t panels,
                  const sdk::CalibrationCheck &check) {
  const std::string path = fmt::format("Config[{}]", index);
  if (!entry.is_object()) {
    check.fail(path, entry, "expected an object");
  }
  check.keys(entry, path,
             {"Ring", "FEN", "Hybrid", "HybridId", "Plane", "Offset", "ReversedChannels", "Panel"});
  Hybrid h;
  vmm3::readHybridAddress(entry, path, check, h);
  if (const nlohmann::json *v = optional(entry, "Plane")) {
    h.plane = static_cast<uint8_t>(check.integer(*v, path + ".Plane", 0, 1));
  }
  if (const nlohmann::json *v = optional(entry, "Offset")) {
    h.offset = static_cast<uint16_t>(check.integer(*v, path + ".Offset", 0, kMaxOffset));
  }
  if (const nlohmann::json *v = optional(entry, "ReversedChannels")) {
    if (!v->is_boolean()) {
      check.fail(path + ".ReversedChannels", *v, "expected true or false");
    }
    h.reversed = v->get<bool>();
  }
  if (const nlohmann::json *v = optional(entry, "Panel")) {
    h.panel = static_cast<uint8_t>(
        check.integer(*v, path + ".Panel", 0, static_cast<int64_t>(panels) - 1));
  }
  return h;
}

} // namespace

NmxConfig parseNmxConfig(const nlohmann::json &config, const std::string &source) {
  const sdk::CalibrationCheck check(source, "");
  NmxConfig c;
  for (const char *key : {"Detector", "InstrumentGeometry"}) {
    const nlohmann::json &v = config.at(key);
    if (v.get<std::string>() != "NMX") {
      check.fail(key, v, "the ESS NMX files say \"NMX\" (exactly so, as the ESS EFU requires)");
    }
  }
  c.maxPulseTimeNs = config.at("MaxPulseTimeNS").get<int64_t>();
  c.minAdc = config.at("DefaultMinADC").get<uint16_t>();
  c.sizeX = config.at("SizeX").get<uint16_t>();
  c.sizeY = config.at("SizeY").get<uint16_t>();
  c.numPanels = config.at("NumPanels").get<uint16_t>();
  c.maxSpanX = config.at("MaxSpanX").get<uint16_t>();
  c.maxSpanY = config.at("MaxSpanY").get<uint16_t>();
  c.minSpanX = config.at("MinSpanX").get<uint16_t>();
  c.minSpanY = config.at("MinSpanY").get<uint16_t>();
  c.splitMultiEvents = config.at("SplitMultiEvents").get<bool>();
  c.coefficientLow = config.at("SplitMultiEventsCoefficientLow").get<float>();
  c.coefficientHigh = config.at("SplitMultiEventsCoefficientHigh").get<float>();
  c.matchingTimeGapNs = config.at("MaxMatchingTimeGap").get<uint16_t>();
  c.clusteringTimeGapNs = config.at("MaxClusteringTimeGap").get<uint16_t>();
  if (uint64_t{c.sizeX} * c.sizeY > uint64_t{INT32_MAX} - 1) {
    check.fail("SizeY", config.at("SizeY"),
               fmt::format("SizeX x SizeY = {} pixels: ev44 pixel ids are int32",
                           uint64_t{c.sizeX} * c.sizeY));
  }
  c.slots.fill(-1);
  const nlohmann::json &entries = config.at("Config");
  if (entries.empty()) {
    check.fail("Config", entries, "no hybrids: at least one entry is needed");
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    Hybrid h = parseEntry(entries[i], i, c.builders(), check);
    for (size_t j = 0; j < c.hybrids.size(); ++j) {
      if (c.hybrids[j].hybridId == h.hybridId) {
        check.fail(fmt::format("Config[{}].HybridId", i), entries[i]["HybridId"],
                   fmt::format("Config[{}] has it too", j));
      }
    }
    int16_t &slot =
        c.slots[(static_cast<size_t>(h.ring) * (kMaxFen + 1) + h.fen) * (kMaxHybrid + 1) +
                h.hybrid];
    if (slot >= 0) {
      check.fail(fmt::format("Config[{}]", i), entries[i],
                 fmt::format("Ring {} FEN {} Hybrid {} is Config[{}] already", h.ring, h.fen,
                             h.hybrid, slot));
    }
    slot = static_cast<int16_t>(c.hybrids.size());
    c.hybrids.push_back(std::move(h));
  }
  // Each hybrid covers Offset .. Offset + 127 of its panel's plane (reversed or not); the ESS
  // EFU refuses a file where two of them share a coordinate.
  for (size_t i = 0; i < c.hybrids.size(); ++i) {
    const Hybrid &a = c.hybrids[i];
    for (size_t j = 0; j < i; ++j) {
      const Hybrid &b = c.hybrids[j];
      if (a.panel == b.panel && a.plane == b.plane && a.offset < b.offset + 2 * kStrips &&
          b.offset < a.offset + 2 * kStrips) {
        check.fail(fmt::format("Config[{}].Offset", i), entries[i].value("Offset", 0),
                   fmt::format("coordinates {}..{} of panel {} plane {} overlap Config[{}]'s "
                               "(Offset {})",
                               a.offset, a.offset + 2 * kStrips - 1, a.panel, a.plane, j,
                               b.offset));
      }
    }
  }
  return c;
}

NmxConfig loadNmxConfig(const std::string &path) {
  const nlohmann::json validated =
      validateModuleConfig("nmx", kNmxConfigKeys, kNmxConfigKeyCount, readConfigFile(path), path);
  return parseNmxConfig(validated, path);
}

} // namespace efu::nmx
