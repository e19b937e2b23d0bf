// SPDX-License-Identifier: BSD-2-Clause
// The caen module's configuration: key table and the checks of the ESS instrument sections.
#include "modules/caen/CaenConfig.h"

#include "common/readout/EssReadout.h"
#include "common/system/BoundedJson.h"

#include <fmt/format.h>

#include <climits>
#include <initializer_list>

namespace efu::caen {

using sdk::ConfigType;

const EfuConfigKey kCaenKeys[] = {
    {"Detector", ConfigType::String, nullptr,
     "ESS instrument whose geometry applies: loki, bifrost, cspec, miracles or tbl3he (the ESS "
     "EFU's file names it)",
     1, 0},
    {"Resolution", ConfigType::Integer, nullptr,
     "LoKI: pixels along a straw; BIFROST, CSPEC: the x stride of a ring; MIRACLES: pixels along "
     "a tube pair; TBL3HE: read, unused (100 pixels per tube), as in the ESS EFU",
     2, 65536},
    {"MaxTOFNS", ConfigType::Integer, "1428571420",
     "Events more than this (ns) after their pulse are rejected (events.timestamp.tof.high, "
     "prevtof.high); default 20 pulses of 14 Hz",
     0, 2147483647},
    readout::kMaxPulseTimeKey,
    {"MaxFEN", ConfigType::Integer, "0",
     "BIFROST, CSPEC: readouts of a higher FEN are rejected (geometry.fen_errors); read and "
     "unused by the other geometries, as in the ESS EFU",
     0, 255},
    {"MaxGroup", ConfigType::Integer, "0",
     "BIFROST, CSPEC, TBL3HE: readouts of a higher group are rejected (geometry.group_errors); "
     "read and unused by LoKI and MIRACLES, as in the ESS EFU",
     0, 255},
    {"MaxRing", ConfigType::Integer, "11",
     "Read and unused, as in the ESS EFU: every geometry takes rings 0..11 (the ESS files "
     "say 4)",
     0, 255},
    {"ReadoutConstDelayNS", ConfigType::Integer, "0",
     "Must be 0: the ESS EFU applies no such delay, and efu refuses one it would not apply", 0,
     4294967295.0},
    {"MaxAmpl", ConfigType::Integer, "2147483647",
     "BIFROST: readouts with A + B above this are rejected (geometry.ampl_high); MIRACLES: read "
     "and unused, as in the ESS EFU",
     0, 2147483647},
    {"GroupsZ", ConfigType::Integer, "4", "LoKI: layers of groups in a bank (the geometry has 4)",
     0, 255},
    {"Banks", ConfigType::Array, "[]",
     "LoKI: [{\"Bank\": 0..8, \"ID\": name, \"GroupsN\": groups per layer, \"YOffset\": first "
     "straw row}, ...]",
     1, 0},
    {"Config", ConfigType::Array, "[]",
     "LoKI: [{\"Ring\": 0..11, \"Bank\": B, \"FENs\": N, \"FENOffset\": first FEN in the bank}, "
     "...]",
     1, 0},
    {"NumOfFENs", ConfigType::Integer, "0", "TBL3HE: the number of Topology entries", 0, 288},
    {"MinValidAmplitude", ConfigType::Integer, "0",
     "TBL3HE: readouts with A or B below this are rejected (geometry.ampl_low)", -2147483648.0,
     2147483647},
    {"Topology", ConfigType::Array, "[]",
     "TBL3HE: [{\"Ring\": 0..11, \"FEN\": F, \"Bank\": 0 or 1}, ...]: the bank each (ring, FEN) "
     "reads",
     1, 0},
    {"sources", ConfigType::Array, "[]",
     "efu, LoKI only: ev44 source_name per bank, in the order of Banks: [] = every event under "
     "efu's source name; else each bank's events in ev44 messages of their own on the same "
     "topic",
     1, 0},
};
const size_t kCaenKeyCount = std::size(kCaenKeys);

namespace {

[[noreturn]] void fail(const std::string &source, const std::string &path,
                       const nlohmann::json &value, const std::string &why) {
  std::string shown = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (shown.size() > 200) {
    shown = shown.substr(0, 197) + "...";
  }
  throw sdk::ConfigError(fmt::format("{}: {} = {}: {}", source, path, shown, why));
}

/// The entry `entry` (at `path`) of an array of objects: only `keys`, each an integer in range.
class Entry {
public:
  Entry(const nlohmann::json &entry, const std::string &source, std::string path,
        std::initializer_list<const char *> keys)
      : entry_(entry), source_(source), path_(std::move(path)) {
    if (!entry.is_object()) {
      fail(source, path_, entry, "must be an object");
    }
    for (const auto &[key, value] : entry.items()) {
      bool known = false;
      for (const char *k : keys) {
        known = known || key == k;
      }
      if (!known) {
        std::string list;
        for (const char *k : keys) {
          list += (list.empty() ? "" : ", ") + std::string(k);
        }
        fail(source, path_ + "." + key, value, "unknown key; an entry here has " + list);
      }
    }
  }
  [[nodiscard]] const nlohmann::json &at(const char *key) const {
    if (!entry_.contains(key)) {
      fail(source_, path_, entry_, std::string("missing key '") + key + "'");
    }
    return entry_.at(key);
  }
  [[nodiscard]] int64_t integer(const char *key, int64_t min, int64_t max) const {
    const nlohmann::json &v = at(key);
    if (!v.is_number_integer()) {
      fail(source_, path_ + "." + key, v, "must be an integer");
    }
    const int64_t n = v.get<int64_t>();
    if (n < min || n > max) {
      fail(source_, path_ + "." + key, v, fmt::format("out of range [{}, {}]", min, max));
    }
    return n;
  }
  [[nodiscard]] const std::string &path() const noexcept { return path_; }

private:
  const nlohmann::json &entry_;
  const std::string &source_;
  std::string path_;
};

void readLoki(const nlohmann::json &config, const std::string &source, CaenConfig &c) {
  LokiGeometry &g = c.loki;
  const nlohmann::json &groupsZ = config.at("GroupsZ");
  if (groupsZ.get<int64_t>() != LokiGeometry::kLayers) {
    fail(source, "GroupsZ", groupsZ, "the LoKI geometry has 4 layers of groups");
  }
  const nlohmann::json &banks = config.at("Banks");
  if (banks.empty()) {
    fail(source, "Banks", banks, "LoKI needs at least one bank");
  }
  for (size_t i = 0; i < banks.size(); ++i) {
    const Entry e(banks[i], source, fmt::format("Banks[{}]", i),
                  {"Bank", "ID", "GroupsN", "YOffset"});
    const auto number = static_cast<uint32_t>(e.integer("Bank", 0, LokiGeometry::kBanks - 1));
    LokiGeometry::Bank &bank = g.banks[number];
    if (bank.configured) {
      fail(source, e.path() + ".Bank", banks[i]["Bank"], "bank listed twice");
    }
    const nlohmann::json &id = e.at("ID");
    if (!id.is_string()) {
      fail(source, e.path() + ".ID", id, "must be a string");
    }
    bank.configured = true;
    bank.id = id.get<std::string>();
    bank.groupsN = static_cast<uint32_t>(e.integer("GroupsN", 1, 4096));
    bank.yOffset = static_cast<uint32_t>(e.integer("YOffset", 0, 1 << 24));
    if (bank.yOffset % LokiGeometry::kUnitsPerGroup != 0) {
      fail(source, e.path() + ".YOffset", banks[i]["YOffset"],
           "must be a multiple of 7 (it counts straws of whole groups)");
    }
    g.totalGroups += bank.groupsN * LokiGeometry::kLayers;
  }
  const nlohmann::json &rings = config.at("Config");
  if (rings.empty()) {
    fail(source, "Config", rings, "LoKI needs at least one ring");
  }
  for (size_t i = 0; i < rings.size(); ++i) {
    const Entry e(rings[i], source, fmt::format("Config[{}]", i),
                  {"Ring", "Bank", "FENs", "FENOffset"});
    const auto number = static_cast<uint32_t>(e.integer("Ring", 0, LokiGeometry::kRings - 1));
    LokiGeometry::Ring &ring = g.rings[number];
    if (ring.bank >= 0) {
      fail(source, e.path() + ".Ring", rings[i]["Ring"], "ring listed twice");
    }
    ring.bank = static_cast<int32_t>(e.integer("Bank", 0, LokiGeometry::kBanks - 1));
    if (!g.banks[static_cast<size_t>(ring.bank)].configured) {
      fail(source, e.path() + ".Bank", rings[i]["Bank"], "no such bank in Banks");
    }
    ring.fens = static_cast<uint32_t>(e.integer("FENs", 1, readout::kMaxFen + 1));
    ring.fenOffset = static_cast<uint32_t>(e.integer("FENOffset", 0, 4096));
  }
  // Every straw a ring reads must land on a row of its own inside the image; the ESS EFU does
  // not check this, a file that breaks it is a mistake.
  c.channels.assign(g.rows(), Channel{});
  c.mapped.assign(g.rows(), false);
  for (size_t i = 0; i < rings.size(); ++i) {
    const auto number = rings[i]["Ring"].get<uint32_t>();
    const LokiGeometry::Ring &ring = g.rings[number];
    for (uint32_t fen = 0; fen < ring.fens; ++fen) {
      for (uint32_t group = 0; group < 8; ++group) {
        for (uint32_t unit = 0; unit < LokiGeometry::kUnitsPerGroup; ++unit) {
          const uint32_t row = g.row(number, fen, group, unit);
          if (row >= g.rows() || c.mapped[row]) {
            fail(source, fmt::format("Config[{}]", i), rings[i],
                 row >= g.rows()
                     ? fmt::format("FEN {} group {} straw {} lands on row {}, beyond the {} rows "
                                   "of the banks (GroupsN x 4 x 7 summed)",
                                   fen, group, unit, row, g.rows())
                     : fmt::format("FEN {} group {} straw {} lands on row {}, which an earlier "
                                   "ring already reads",
                                   fen, group, unit, row));
          }
          c.mapped[row] = true;
          c.channels[row] = Channel{static_cast<uint8_t>(number), static_cast<uint8_t>(fen),
                                    static_cast<uint8_t>(group), static_cast<uint8_t>(unit)};
        }
      }
    }
  }
  const nlohmann::json &names = config.at("sources");
  if (!names.empty() && names.size() != banks.size()) {
    fail(source, "sources", names,
         fmt::format("needs one source name per bank ({} in Banks), or none", banks.size()));
  }
  c.bankSources.assign(LokiGeometry::kBanks, {});
  for (size_t i = 0; i < names.size(); ++i) {
    if (!names[i].is_string() || names[i].get<std::string>().empty()) {
      fail(source, fmt::format("sources[{}]", i), names[i], "must be a non-empty string");
    }
    c.bankSources[banks[i]["Bank"].get<size_t>()] = names[i].get<std::string>();
  }
  if (names.empty()) {
    c.bankSources.clear();
  }
}

void readTbl3he(const nlohmann::json &config, const std::string &source, CaenConfig &c) {
  Tbl3heTopology &t = c.tbl3he;
  const nlohmann::json &topology = config.at("Topology");
  if (topology.empty()) {
    fail(source, "Topology", topology, "TBL3HE needs at least one {Ring, FEN, Bank} entry");
  }
  const nlohmann::json &count = config.at("NumOfFENs");
  if (count.get<size_t>() != topology.size()) {
    fail(source, "NumOfFENs", count,
         fmt::format("must equal the number of Topology entries ({})", topology.size()));
  }
  const auto n = count.get<uint32_t>();
  // The ESS EFU's lookup number of (ring, FEN): see Tbl3heTopology.
  std::vector<int> numbered(static_cast<size_t>(readout::kMaxFen) * n + 12, -1);
  for (size_t i = 0; i < topology.size(); ++i) {
    const Entry e(topology[i], source, fmt::format("Topology[{}]", i), {"Ring", "FEN", "Bank"});
    const auto ring = static_cast<uint32_t>(e.integer("Ring", 0, 11));
    const auto fen = static_cast<uint32_t>(e.integer("FEN", 0, readout::kMaxFen));
    const auto bank = static_cast<uint32_t>(e.integer("Bank", 0, Tbl3heTopology::kBanks - 1));
    int &slot = numbered[fen * n + ring];
    if (slot >= 0) {
      fail(source, e.path(), topology[i],
           fmt::format("the ESS EFU files (ring, FEN) under FEN x NumOfFENs + Ring = {}, which "
                       "Topology[{}] already has",
                       fen * n + ring, slot));
    }
    slot = static_cast<int>(i);
    t.entries.push_back(
        {static_cast<uint8_t>(ring), static_cast<uint8_t>(fen), static_cast<uint8_t>(bank)});
  }
  for (uint32_t ring = 0; ring < 12; ++ring) {
    for (uint32_t fen = 0; fen <= readout::kMaxFen; ++fen) {
      const int slot = numbered[fen * n + ring];
      t.bank[ring][fen] =
          static_cast<int8_t>(slot < 0 ? -1 : t.entries[static_cast<size_t>(slot)].bank);
    }
  }
}

struct Kind {
  const char *name;
  Instrument instrument;
  uint8_t type;
};
constexpr Kind kKinds[] = {
    {"loki", Instrument::Loki, readout::kTypeLoki},
    {"bifrost", Instrument::Bifrost, readout::kTypeBifrost},
    {"cspec", Instrument::Cspec, readout::kTypeCspec},
    {"miracles", Instrument::Miracles, readout::kTypeMiracles},
    {"tbl3he", Instrument::Tbl3he, readout::kTypeTbl3he},
};

/// Keys that only some geometries read: anything but the default elsewhere is refused, naming
/// the geometries that read it.
struct Owned {
  const char *key;
  std::initializer_list<Instrument> by;
  const char *readers;
};
const Owned kOwned[] = {
    {"GroupsZ", {Instrument::Loki}, "loki"},
    {"Banks", {Instrument::Loki}, "loki"},
    {"Config", {Instrument::Loki}, "loki"},
    {"sources", {Instrument::Loki}, "loki"},
    {"MaxAmpl", {Instrument::Bifrost, Instrument::Miracles}, "bifrost and miracles"},
    {"NumOfFENs", {Instrument::Tbl3he}, "tbl3he"},
    {"MinValidAmplitude", {Instrument::Tbl3he}, "tbl3he"},
    {"Topology", {Instrument::Tbl3he}, "tbl3he"},
};

void refuseForeignKeys(const nlohmann::json &config, const std::string &source,
                       const CaenConfig &c) {
  for (const Owned &o : kOwned) {
    bool reads = false;
    for (const Instrument i : o.by) {
      reads = reads || i == c.instrument;
    }
    if (reads) {
      continue;
    }
    for (const EfuConfigKey &k : kCaenKeys) {
      if (std::string_view(k.key) == o.key &&
          config.at(o.key) != efu::parseJson(k.defaultJson)) {
        fail(source, o.key, config.at(o.key),
             fmt::format("only the {} geometry reads this key; the file's Detector is {}",
                         o.readers, c.detector));
      }
    }
  }
}

} // namespace

CaenConfig::CaenConfig(const nlohmann::json &config, const std::string &source) {
  const nlohmann::json &name = config.at("Detector");
  detector = name.get<std::string>();
  const Kind *kind = nullptr;
  for (const Kind &k : kKinds) {
    kind = detector == k.name ? &k : kind;
  }
  if (kind == nullptr) {
    fail(source, "Detector", name,
         "efu's caen module serves the ESS geometries of: loki, bifrost, cspec, miracles, tbl3he");
  }
  instrument = kind->instrument;
  detectorType = kind->type;
  resolution = config.at("Resolution").get<uint32_t>();
  maxTofNs = config.at("MaxTOFNS").get<int64_t>();
  maxPulseGapNs = config.at("MaxPulseTimeNS").get<int64_t>();
  maxFen = config.at("MaxFEN").get<uint32_t>();
  maxGroup = config.at("MaxGroup").get<uint32_t>();
  maxAmplitude =
      instrument == Instrument::Bifrost ? config.at("MaxAmpl").get<int64_t>() : INT32_MAX;
  minAmplitude = config.at("MinValidAmplitude").get<int64_t>();
  const nlohmann::json &delay = config.at("ReadoutConstDelayNS");
  if (delay.get<int64_t>() != 0) {
    fail(source, "ReadoutConstDelayNS", delay,
         "the ESS EFU applies no such delay to CAEN readouts; efu refuses a non-zero one rather "
         "than give other times of flight");
  }
  refuseForeignKeys(config, source, *this);
  if (instrument == Instrument::Loki) {
    readLoki(config, source, *this);
    if (static_cast<uint64_t>(loki.rows()) * resolution > INT32_MAX) {
      fail(source, "Resolution", config.at("Resolution"),
           fmt::format("{} straw rows of this many pixels exceed ev44's 32-bit pixel ids",
                       loki.rows()));
    }
  } else if (instrument == Instrument::Tbl3he) {
    readTbl3he(config, source, *this);
  }
  const FixedImage image = instrument == Instrument::Loki      ? FixedImage{resolution, loki.rows()}
                           : instrument == Instrument::Bifrost ? kBifrostImage
                           : instrument == Instrument::Cspec   ? kCspecImage
                           : instrument == Instrument::Miracles ? kMiraclesImage
                                                                : kTbl3heImage;
  width_ = image.width;
  height_ = image.height;
}

} // namespace efu::caen
