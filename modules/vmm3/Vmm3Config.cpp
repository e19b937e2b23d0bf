// SPDX-License-Identifier: BSD-2-Clause
// Parsing and cross-checking of the vmm3 instrument configuration.
#include "modules/vmm3/Vmm3Config.h"

#include "common/sdk/ModuleConfig.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace efu::vmm3 {

using sdk::ConfigError;
using sdk::ConfigType;

const EfuConfigKey kVmm3ConfigKeys[] = {
    {"instrument", ConfigType::String, "\"\"", "Instrument name (free text, shown in logs)", 1, 0},
    {"detector_type", ConfigType::Integer, "72",
     "ESS header detector type accepted (0x44 NMX = 68, 0x48 FREIA = 72, 0x4C ESTIA = 76)", 0, 255},
    {"nx", ConfigType::Integer, nullptr, "Strips along x = image width in pixels", 1, 65535},
    {"ny", ConfigType::Integer, nullptr, "Strips along y = image height in pixels", 1, 65535},
    {"hybrids", ConfigType::Array, nullptr,
     "Hybrid map: [{\"fiber\":F,\"fen\":N,\"vmm_pair\":P,\"plane\":\"x\"|\"y\","
     "\"strip_offset\":S, \"hybrid_id\":\"<32 hex digits>\" (optional; needed with "
     "--calibration)}, ...]; strip = S + (vmm % 2) * 64 + channel",
     1, 0},
    {"adc_threshold", ConfigType::Integer, "30", "Hits with ADC below this are ignored (counted)",
     0, 1023},
    {"fine_time", ConfigType::Boolean, "false",
     "Add BC/TDC fine time: (bc * 256 + tdc) / 256 BC periods after time high/low", 1, 0},
    {"bc_clock_hz", ConfigType::Integer, "44026250", "BC clock frequency in Hz (fine time)", 1e6,
     1e9},
    {"time_gap_ns", ConfigType::Integer, "100",
     "Max time between consecutive hits (time order) of one cluster, ns", 0, 1e9},
    {"strip_gap", ConfigType::Integer, "1",
     "Max missing strips between neighbouring hits of one cluster (0 = adjacent only)", 0, 1023},
    {"match_window_ns", ConfigType::Integer, "200",
     "Max |t_x - t_y| of the first hits of an x and a y cluster forming one event, ns", 0, 1e9},
    {"sort_window_ns", ConfigType::Integer, "2000",
     "Per plane, hits may arrive up to this much out of time order; later ones are counted "
     "(hits.late) and dropped, ns",
     0, 1e9},
    {"cluster_timeout_ms", ConfigType::Integer, "20",
     "Wall time without hits after which open clusters are closed and matched, ms", 1, 60000},
    {"max_tof_ns", ConfigType::Integer, "1000000000",
     "Events with a larger time of flight are rejected (counted), ns", 0, 2147483647},
    {"max_cluster_hits", ConfigType::Integer, "1024",
     "Hits one time group may hold; a full group is closed early (counted)", 16, 65536},
};
const size_t kVmm3ConfigKeyCount = std::size(kVmm3ConfigKeys);

namespace {

/// An integer member of hybrids[i] in [0, maximum].
int64_t hybridInt(const nlohmann::json &h, const char *key, int64_t maximum, size_t index,
                  const std::string &source) {
  const std::string path = fmt::format("hybrids[{}].{}", index, key);
  if (!h.contains(key)) {
    throw ConfigError(fmt::format("{}: key '{}' is missing", source, path));
  }
  const nlohmann::json &v = h.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > maximum) {
    throw ConfigError(fmt::format("{}: key '{}' = {} must be an integer in [0, {}]", source, path,
                                  v.dump(), maximum));
  }
  return v.get<int64_t>();
}

Hybrid parseHybrid(const nlohmann::json &h, size_t index, const Vmm3Config &c,
                   const std::string &source) {
  if (!h.is_object()) {
    throw ConfigError(
        fmt::format("{}: key 'hybrids[{}]' must be an object, got {}", source, index, h.dump()));
  }
  for (const auto &[key, value] : h.items()) {
    if (key != "fiber" && key != "fen" && key != "vmm_pair" && key != "plane" &&
        key != "strip_offset" && key != "hybrid_id") {
      throw ConfigError(fmt::format("{}: unknown key 'hybrids[{}].{}' (= {}); known: fiber, fen, "
                                    "vmm_pair, plane, strip_offset, hybrid_id",
                                    source, index, key, value.dump()));
    }
  }
  Hybrid out;
  out.fiber = static_cast<uint8_t>(hybridInt(h, "fiber", readout::kMaxFiber, index, source));
  out.fen = static_cast<uint8_t>(hybridInt(h, "fen", readout::kMaxFen, index, source));
  out.vmmPair = static_cast<uint8_t>(hybridInt(h, "vmm_pair", kVmmPairs - 1, index, source));
  const nlohmann::json plane = h.value("plane", nlohmann::json());
  if (plane == "x" || plane == "y") {
    out.plane = plane == "x" ? Plane::X : Plane::Y;
  } else {
    throw ConfigError(fmt::format("{}: key 'hybrids[{}].plane' = {} must be \"x\" or \"y\"", source,
                                  index, plane.dump()));
  }
  const int64_t strips = c.strips(out.plane);
  const int64_t maxOffset = strips - 2 * kChannelsPerVmm;
  if (maxOffset < 0) {
    throw ConfigError(fmt::format("{}: key 'hybrids[{}]': a hybrid has 128 strips but plane {} "
                                  "has only {} (n{})",
                                  source, index, planeName(out.plane), strips,
                                  planeName(out.plane)));
  }
  out.stripOffset = static_cast<uint16_t>(hybridInt(h, "strip_offset", maxOffset, index, source));
  if (h.contains("hybrid_id")) {
    const nlohmann::json &id = h.at("hybrid_id");
    if (!id.is_string() || !isHybridId(id.get<std::string>())) {
      throw ConfigError(fmt::format("{}: key 'hybrids[{}].hybrid_id' = {} must be a string of {} "
                                    "hex digits",
                                    source, index, id.dump(), kHybridIdDigits));
    }
    out.hybridId = normalHybridId(id.get<std::string>());
  }
  return out;
}

} // namespace

bool isHybridId(const std::string &id) noexcept {
  return id.size() == kHybridIdDigits &&
         std::all_of(id.begin(), id.end(), [](unsigned char c) { return std::isxdigit(c) != 0; });
}

std::string normalHybridId(std::string id) {
  std::transform(id.begin(), id.end(), id.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return id;
}

Vmm3Config parseVmm3Config(const nlohmann::json &j, const std::string &source) {
  Vmm3Config c;
  c.instrument = j.at("instrument").get<std::string>();
  c.detectorType = j.at("detector_type").get<uint8_t>();
  c.nx = j.at("nx").get<uint32_t>();
  c.ny = j.at("ny").get<uint32_t>();
  c.adcThreshold = j.at("adc_threshold").get<uint16_t>();
  c.fineTime = j.at("fine_time").get<bool>();
  c.bcClockHz = j.at("bc_clock_hz").get<int64_t>();
  c.timeGapNs = j.at("time_gap_ns").get<int64_t>();
  c.stripGap = j.at("strip_gap").get<uint32_t>();
  c.matchWindowNs = j.at("match_window_ns").get<int64_t>();
  c.sortWindowNs = j.at("sort_window_ns").get<int64_t>();
  c.clusterTimeoutNs = j.at("cluster_timeout_ms").get<int64_t>() * 1'000'000;
  c.maxTofNs = j.at("max_tof_ns").get<int64_t>();
  c.maxClusterHits = j.at("max_cluster_hits").get<uint32_t>();
  if (static_cast<int64_t>(c.nx) * c.ny >= 0x7FFF'FFFF) {
    throw ConfigError(fmt::format("{}: nx * ny = {} does not fit a pixel id (int32)", source,
                                  static_cast<int64_t>(c.nx) * c.ny));
  }

  const nlohmann::json &hybrids = j.at("hybrids");
  if (hybrids.empty()) {
    throw ConfigError(source + ": key 'hybrids' must list at least one hybrid, got []");
  }
  // Strips already claimed per plane, to refuse overlapping hybrids.
  std::array<std::vector<bool>, kPlanes> used{std::vector<bool>(c.nx), std::vector<bool>(c.ny)};
  for (size_t i = 0; i < hybrids.size(); ++i) {
    const Hybrid h = parseHybrid(hybrids[i], i, c, source);
    const size_t slotIndex =
        (static_cast<size_t>(h.fiber) * (readout::kMaxFen + 1) + h.fen) * kVmmPairs + h.vmmPair;
    if (c.slots[slotIndex].known) {
      throw ConfigError(fmt::format("{}: key 'hybrids[{}]': fiber {} fen {} vmm_pair {} is listed "
                                    "twice",
                                    source, i, h.fiber, h.fen, h.vmmPair));
    }
    auto &planeUsed = used[static_cast<size_t>(h.plane)];
    for (uint32_t s = h.stripOffset; s < h.stripOffset + 2U * kChannelsPerVmm; ++s) {
      if (planeUsed[s]) {
        throw ConfigError(fmt::format("{}: key 'hybrids[{}].strip_offset' = {}: strip {} of plane "
                                      "{} belongs to another hybrid too",
                                      source, i, h.stripOffset, s, planeName(h.plane)));
      }
      planeUsed[s] = true;
    }
    for (size_t k = 0; k < c.hybrids.size() && !h.hybridId.empty(); ++k) {
      if (c.hybrids[k].hybridId == h.hybridId) {
        throw ConfigError(fmt::format("{}: key 'hybrids[{}].hybrid_id' = \"{}\" is hybrids[{}]'s "
                                      "too",
                                      source, i, h.hybridId, k));
      }
    }
    c.slots[slotIndex] = HybridSlot{true, h.plane, h.stripOffset, static_cast<uint16_t>(i)};
    c.hybrids.push_back(h);
  }
  return c;
}

Vmm3Config loadVmm3Config(const std::string &path) {
  return parseVmm3Config(
      validateModuleConfig("vmm3", kVmm3ConfigKeys, kVmm3ConfigKeyCount, readConfigFile(path), path),
      path);
}

} // namespace efu::vmm3
