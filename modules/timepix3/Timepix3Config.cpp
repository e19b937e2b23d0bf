// SPDX-License-Identifier: BSD-2-Clause
// The ESS Timepix3 file: key table, defaults and checks.
#include "modules/timepix3/Timepix3Config.h"

#include "common/sdk/CalibrationCheck.h"

#include <cmath>

namespace efu::timepix3 {

using sdk::ConfigType;

const EfuConfigKey kTimepix3ConfigKeys[] = {
    {"Detector", ConfigType::String, nullptr,
     "Must be \"timepix3\" (exactly so, as the ESS EFU requires)", 1, 0},
    {"XResolution", ConfigType::Integer, nullptr, "Camera columns (the ESS file: 256)", 1, 65535},
    {"YResolution", ConfigType::Integer, nullptr, "Camera rows (the ESS file: 256)", 1, 65535},
    {"ParallelThreads", ConfigType::Integer, nullptr,
     "Required, as in the ESS EFU: efu's processing threads for this stream (as --proc-threads; "
     "each clusters every Nth camera datagram whole, so the events do not depend on it)",
     1, 16},
    {"ScaleUpFactor", ConfigType::Integer, "1",
     "Event image = this times the camera resolution (sub-pixel centre of gravity)", 1, 255},
    {"FrequencyHz", ConfigType::Number, "14",
     "Pulse frequency; events later than 1e9 / (integer part) ns after the pulse are dropped "
     "(handlers.pixelevent.event_time_next_pulse_count)",
     1, 4294967295.0},
    {"MaxTimeGapNS", ConfigType::Integer, "1",
     "A hit more than this after the previous one (in time order) starts a new time group", 0,
     4294967295.0},
    {"MaxCoordinateGap", ConfigType::Integer, "5",
     "A hit joins a seed's cluster when its distance to the seed is below this (pixels)", 0, 255},
    {"MinEventSizeHits", ConfigType::Integer, "1",
     "Clusters with fewer hits are dropped (handlers.pixelevent.cluster_size_to_small)", 0,
     4294967295.0},
    {"MinimumToTSum", ConfigType::Integer, "20",
     "Clusters whose time-over-threshold sum is below this are dropped "
     "(handlers.pixelevent.cluster_size_to_small)",
     0, 4294967295.0},
    {"MinEventTimeSpanNS", ConfigType::Integer, "1",
     "Clusters spanning fewer ns (latest - earliest + 1) are dropped "
     "(handlers.pixelevent.time_span_too_short)",
     0, 4294967295.0},
    {"EvrTdcPairWindowNS", ConfigType::Integer, "20000000",
     "efu's own: an EVR and a TDC pair when they arrive at most this far apart (the ESS EFU's "
     "fixed 20 ms)",
     0, 1e15},
    {"comment", ConfigType::String, "\"\"", "Not read (the ESS file's note)", 1, 0},
};
const size_t kTimepix3ConfigKeyCount = std::size(kTimepix3ConfigKeys);

Timepix3Config parseTimepix3Config(const nlohmann::json &config, const std::string &source) {
  const sdk::CalibrationCheck check(source, "");
  Timepix3Config c;
  const nlohmann::json &detector = config.at("Detector");
  if (detector.get<std::string>() != "timepix3") {
    check.fail("Detector", detector,
               "the ESS Timepix3 file says \"timepix3\", as the ESS EFU "
               "requires");
  }
  // ParallelThreads (1..16 by the key table) is the daemon's: it starts that many partitions,
  // and the module reads its own from ModuleContext::partitions(), never from the file.
  c.xResolution = config.at("XResolution").get<uint16_t>();
  c.yResolution = config.at("YResolution").get<uint16_t>();
  c.scaleUpFactor = config.at("ScaleUpFactor").get<uint8_t>();
  c.frequencyHz = config.at("FrequencyHz").get<double>();
  // The ESS EFU turns the frequency into an integer number of Hz before dividing.
  const double wholeHz = std::floor(c.frequencyHz);
  c.periodNs = static_cast<int64_t>(1e9 / wholeHz);
  c.maxTimeGapNs = config.at("MaxTimeGapNS").get<uint32_t>();
  c.maxCoordinateGap = config.at("MaxCoordinateGap").get<uint16_t>();
  c.minEventSizeHits = config.at("MinEventSizeHits").get<uint32_t>();
  c.minimumTotSum = config.at("MinimumToTSum").get<uint32_t>();
  c.minEventTimeSpanNs = config.at("MinEventTimeSpanNS").get<uint32_t>();
  c.pairWindowNs = config.at("EvrTdcPairWindowNS").get<int64_t>();
  if (uint64_t{c.width()} * c.height() >= (uint64_t{1} << 31)) {
    check.fail("XResolution", config.at("XResolution"),
               "ScaleUpFactor * XResolution * ScaleUpFactor * YResolution pixels do not fit "
               "ev44's 31-bit pixel ids");
  }
  return c;
}

} // namespace efu::timepix3
