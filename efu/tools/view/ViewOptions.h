// SPDX-License-Identifier: BSD-2-Clause
// Command-line options of efu-view (docs/tools.md, "efu-view").
#pragma once

#include "common/system/CliFwd.h"

#include <cstdint>
#include <string>
#include <vector>

namespace efu::tools::view {

/// Largest --tof-bins and --tof-max-ns, and the --window range (0, or 1..kMaxWindowS).
inline constexpr uint32_t kMaxTofBins = 100'000;
inline constexpr int64_t kMaxTofRangeNs = 10'000'000'000'000; // 10^13 ns = 10 000 s
inline constexpr double kMaxWindowS = 3600.0;

struct ViewOptions {
  std::string brokers = "localhost:9092";
  std::vector<std::string> topics;
  std::string geometryPath;            ///< --geometry: the instrument config giving the image
  std::string module;                  ///< --det: the module that reads --geometry
  std::vector<std::string> moduleDirs; ///< --module-path
  std::string from = "end";
  std::string httpAddress = "127.0.0.1";
  uint16_t httpPort = 8600; ///< 0: the kernel picks one (printed once listening)
  uint32_t tofBins = 1000;
  int64_t tofMaxNs = 100'000'000;
  double windowS = 0.0; ///< 0: since the start or the last reset
  std::vector<std::string> settings;
  std::string logLevel = "info";
  double stopAfterS = 0.0; ///< 0: until SIGINT/SIGTERM
};

/// Registers efu-view's options on `app`, with their checks (defaults printed by --help).
/// -t/--topic is required.
void addViewOptions(CLI::App &app, ViewOptions &options);

} // namespace efu::tools::view
