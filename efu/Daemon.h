// SPDX-License-Identifier: BSD-2-Clause
// The efu daemon as an object: build it, serve until something asks to stop, then stop and
// account. main() is these three calls; tests make the same calls in-process.
#pragma once

#include "common/net/UdpReceiver.h"
#include "common/sdk/Module.h"
#include "common/sdk/ModuleLoader.h"
#include "common/stats/Stats.h"
#include "common/system/LogRateLimit.h"
#include "efu/DaemonContext.h"
#include "efu/GraphiteOutput.h"
#include "efu/IntervalReport.h"
#include "efu/KafkaOutput.h"
#include "efu/Options.h"
#include "efu/Runtime.h"
#include "efu/control/ControlProtocol.h"
#include "efu/control/ControlServer.h"
#include "efu/metrics/MetricsServer.h"

#include <spdlog/logger.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace efu {

class CpuUsage;

/// Thrown by the Daemon's constructor when a stop signal came during start-up (after it was
/// logged): the run ends before receiving anything, with exit code 0.
class StartupStopped : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One run of efu. The constructor sets up logging and the stop signals (SIGHUP reopens the log,
/// a repeated stop signal is only counted), loads and creates the module, opens the receive
/// sockets, Kafka (or, with --no-kafka, a sink that counts events), the control port,
/// Prometheus metrics and Graphite; it throws what the run would fail to start with, and
/// StartupStopped when a stop signal came meanwhile (main() installs the handlers before it is
/// called, so no signal meets the default action). serve()
/// starts the data path and returns why it should stop; stop() drains, flushes and returns the
/// exit code. Call serve() once and then stop() once, on the same thread.
class Daemon {
public:
  explicit Daemon(const DaemonOptions &options);
  ~Daemon();
  Daemon(const Daemon &) = delete;
  Daemon &operator=(const Daemon &) = delete;

  /// Starts the rx (and processing) threads and runs the main loop: the control port, the
  /// interval report, SIGHUP. Returns the stop reason as logged: "EXIT command", the signal's
  /// name, "--stopafter" or "the Kafka producer cannot deliver any more".
  [[nodiscard]] std::string serve();

  /// Drains the rings, flushes the module and Kafka (the control port keeps answering) and logs
  /// the whole run. Returns 0, kExitKafkaFatal or kExitUndelivered.
  int stop(const std::string &reason);

  /// What EXIT on the control port does; safe from any thread (serve() notices within its
  /// 100 ms poll).
  void requestExit() noexcept { exitRequested_.store(true, std::memory_order_relaxed); }

  /// The counters. Every counter is registered by the end of the constructor; values may be
  /// read from any thread.
  [[nodiscard]] const Stats &stats() const noexcept { return stats_; }
  /// The first receive socket's port (the kernel's choice with --port 0).
  [[nodiscard]] uint16_t dataPort() const noexcept { return receivers_.front()->port(); }
  /// The control port (the kernel's choice with --cmd-port 0).
  [[nodiscard]] uint16_t controlPort() const noexcept { return control_->port(); }

private:
  std::pair<nlohmann::json, nlohmann::json> loadConfiguration();
  void registerMainCounters();
  void openReceiveSockets();
  void openEventOutput();
  void createModule(nlohmann::json config, nlohmann::json calibration);
  void createDataPath();
  void openControlPort();
  void openMetrics();
  void openGraphite();
  void stopIfAsked(const char *step) const;

  void logReceiving() const;
  void updateMainCounters(int64_t nowNs);
  [[nodiscard]] std::string statusJson(int64_t nowNs) const;
  void reportInterval(int64_t nowNs);
  void handleHangup();
  void logSuppressedCalibModes();
  [[nodiscard]] std::string stopReason(int64_t nowNs) const;
  void drainAndFlush();
  [[nodiscard]] int accountDelivery(bool kafkaFatal);

  // Declared in the order they are built: destroyed in reverse, so the module goes before its
  // library, and the control server before what its handlers read.
  DaemonOptions options_;
  std::shared_ptr<spdlog::logger> log_;
  std::shared_ptr<ModuleLibrary> library_;
  std::string service_;
  std::string eventSource_; ///< the default ev44 source_name (docs/kafka.md, Source names)
  Stats stats_;
  Counter *uptime_ = nullptr;
  Counter *kernelRcvbufErrors_ = nullptr;
  Counter *residentBytes_ = nullptr;
  Counter *openFds_ = nullptr;
  Counter *logReopenFailures_ = nullptr;
  int64_t rcvbufErrorsAtStart_ = -1;
  std::vector<std::unique_ptr<UdpReceiver>> receivers_;
  uint32_t intervalMs_ = 0;
  std::unique_ptr<KafkaOutput> kafka_;
  std::unique_ptr<sdk::EventSink> noKafkaSink_;
  std::unique_ptr<DaemonContext> context_;
  ModulePtr module_;
  /// Partitions 1.. of the module (--proc-threads); partition 0 is context_ and module_.
  std::vector<std::unique_ptr<sdk::EventSink>> partitionNoKafkaSinks_;
  std::vector<std::unique_ptr<DaemonContext>> partitionContexts_;
  std::vector<ModulePtr> partitionModules_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<IntervalReport> report_;
  std::unique_ptr<CpuUsage> cpu_;
  std::atomic<bool> exitRequested_{false};
  static constexpr int64_t kCalibLogIntervalNs = 10'000'000'000;
  /// CALIB_MODE_SET's log lines (main thread).
  LogRateLimit calibLog_{kCalibLogIntervalNs, 0, false, 0, {}};
  std::unique_ptr<ControlProtocol> protocol_;
  std::unique_ptr<ControlServer> control_;
  std::unique_ptr<metrics::MetricsServer> metricsServer_;
  std::unique_ptr<GraphiteOutput> graphite_;

  int64_t startNs_ = 0;
  int64_t intervalNs_ = 0;
  int64_t stopAtNs_ = 0; ///< --stopafter as a monotonic time, 0 = none
  int64_t nextReportNs_ = 0;
  int stopSignalsAtStop_ = 0; ///< stopSignalCount() when serve() returned
};

} // namespace efu
