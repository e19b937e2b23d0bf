// SPDX-License-Identifier: BSD-2-Clause
// Command-line options of the efu daemon.
#pragma once

#include "common/kafka/KafkaOptions.h"
#include "common/system/CliFwd.h"

#include <cstdint>
#include <string>
#include <vector>

namespace efu {

/// Exit codes of efu besides 0 (stopped, everything produced was delivered) and 1
/// (cli::kExitCouldNotStart: bad option, config, module, socket or log file). Documented in the
/// README and docs/deploy.md.
constexpr int kExitUndelivered = 3; ///< stopped, but Kafka messages were not delivered
constexpr int kExitKafkaFatal = 4;  ///< stopped because the Kafka producer failed fatally

/// Default messages per recvmmsg: 64 datagrams, or 8 GRO messages of up to 64 KiB each (a batch
/// of 64 such buffers walks 4 MiB through the cache; 8 lost less at 16-24 Gb/s of 1472 B).
constexpr unsigned kRxBatch = 64;
constexpr unsigned kGroRxBatch = 8;

/// Most memory the ring buffers of all rx queues may take together (--ring-slots x slot size x
/// --rx-queues): past this a typo costs gigabytes and a minute of page faults at start.
constexpr uint64_t kMaxRingBytes = uint64_t{1} << 30;

struct DaemonOptions {
  std::string detector;
  std::vector<std::string> modulePaths;
  bool helpModule = false;
  std::string configFile;
  std::string calibrationFile; ///< --calibration: handed to the module as JSON
  std::string dataAddress = "0.0.0.0";
  uint16_t dataPort = 9000;
  int rcvbufBytes = 12 * 1024 * 1024;
  std::vector<int> rxCpus{-1}; ///< one for all rx queues, or one per queue
  std::vector<int> procCpus{-1}; ///< one for all processing threads, or one per thread
  /// --proc-threads: processing threads, one module partition each; 0 = not given (1, or the
  /// module's threads key such as timepix3's ParallelThreads).
  unsigned procThreads = 0;
  std::string threads = "auto"; ///< "auto", "1" (run to completion) or "2" (hand-off)
  unsigned rxQueues = 1;
  bool reusePort = false; ///< SO_REUSEPORT with one rx queue: other processes share the port
  bool gro = false;
  int rxPriority = 0;
  int busyPollUs = 0;
  std::string rxTimestamps = "batch"; ///< "batch" or "kernel" (SO_TIMESTAMPNS)
  size_t ringSlots = 256;
  unsigned rxBatch = 0; ///< 0 = kRxBatch, or kGroRxBatch with --gro
  double stopAfterS = 0;
  double statsIntervalS = 1;
  uint16_t cmdPort = 8888;
  std::string cmdAddress = "127.0.0.1";
  double cmdIdleTimeoutS = 60;  ///< close control clients silent this long (0 = never)
  std::string cmdSecretFile;    ///< first line = secret that EXIT needs ("" = none)
  bool cmdReadOnly = false;     ///< refuse EXIT on the control port
  std::string logLevel = "info";
  std::string logFile;
  std::string instrument; ///< --instrument (alias --service-id); "" = the module name
  std::string graphiteHost;   ///< -g/--graphite: carbon host ("" = no Graphite output)
  uint16_t graphitePort = 2003; ///< -o/--gport
  std::string region = "0";   ///< -r/--region: the metric prefix's region part
  std::string graphitePrefix; ///< --graphite-prefix ("" = efu.<instrument>.<region>.)
  uint16_t metricsPort = 0;   ///< --metrics-port: Prometheus /metrics (0 = off)
  std::string metricsAddress = "127.0.0.1"; ///< --metrics-addr
  bool noKafka = false;
  bool check = false; ///< --check: pre-flight checks instead of running
  kafka::KafkaOptions kafka;
};

/// --rx-batch as used: the given value, or the default for the receive mode.
[[nodiscard]] inline unsigned rxBatch(const DaemonOptions &o) {
  return o.rxBatch != 0 ? o.rxBatch : (o.gro ? kGroRxBatch : kRxBatch);
}

/// Registers the daemon's options on `app` (defaults printed by --help).
void addDaemonOptions(CLI::App &app, DaemonOptions &options);

/// Whether the module runs on the rx thread: --threads 1, or --threads auto with one rx queue
/// whose thread is pinned to the same CPU as the processing thread, or a process allowed on a
/// single CPU. Two threads on one core only add scheduling gaps (docs/architecture.md).
[[nodiscard]] bool runToCompletion(const DaemonOptions &options, int availableCpus);

} // namespace efu
