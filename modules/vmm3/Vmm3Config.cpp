// SPDX-License-Identifier: BSD-2-Clause
// The ESS Multi-Blade instrument file: key table, the Config entries and their checks.
#include "modules/vmm3/Vmm3Config.h"

#include "common/readout/EssReadout.h"
#include "common/reduction/BuilderKeys.h"
#include "common/sdk/CalibrationCheck.h"
#include "common/sdk/ModuleConfig.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace efu::vmm3 {

using sdk::ConfigType;

const EfuConfigKey kVmm3ConfigKeys[] = {
    {"Detector", ConfigType::String, nullptr,
     "Must be \"Freia\": the ESS EFU's Multi-Blade files all say so; the geometry is "
     "InstrumentGeometry's",
     1, 0},
    {"InstrumentGeometry", ConfigType::String, nullptr,
     "Freia, AMOR (also TBLMB's files) or Estia: the ESS logical geometry and the VMM-to-plane "
     "map",
     1, 0},
    {"Version", ConfigType::Integer, nullptr, "File format version; must be 1", 1, 1},
    {"Comment", ConfigType::String, nullptr, "Free text (required, as in the ESS EFU)", 1, 0},
    {"Date", ConfigType::String, nullptr, "Free text (required, as in the ESS EFU)", 1, 0},
    {"Info", ConfigType::String, nullptr, "Free text (required, as in the ESS EFU)", 1, 0},
    {"History", ConfigType::Array, "[]", "Free text lines, not read", 1, 0},
    {"VersionStr", ConfigType::String, "\"\"", "Free text, not read", 1, 0},
    {"WireChOffset", ConfigType::Integer, "16",
     "First wire channel; the ESS geometry fixes it at 16 (wires on channels 16..47)", 16, 16},
    {"Config", ConfigType::Array, nullptr,
     "The cassettes: [{\"CassetteNumber\": C, \"Ring\": 0..10, \"FEN\": 0..13, \"Hybrid\": "
     "0..10, \"HybridId\": \"<32 characters>\", \"Thresholds\": [[vmm0], [vmm1]]}, ...]",
     1, 0},
    readout::kMaxPulseTimeKey,
    {"MaxGapWire", ConfigType::Integer, "0",
     "Events whose wire plane spans more than its hits + this are rejected (events.wire_gaps)", 0,
     255},
    {"MaxGapStrip", ConfigType::Integer, "0",
     "Events whose strip plane spans more than its hits + this are rejected (events.strip_gaps)", 0,
     255},
    reduction::kSplitMultiEventsKey,
    reduction::kSplitLowKey,
    reduction::kSplitHighKey,
    reduction::kMatchingGapKey,
    reduction::kClusteringGapKey,
};
const size_t kVmm3ConfigKeyCount = std::size(kVmm3ConfigKeys);

readout::DetectorTypes Vmm3Config::detectorTypes() const noexcept {
  switch (layout) {
  case Layout::Freia:
    return {readout::kTypeFreia};
  case Layout::Amor:
    return {readout::kTypeFreia, readout::kTypeTblmb};
  case Layout::Estia:
    return {readout::kTypeEstia};
  }
  return {};
}

uint8_t Vmm3Config::detectorType() const noexcept {
  return layout == Layout::Estia ? readout::kTypeEstia : readout::kTypeFreia;
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  return s;
}

Layout layoutOf(const nlohmann::json &value, const sdk::CalibrationCheck &check) {
  const std::string &name = value.get_ref<const std::string &>();
  const std::string l = lower(name);
  if (l == "freia") {
    return Layout::Freia;
  }
  if (l == "amor") {
    return Layout::Amor;
  }
  if (name == "Estia") {
    return Layout::Estia;
  }
  if (l == "estia") {
    // The ESS EFU picks the ESTIA geometry ignoring case but places its cassettes only for
    // the exact spelling, so any other spelling gives wrong pixels there.
    check.fail("InstrumentGeometry", value, "write it \"Estia\", as the ESS EFU expects");
  }
  check.fail("InstrumentGeometry", value,
             "expected Freia, AMOR or Estia (TBLMB's files say AMOR; NMX and TREX are not "
             "Multi-Blade)");
}

Hybrid parseEntry(const nlohmann::json &entry, size_t index, Layout layout,
                  const sdk::CalibrationCheck &check) {
  const std::string path = fmt::format("Config[{}]", index);
  if (!entry.is_object()) {
    check.fail(path, entry, "expected an object");
  }
  check.keys(entry, path, {"CassetteNumber", "Ring", "FEN", "Hybrid", "HybridId", "Thresholds"});
  Hybrid h;
  h.cassette = static_cast<uint8_t>(
      check.integer(check.member(entry, path, "CassetteNumber"), path + ".CassetteNumber", 0,
                    layout == Layout::Freia  ? 31
                    : layout == Layout::Amor ? 13
                                             : 2 * kEstiaCassettesPerRow - 1));
  readHybridAddress(entry, path, check, h);
  const nlohmann::json &thresholds =
      check.array(check.member(entry, path, "Thresholds"), path + ".Thresholds", 2);
  for (size_t vmm = 0; vmm < 2; ++vmm) {
    const std::string tpath = fmt::format("{}.Thresholds[{}]", path, vmm);
    const nlohmann::json &one = check.array(thresholds[vmm], tpath, 1);
    h.threshold[vmm] =
        static_cast<int32_t>(check.integer(one[0], tpath + "[0]", INT32_MIN, INT32_MAX));
  }
  if (layout == Layout::Estia) {
    h.xOffset = static_cast<uint16_t>((h.cassette % kEstiaCassettesPerRow) * kWiresPerCassette);
    h.yOffset = static_cast<uint16_t>((h.cassette / kEstiaCassettesPerRow) * kStripsPerCassette);
  } else {
    h.yOffset = static_cast<uint16_t>(h.cassette * kWiresPerCassette);
  }
  return h;
}

} // namespace

Vmm3Config parseVmm3Config(const nlohmann::json &config, const std::string &source) {
  const sdk::CalibrationCheck check(source, "");
  Vmm3Config c;
  const nlohmann::json &detector = config.at("Detector");
  if (detector.get<std::string>() != "Freia") {
    check.fail("Detector", detector,
               "the ESS Multi-Blade files (FREIA, AMOR, TBLMB, ESTIA) say \"Freia\"; this module "
               "serves no other VMM3 detector yet");
  }
  c.geometryName = config.at("InstrumentGeometry").get<std::string>();
  c.layout = layoutOf(config.at("InstrumentGeometry"), check);
  c.maxPulseTimeNs = config.at("MaxPulseTimeNS").get<int64_t>();
  c.maxGapWire = config.at("MaxGapWire").get<uint8_t>();
  c.maxGapStrip = config.at("MaxGapStrip").get<uint8_t>();
  c.splitMultiEvents = config.at("SplitMultiEvents").get<bool>();
  c.coefficientLow = config.at("SplitMultiEventsCoefficientLow").get<float>();
  c.coefficientHigh = config.at("SplitMultiEventsCoefficientHigh").get<float>();
  c.matchingTimeGapNs = config.at("MaxMatchingTimeGap").get<uint16_t>();
  c.clusteringTimeGapNs = config.at("MaxClusteringTimeGap").get<uint16_t>();
  c.slots.fill(-1);
  const nlohmann::json &entries = config.at("Config");
  if (entries.empty()) {
    check.fail("Config", entries, "no cassettes: at least one entry is needed");
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    Hybrid h = parseEntry(entries[i], i, c.layout, check);
    int16_t &slot =
        c.slots[(static_cast<size_t>(h.ring) * (kMaxFen + 1) + h.fen) * (kMaxHybrid + 1) +
                h.hybrid];
    if (slot >= 0) {
      check.fail(fmt::format("Config[{}]", i), entries[i],
                 fmt::format("Ring {} FEN {} Hybrid {} is Config[{}] already", h.ring, h.fen,
                             h.hybrid, slot));
    }
    for (size_t j = 0; j < c.hybrids.size(); ++j) {
      if (c.hybrids[j].hybridId == h.hybridId) {
        check.fail(fmt::format("Config[{}].HybridId", i), entries[i]["HybridId"],
                   fmt::format("Config[{}] has it too", j));
      }
    }
    slot = static_cast<int16_t>(c.hybrids.size());
    c.hybrids.push_back(std::move(h));
  }
  return c;
}

Vmm3Config loadVmm3Config(const std::string &path) {
  const nlohmann::json validated = validateModuleConfig(
      "vmm3", kVmm3ConfigKeys, kVmm3ConfigKeyCount, readConfigFile(path), path);
  return parseVmm3Config(validated, path);
}

} // namespace efu::vmm3
