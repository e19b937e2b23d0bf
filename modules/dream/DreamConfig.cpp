// SPDX-License-Identifier: BSD-2-Clause
// The ESS CDT instrument file: key table, the Config entries and their checks.
#include "modules/dream/DreamConfig.h"

#include "common/readout/EssHeader.h"
#include "common/sdk/CalibrationCheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace efu::dream {

using sdk::ConfigType;

const EfuConfigKey kDreamConfigKeys[] = {
    {"Detector", ConfigType::String, nullptr,
     "DREAM, MAGIC or HEIMDAL (any case): the instrument, its header type and its parts", 1, 0},
    {"MaxPulseTimeDiffNS", ConfigType::Integer, "357142855",
     "Datagrams whose pulse time is more than this (ns) after the previous pulse time are "
     "rejected (parser.essheader.errors.timehigh); read modulo 2^32 as the ESS EFU does (the "
     "ESS files' 5000000000 is 705032704); default 5 pulses of 14 Hz",
     0, 18446744073709551615.0},
    {"Config", ConfigType::Array, nullptr,
     "The parts: [{\"Ring\": 0..11, \"FEN\": 0..11, \"Type\": BwEndCap | FwEndCap | DreamMantle "
     "| HR | SANS (DREAM), FRDetector | PADetector (MAGIC), HeimdalMantle (HEIMDAL), \"Index\": "
     "0..255, \"Index2\": 0..255}, ...]; Index and Index2 default to 0",
     1, 0},
};
const size_t kDreamConfigKeyCount = std::size(kDreamConfigKeys);

namespace {

constexpr PartType kAllTypes[] = {
    PartType::BwEndCap, PartType::FwEndCap,   PartType::DreamMantle, PartType::HR,
    PartType::SANS,     PartType::FRDetector, PartType::PADetector,  PartType::HeimdalMantle};

Instrument instrumentOfType(PartType type) noexcept {
  switch (type) {
  case PartType::FRDetector:
  case PartType::PADetector:
    return Instrument::Magic;
  case PartType::HeimdalMantle:
    return Instrument::Heimdal;
  default:
    return Instrument::Dream;
  }
}

std::string typesOf(Instrument instrument) {
  std::string out;
  for (const PartType t : kAllTypes) {
    if (instrumentOfType(t) == instrument) {
      out.append(out.empty() ? "" : ", ").append(partTypeName(t));
    }
  }
  return out;
}

} // namespace

const char *partTypeName(PartType type) noexcept {
  switch (type) {
  case PartType::BwEndCap:
    return "BwEndCap";
  case PartType::FwEndCap:
    return "FwEndCap";
  case PartType::DreamMantle:
    return "DreamMantle";
  case PartType::HR:
    return "HR";
  case PartType::SANS:
    return "SANS";
  case PartType::FRDetector:
    return "FRDetector";
  case PartType::PADetector:
    return "PADetector";
  case PartType::HeimdalMantle:
    return "HeimdalMantle";
  }
  return "?";
}

const char *instrumentName(Instrument instrument) noexcept {
  switch (instrument) {
  case Instrument::Dream:
    return "DREAM";
  case Instrument::Magic:
    return "MAGIC";
  case Instrument::Heimdal:
    return "HEIMDAL";
  }
  return "?";
}

uint8_t detectorType(Instrument instrument) noexcept {
  switch (instrument) {
  case Instrument::Dream:
    return readout::kTypeDream;
  case Instrument::Magic:
    return readout::kTypeMagic;
  case Instrument::Heimdal:
    return readout::kTypeHeimdal;
  }
  return 0;
}

DreamConfig parseDreamConfig(const nlohmann::json &config, const std::string &source) {
  const sdk::CalibrationCheck check(source, "");
  DreamConfig c;
  std::string name = check.string(config.at("Detector"), "Detector");
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  if (name == "DREAM") {
    c.instrument = Instrument::Dream;
  } else if (name == "MAGIC") {
    c.instrument = Instrument::Magic;
  } else if (name == "HEIMDAL") {
    c.instrument = Instrument::Heimdal;
  } else {
    check.fail("Detector", config.at("Detector"), "expected DREAM, MAGIC or HEIMDAL");
  }
  c.maxPulseTimeDiffNs = sdk::essUint32(config.at("MaxPulseTimeDiffNS"), c.maxPulseWrapped);

  const nlohmann::json &entries = config.at("Config");
  if (entries.empty()) {
    check.fail("Config", entries, "no parts: at least one entry is needed");
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const nlohmann::json &e = entries[i];
    const std::string path = fmt::format("Config[{}]", i);
    if (!e.is_object()) {
      check.fail(path, e,
                 "expected an object {\"Ring\", \"FEN\", \"Type\", \"Index\", \"Index2\"}");
    }
    check.keys(e, path, {"Ring", "FEN", "Type", "Index", "Index2"});
    const auto ring = static_cast<uint8_t>(
        check.integer(check.member(e, path, "Ring"), path + ".Ring", 0, kMaxRing));
    const auto fen = static_cast<uint8_t>(
        check.integer(check.member(e, path, "FEN"), path + ".FEN", 0, kMaxFen));
    const std::string &typeName = check.string(check.member(e, path, "Type"), path + ".Type");
    const auto type = std::find_if(std::begin(kAllTypes), std::end(kAllTypes),
                                   [&](PartType t) { return typeName == partTypeName(t); });
    if (type == std::end(kAllTypes) || instrumentOfType(*type) != c.instrument) {
      check.fail(
          path + ".Type", e.at("Type"),
          fmt::format("{} has parts {}", instrumentName(c.instrument), typesOf(c.instrument)));
    }
    Part &p = c.parts[slotOf(ring, fen)];
    if (p.used) {
      check.fail(path, e, fmt::format("a second entry for Ring {} FEN {}", ring, fen));
    }
    p.used = true;
    p.type = *type;
    if (e.contains("Index")) {
      p.index = static_cast<uint8_t>(check.integer(e.at("Index"), path + ".Index", 0, 255));
    }
    if (e.contains("Index2")) {
      // The ESS EFU reads Index2 only after Index: alone it would be ignored.
      if (!e.contains("Index")) {
        check.fail(path + ".Index2", e.at("Index2"),
                   "Index2 without Index (the ESS EFU would ignore it and use 0)");
      }
      p.index2 = static_cast<uint8_t>(check.integer(e.at("Index2"), path + ".Index2", 0, 255));
    }
    c.slotsInOrder.push_back(static_cast<uint8_t>(slotOf(ring, fen)));
    c.hasType[static_cast<size_t>(p.type)] = true;
  }
  return c;
}

} // namespace efu::dream
