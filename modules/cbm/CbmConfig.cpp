// SPDX-License-Identifier: BSD-2-Clause
// The ESS common beam monitor file: key table, the Topology entries and their checks.
#include "modules/cbm/CbmConfig.h"

#include "common/sdk/CalibrationCheck.h"
#include "common/sdk/ModuleConfig.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>

namespace efu::cbm {

using sdk::ConfigType;

const EfuConfigKey kCbmConfigKeys[] = {
    {"Detector", ConfigType::String, nullptr,
     "\"CBM\", or \"BEER\" for BEER's EVENT_2D monitors (readout type 0x50, Type and Schema "
     "preset), any case, as the ESS files say",
     1, 0},
    {"MaxPulseTimeDiffNS", ConfigType::Integer, "357142855",
     "Datagrams whose pulse time is more than this (ns) after the previous pulse time are "
     "rejected (parser.essheader.errors.timehigh); read modulo 2^32 as the ESS EFU does",
     0, 18446744073709551615.0},
    {"MaxTOFNS", ConfigType::Integer, "1428571420",
     "Readouts more than this (ns) after their pulse are rejected (events.timestamp.tof.high); "
     "read modulo 2^32 as the ESS EFU does (the ESS files' 10000000000 is 1410065408)",
     0, 18446744073709551615.0},
    {"MonitorRing", ConfigType::Integer, "11",
     "The ring (fiber / 2) the monitors are on; other rings are rejected "
     "(geometry.monitor_ring_mismatch_errors)",
     0, 255},
    {"MaxRing", ConfigType::Integer, "11",
     "Readouts on a ring above this are rejected (geometry.ring_errors)", 0, 255},
    {"MaxFENId", ConfigType::Integer, nullptr,
     "Readouts from a FEN above this are rejected (geometry.fen_errors); Topology FENs must not "
     "exceed it",
     0, 255},
    {"NormalizeIBMReadouts", ConfigType::Boolean, "true",
     "IBM readouts: divide the summed ADC by the readout count (MCASum) when that is not 0", 1, 0},
    {"NumberOfMonitors", ConfigType::Integer, "0",
     "Not read (the ESS EFU counts the Topology entries); accepted as in the ESS test files", 0,
     1e9},
    {"Topology", ConfigType::Array, nullptr,
     "The monitors: [{\"FEN\", \"Channel\", \"Type\": EVENT_0D | EVENT_2D | IBM, \"Source\", "
     "\"Schema\": ev44 | da00 (BEER: Type and Schema may be left out), EVENT_0D: \"PixelOffset\"; "
     "EVENT_2D: \"Width\", \"Height\", "
     "[\"PixelOffset\"]; IBM: \"MaxTofBin\", \"BinCount\", [\"AggregatedFrames\", "
     "\"AggregationMode\"]}, ...]",
     1, 0},
};
const size_t kCbmConfigKeyCount = std::size(kCbmConfigKeys);

const char *typeName(MonitorType type) noexcept {
  switch (type) {
  case MonitorType::Event0D:
    return "EVENT_0D";
  case MonitorType::Event2D:
    return "EVENT_2D";
  case MonitorType::Ibm:
    return "IBM";
  }
  return "?";
}

std::string counterSegment(const std::string &source) {
  std::string out = source;
  for (char &c : out) {
    const auto u = static_cast<unsigned char>(c);
    c = std::isalnum(u) != 0 ? static_cast<char>(std::tolower(u)) : '_';
  }
  return out.empty() ? "_" : out;
}

namespace {

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

int32_t optionalInt(const nlohmann::json &entry, const std::string &path, const char *key,
                    int32_t fallback, const sdk::CalibrationCheck &check) {
  if (!entry.contains(key)) {
    return fallback;
  }
  return static_cast<int32_t>(check.integer(entry.at(key), path + "." + key, INT32_MIN, INT32_MAX));
}

int32_t requiredInt(const nlohmann::json &entry, const std::string &path, const char *key,
                    const MonitorType type, const sdk::CalibrationCheck &check) {
  if (!entry.contains(key)) {
    check.fail(path, entry, fmt::format("a {} monitor needs '{}'", typeName(type), key));
  }
  return static_cast<int32_t>(check.integer(entry.at(key), path + "." + key, INT32_MIN, INT32_MAX));
}

Monitor parseEntry(const nlohmann::json &entry, size_t index, const CbmConfig &c,
                   const sdk::CalibrationCheck &check) {
  const std::string path = fmt::format("Topology[{}]", index);
  if (!entry.is_object()) {
    check.fail(path, entry, "expected an object");
  }
  check.keys(entry, path,
             {"FEN", "Channel", "Type", "Source", "Schema", "PixelOffset", "Width", "Height",
              "MaxTofBin", "BinCount", "AggregatedFrames", "AggregationMode"});
  Monitor m;
  m.fen = static_cast<uint8_t>(
      check.integer(check.member(entry, path, "FEN"), path + ".FEN", 0, c.maxFenId));
  m.channel = static_cast<uint8_t>(
      check.integer(check.member(entry, path, "Channel"), path + ".Channel", 0, 255));
  // BEER's entries need only FEN, Channel and Source (and EVENT_2D's Width and Height): Type and
  // Schema are EVENT_2D and ev44. The ESS EFU ignores them in a BEER file; here a Type or
  // Schema that says otherwise is refused rather than silently overridden.
  static const nlohmann::json kBeerType = "EVENT_2D";
  static const nlohmann::json kBeerSchema = "ev44";
  const nlohmann::json &type =
      c.beer && !entry.contains("Type") ? kBeerType : check.member(entry, path, "Type");
  const std::string typeText = upper(check.string(type, path + ".Type"));
  if (c.beer && typeText != "EVENT_2D") {
    check.fail(path + ".Type", type, "a BEER monitor is EVENT_2D");
  }
  if (typeText == "EVENT_0D") {
    m.type = MonitorType::Event0D;
  } else if (typeText == "EVENT_2D") {
    m.type = MonitorType::Event2D;
  } else if (typeText == "IBM") {
    m.type = MonitorType::Ibm;
  } else {
    check.fail(path + ".Type", type, "expected EVENT_0D, EVENT_2D or IBM");
  }
  const nlohmann::json &source = check.member(entry, path, "Source");
  m.source = check.string(source, path + ".Source");
  if (m.source.empty()) {
    check.fail(path + ".Source", source, "a source name is needed");
  }
  // The ESS EFU needs Schema on every entry (its amor_onsite_ibm.json has none and is refused).
  const nlohmann::json &schema =
      c.beer && !entry.contains("Schema") ? kBeerSchema : check.member(entry, path, "Schema");
  const std::string schemaText = upper(check.string(schema, path + ".Schema"));
  if (schemaText == "EV44") {
    m.schema = Schema::Ev44;
  } else if (schemaText == "DA00") {
    m.schema = Schema::Da00;
  } else {
    check.fail(path + ".Schema", schema, "expected ev44 or da00");
  }
  switch (m.type) {
  case MonitorType::Event0D:
    m.pixelOffset = requiredInt(entry, path, "PixelOffset", m.type, check);
    // The ESS EFU takes its histogram's range and bins from the entry's PixelOffset and a bin
    // count of 0, and divides by zero at start: refused here.
    if (m.schema != Schema::Ev44) {
      check.fail(path + ".Schema", schema, "an EVENT_0D monitor has no histogram bins: only ev44");
    }
    break;
  case MonitorType::Event2D: {
    m.pixelOffset = optionalInt(entry, path, "PixelOffset", 0, check);
    const int32_t w = requiredInt(entry, path, "Width", m.type, check);
    const int32_t h = requiredInt(entry, path, "Height", m.type, check);
    if (w < 0 || w > UINT16_MAX) {
      check.fail(path + ".Width", entry.at("Width"), "expected 0..65535");
    }
    if (h < 0 || h > UINT16_MAX) {
      check.fail(path + ".Height", entry.at("Height"), "expected 0..65535");
    }
    if (m.schema != Schema::Ev44) {
      check.fail(path + ".Schema", schema, "an EVENT_2D monitor publishes events: only ev44");
    }
    if (m.pixelOffset < 0) {
      check.fail(path + ".PixelOffset", entry.at("PixelOffset"), "expected 0 or more");
    }
    m.width = static_cast<uint16_t>(w);
    m.height = static_cast<uint16_t>(h);
    break;
  }
  case MonitorType::Ibm: {
    m.maxTofBin = requiredInt(entry, path, "MaxTofBin", m.type, check);
    m.binCount = requiredInt(entry, path, "BinCount", m.type, check);
    const int32_t frames = optionalInt(entry, path, "AggregatedFrames", 1, check);
    const int32_t mode = optionalInt(entry, path, "AggregationMode", 0, check);
    if (mode < 0 || mode > 1) {
      check.fail(path + ".AggregationMode", entry.at("AggregationMode"),
                 "expected 0 (sum) or 1 (average)");
    }
    // What the ESS EFU would divide by zero on, or index out of its arrays with: refused here.
    if (m.binCount < 1) {
      check.fail(path + ".BinCount", entry.at("BinCount"), "expected 1 or more");
    }
    if (m.maxTofBin < m.binCount) {
      check.fail(path + ".MaxTofBin", entry.at("MaxTofBin"),
                 fmt::format("must be at least BinCount ({}): bins are MaxTofBin / BinCount "
                             "integer ns wide",
                             m.binCount));
    }
    if (frames < 1 || frames > 255) {
      check.fail(path + ".AggregatedFrames", entry.at("AggregatedFrames"), "expected 1..255");
    }
    m.aggregatedFrames = static_cast<uint8_t>(frames);
    m.aggregation = static_cast<Aggregation>(mode);
    break;
  }
  }
  return m;
}

} // namespace

CbmConfig parseCbmConfig(const nlohmann::json &config, const std::string &source) {
  const sdk::CalibrationCheck check(source, "");
  CbmConfig c;
  const nlohmann::json &detector = config.at("Detector");
  const std::string detectorText = upper(detector.get<std::string>());
  if (detectorText != "CBM" && detectorText != "BEER") {
    check.fail("Detector", detector,
               "the ESS beam monitor files say \"CBM\", BEER's files \"BEER\"");
  }
  c.beer = detectorText == "BEER";
  c.maxTofNs = sdk::essUint32(config.at("MaxTOFNS"), c.maxTofWrapped);
  c.maxPulseTimeDiffNs = sdk::essUint32(config.at("MaxPulseTimeDiffNS"), c.maxPulseWrapped);
  c.monitorRing = config.at("MonitorRing").get<uint8_t>();
  c.maxRing = config.at("MaxRing").get<uint8_t>();
  c.maxFenId = config.at("MaxFENId").get<uint8_t>();
  c.normalizeIbm = config.at("NormalizeIBMReadouts").get<bool>();
  c.slots.fill(-1);
  const nlohmann::json &entries = config.at("Topology");
  if (entries.empty()) {
    check.fail("Topology", entries, "no monitors: at least one entry is needed");
  }
  if (entries.size() > 1024) {
    check.fail("Topology", entries, "at most 1024 monitors");
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    Monitor m = parseEntry(entries[i], i, c, check);
    int16_t &slot = c.slots[static_cast<size_t>(m.fen) * 256 + m.channel];
    if (slot >= 0) {
      check.fail(fmt::format("Topology[{}]", i), entries[i],
                 fmt::format("FEN {} Channel {} is Topology[{}] already", m.fen, m.channel, slot));
    }
    // A histogram has a source of its own: two da00 outputs (or a da00 and events) under one
    // name could not be told apart by consumers.
    for (size_t j = 0; j < c.monitors.size(); ++j) {
      const Monitor &o = c.monitors[j];
      if ((m.schema == Schema::Da00 || o.schema == Schema::Da00) &&
          counterSegment(o.source) == counterSegment(m.source)) {
        check.fail(fmt::format("Topology[{}].Source", i), entries[i]["Source"],
                   fmt::format("Topology[{}] has this source too; a da00 histogram needs a "
                               "source of its own",
                               j));
      }
    }
    slot = static_cast<int16_t>(c.monitors.size());
    c.monitors.push_back(std::move(m));
  }
  return c;
}

CbmConfig loadCbmConfig(const std::string &path) {
  const nlohmann::json validated =
      validateModuleConfig("cbm", kCbmConfigKeys, kCbmConfigKeyCount, readConfigFile(path), path);
  return parseCbmConfig(validated, path);
}

} // namespace efu::cbm
