// SPDX-License-Identifier: BSD-2-Clause
// Steps of efu's start that the run and `efu --check` share, so each is written once.
#pragma once

#include "common/net/UdpReceiver.h"
#include "efu/Options.h"
#include "efu/Runtime.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace efu {

/// One socket per rx queue on --dip/--port (SO_REUSEPORT when several), each with --rcvbuf,
/// --gro and --busy-poll as given. Throws NetError naming what could not be set up.
std::vector<std::unique_ptr<UdpReceiver>> openReceivers(const DaemonOptions &options);

/// The data path's configuration from the options, threading decided for this machine and for
/// `partitions` processing threads (0: as --proc-threads says; planPartitions() gives the count).
RuntimeConfig runtimeConfig(const DaemonOptions &options, unsigned partitions = 0);

/// How many processing threads (module partitions) efu runs, and what said so.
struct PartitionPlan {
  unsigned count = 1;
  std::string from = "one processing thread"; ///< "--proc-threads 2", "ParallelThreads 2 in f.json"
  std::string replaced; ///< what --proc-threads replaced (a differing threads key), or ""
};
/// --proc-threads, else the module's threads key in `config` (validated), else 1. Throws
/// std::runtime_error for more than one with a module that cannot be split, or a threads key
/// out of 1..kMaxPartitions.
PartitionPlan planPartitions(const DaemonOptions &options, const EfuModuleDescriptor &descriptor,
                             const nlohmann::json &config);

/// The control secret: the first line of `path`, which must be one word. "" without a file.
/// Throws std::runtime_error naming --cmd-secret-file and the problem.
std::string readControlSecret(const std::string &path);

/// "" when the control port listens on loopback, else the warning to give (who can reach it
/// and what they can do).
std::string controlExposure(const DaemonOptions &options, uint16_t port);

/// "" when the metrics port listens on loopback, else the warning to give.
std::string metricsExposure(const DaemonOptions &options, uint16_t port);

} // namespace efu
