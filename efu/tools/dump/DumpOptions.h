// SPDX-License-Identifier: BSD-2-Clause
// Command-line options of efu-dump.
#pragma once

#include "common/system/CliFwd.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace efu::tools {

struct DumpOptions {
  std::string brokers = "localhost:9092";
  std::vector<std::string> topics;
  std::string from = "end";
  uint64_t count = 0;
  double timeoutS = 0.0;
  std::string format = "json";
  bool summary = false;
  std::vector<std::string> settings;
  std::string logLevel = "info";
  std::string geometryPath;
  std::string module;                  ///< --det: the module that reads --geometry
  std::vector<std::string> moduleDirs; ///< --module-path
  std::string imagePath;
  uint32_t imageScale = 1;
  bool logScale = false;
  double imageEveryS = 0.0;
  std::string tofPath;
  uint32_t tofBins = 200;
  std::optional<int64_t> tofMaxNs;
  std::string da00Prefix; ///< --da00-png PREFIX
  std::string pcapPath;
  uint16_t pcapPort = 9000;
  std::string report; ///< --report NAME: read from efu's control port instead
  std::string cmdAddress = "127.0.0.1";
  uint16_t cmdPort = 8888;
  std::string reportPng; ///< --report-png PREFIX
};

/// Registers `-d,--det` (needing `geometry`) and `--module-path` in `group`: the module that
/// reads a --geometry file, in efu-dump and efu-view alike.
void addGeometryModuleOptions(CLI::App &app, CLI::Option *geometry, std::string &module,
                              std::vector<std::string> &moduleDirs, const std::string &group);

/// Registers efu-dump's options on `app` (defaults printed by --help). A topic is not required
/// here: without one and without --report the program says so itself.
void addDumpOptions(CLI::App &app, DumpOptions &options);

} // namespace efu::tools
