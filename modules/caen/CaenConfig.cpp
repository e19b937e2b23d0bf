// SPDX-License-Identifier: BSD-2-Clause
// The caen module's configuration: key table, geometry checks and the tube map.
#include "modules/caen/CaenConfig.h"

#include <fmt/format.h>

namespace efu::caen {

using sdk::ConfigType;

const EfuConfigKey kCaenKeys[] = {
    {"instrument", ConfigType::String, "\"\"", "Instrument name, for logs and images only", 1, 0},
    {"detector_type", ConfigType::Integer, "48",
     "ESS detector type accepted in the readout header (48 = 0x30 LoKI, 52 = 0x34 BIFROST, "
     "56 = 0x38 MIRACLES, 60 = 0x3C CSPEC)", 0, 255},
    {"banks", ConfigType::Integer, "1", "Number of detector banks", 1, 64},
    {"tubes_per_bank", ConfigType::Integer, nullptr, "Tubes in each bank", 1, 4096},
    {"pixels_per_tube", ConfigType::Integer, "512",
     "Pixels along a tube: position B/(A+B) is binned into this many pixels", 1, 4096},
    {"amplitude_threshold", ConfigType::Integer, "0",
     "Readouts whose amplitude sum A+B is below this are rejected (readouts.rejected.threshold)",
     0, 65534},
    {"max_tof_ns", ConfigType::Integer, "1000000000",
     "Events with a time of flight above this (ns) are rejected (events.timestamp.tof.high)",
     0, 2147483647},
    {"mapping", ConfigType::Array, nullptr,
     "Tube map: [{\"bank\": B, \"fiber\": F, \"fens\": [first, last], \"groups\": G, "
     "\"first_tube\": T}, ...]; tube in bank = T + (fen - first) * G + group", 1, 0},
    {"sources", ConfigType::Array, "[]",
     "ev44 source_name per bank: [] = every event under efu's source name; or one name per "
     "bank, each bank's events in ev44 messages of their own on the same topic", 1, 0},
};
const size_t kCaenKeyCount = std::size(kCaenKeys);

namespace {

[[noreturn]] void fail(const std::string &source, const std::string &path,
                       const nlohmann::json &value, const std::string &why) {
  throw sdk::ConfigError(fmt::format("{}: {} = {}: {}", source, path, value.dump(), why));
}

int64_t integerField(const nlohmann::json &rule, const std::string &source, const std::string &path,
                     const char *key, int64_t min, int64_t max) {
  const std::string where = path + "." + key;
  if (!rule.contains(key)) {
    fail(source, path, rule, std::string("missing key '") + key + "'");
  }
  const nlohmann::json &v = rule.at(key);
  if (!v.is_number_integer()) {
    fail(source, where, v, "must be an integer");
  }
  const int64_t n = v.get<int64_t>();
  if (n < min || n > max) {
    fail(source, where, v, fmt::format("out of range [{}, {}]", min, max));
  }
  return n;
}

} // namespace

CaenConfig::CaenConfig(const nlohmann::json &config, const std::string &source) {
  instrument = config.at("instrument").get<std::string>();
  detectorType = config.at("detector_type").get<uint8_t>();
  banks = config.at("banks").get<uint32_t>();
  tubesPerBank = config.at("tubes_per_bank").get<uint32_t>();
  pixelsPerTube = config.at("pixels_per_tube").get<uint32_t>();
  amplitudeThreshold = config.at("amplitude_threshold").get<int32_t>();
  maxTofNs = config.at("max_tof_ns").get<int64_t>();

  const nlohmann::json names = config.value("sources", nlohmann::json::array());
  if (!names.empty() && names.size() != banks) {
    fail(source, "sources", names,
         fmt::format("needs one source name per bank ({} banks), or none", banks));
  }
  for (size_t b = 0; b < names.size(); ++b) {
    if (!names[b].is_string() || names[b].get<std::string>().empty()) {
      fail(source, fmt::format("sources[{}]", b), names[b], "must be a non-empty string");
    }
    sources.push_back(names[b].get<std::string>());
  }
  channels.assign(tubes(), Channel{});
  mapped.assign(tubes(), false);
  const nlohmann::json &mapping = config.at("mapping");
  if (mapping.empty()) {
    fail(source, "mapping", mapping, "needs at least one entry");
  }
  static const char *const kRuleKeys[] = {"bank", "fiber", "fens", "groups", "first_tube"};
  for (size_t i = 0; i < mapping.size(); ++i) {
    const nlohmann::json &r = mapping[i];
    const std::string path = fmt::format("mapping[{}]", i);
    if (!r.is_object()) {
      fail(source, path, r, "must be an object {bank, fiber, fens, groups, first_tube}");
    }
    for (const auto &[key, value] : r.items()) {
      bool known = false;
      for (const char *k : kRuleKeys) {
        known = known || key == k;
      }
      if (!known) {
        fail(source, path + "." + key, value,
             "unknown key; a mapping entry has bank, fiber, fens, groups, first_tube");
      }
    }
    MappingRule rule;
    rule.bank = static_cast<uint32_t>(integerField(r, source, path, "bank", 0, banks - 1));
    rule.fiber = static_cast<uint8_t>(integerField(r, source, path, "fiber", 0, readout::kMaxFiber));
    if (!r.contains("fens")) {
      fail(source, path, r, "missing key 'fens' ([first, last])");
    }
    const nlohmann::json &f = r.at("fens");
    if (!f.is_array() || f.size() != 2 || !f[0].is_number_integer() ||
        !f[1].is_number_integer()) {
      fail(source, path + ".fens", f, "must be [first, last] (integers)");
    }
    const int64_t fenFirst = f[0].get<int64_t>();
    const int64_t fenLast = f[1].get<int64_t>();
    if (fenFirst < 0 || fenLast > readout::kMaxFen || fenFirst > fenLast) {
      fail(source, path + ".fens", f,
           fmt::format("need 0 <= first <= last <= {}", readout::kMaxFen));
    }
    rule.fenFirst = static_cast<uint8_t>(fenFirst);
    rule.fenLast = static_cast<uint8_t>(fenLast);
    rule.groups = static_cast<uint32_t>(integerField(r, source, path, "groups", 1, 256));
    rule.firstTube =
        static_cast<uint32_t>(integerField(r, source, path, "first_tube", 0, tubesPerBank - 1));
    const uint64_t count = static_cast<uint64_t>(rule.fenLast - rule.fenFirst + 1) * rule.groups;
    if (rule.firstTube + count > tubesPerBank) {
      fail(source, path, r,
           fmt::format("covers tubes {}..{} of bank {}, but tubes_per_bank is {}", rule.firstTube,
                       rule.firstTube + count - 1, rule.bank, tubesPerBank));
    }
    for (uint32_t fen = rule.fenFirst; fen <= rule.fenLast; ++fen) {
      FenEntry &e = fens_[static_cast<size_t>(rule.fiber) * (readout::kMaxFen + 1) + fen];
      if (e.groups != 0) {
        fail(source, path, r,
             fmt::format("fiber {} FEN {} is already mapped by an earlier entry", rule.fiber, fen));
      }
      e.firstTube = rule.bank * tubesPerBank + rule.firstTube + (fen - rule.fenFirst) * rule.groups;
      e.groups = rule.groups;
      for (uint32_t g = 0; g < rule.groups; ++g) {
        const uint32_t tube = e.firstTube + g;
        if (mapped[tube]) {
          fail(source, path, r,
               fmt::format("tube {} of bank {} is already fed by an earlier entry",
                           tube - rule.bank * tubesPerBank, rule.bank));
        }
        mapped[tube] = true;
        channels[tube] = Channel{rule.fiber, static_cast<uint8_t>(fen), static_cast<uint8_t>(g)};
      }
    }
    rules.push_back(rule);
  }
}

} // namespace efu::caen
