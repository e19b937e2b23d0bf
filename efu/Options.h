// SPDX-License-Identifier: BSD-2-Clause
// Command-line options of the efu daemon.
#pragma once

#include "common/kafka/KafkaOptions.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace efu {

struct DaemonOptions {
  std::string detector;
  std::vector<std::string> modulePaths;
  bool helpModule = false;
  std::string configFile;
  std::string dataAddress = "0.0.0.0";
  uint16_t dataPort = 9000;
  int rcvbufBytes = 12 * 1024 * 1024;
  int rxCpu = -1;
  int procCpu = -1;
  size_t ringSlots = 2048;
  unsigned rxBatch = 64;
  double stopAfterS = 0;
  double statsIntervalS = 1;
  uint16_t cmdPort = 8888;
  std::string cmdAddress = "127.0.0.1";
  std::string logLevel = "info";
  std::string logFile;
  std::string serviceId; ///< "" = the module name
  bool noKafka = false;
  kafka::KafkaOptions kafka;
};

/// Registers the daemon's options on `app` (defaults printed by --help).
void addDaemonOptions(CLI::App &app, DaemonOptions &options);

} // namespace efu
