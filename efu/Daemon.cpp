// SPDX-License-Identifier: BSD-2-Clause
// The efu daemon: build, serve, stop and account (efu/Daemon.h).
#include "efu/Daemon.h"

#include "common/net/TcpListener.h"
#include "common/sdk/ModuleConfig.h"
#include "common/system/CpuUsage.h"
#include "common/system/Log.h"
#include "common/system/ProcStats.h"
#include "common/system/StopSignals.h"
#include "common/time/Time.h"
#include "efu/Startup.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <thread>

#ifndef EFU_VERSION
#error "EFU_VERSION must be defined by the build"
#endif
#ifndef EFU_BUILD_STRING
#error "EFU_BUILD_STRING must be defined by the build"
#endif

namespace efu {

namespace {

/// With --no-kafka: events are counted and dropped.
class CountingEventSink final : public sdk::EventSink {
public:
  explicit CountingEventSink(Counter &events) : events_(events) {}
  void add(int64_t, int32_t, int32_t) noexcept override { events_.add(); }

private:
  Counter &events_;
};

} // namespace

// The steps run in the order the counters and log lines have always come in: counters are
// listed (control port, /metrics) in the order they were registered.
Daemon::Daemon(const DaemonOptions &options)
    : options_(options), log_(setupLogging("efu", options.logLevel, options.logFile)) {
  installStopSignals(Hangup::ReopenLog, Repeat::Ignore);
  stopIfAsked("setting up logging");
  library_ = loadModule(options_.detector, moduleSearchPath(options_.modulePaths));
  stopIfAsked("loading the module");
  // -d loki: the instrument's name; -d caen: the module's.
  service_ = options_.instrument.empty() ? options_.detector : options_.instrument;
  auto [config, calibration] = loadConfiguration();
  stopIfAsked("loading the configuration");
  registerMainCounters();
  openReceiveSockets();
  intervalMs_ = static_cast<uint32_t>(options_.statsIntervalS * 1000);
  openEventOutput();
  stopIfAsked("opening the sockets and Kafka");
  createModule(std::move(config), std::move(calibration));
  stopIfAsked("creating the module");
  createDataPath();
  openControlPort();
  openMetrics();
  openGraphite();
  stopIfAsked("opening the control port");
}

/// Ends start-up (StartupStopped) once a stop signal has come, with a log line that says when.
void Daemon::stopIfAsked(const char *step) const {
  if (const int signal = stopSignal(); signal != 0) {
    const std::string what = fmt::format(
        "{} during start-up ({}): stopping before receiving anything", signalName(signal), step);
    log_->info("{}", what);
    throw StartupStopped(what);
  }
}

Daemon::~Daemon() = default;

/// The module's config and calibration, checked against the instrument; logs the start line.
std::pair<nlohmann::json, nlohmann::json> Daemon::loadConfiguration() {
  const EfuModuleDescriptor &descriptor = library_->descriptor();
  auto config = loadModuleConfig(descriptor, options_.configFile);
  checkInstrument(options_.detector, config, options_.configFile);
  eventSource_ = options_.kafka.sourceNameFor(defaultSourceName(
      descriptor, config, options_.configFile.empty() ? "(defaults)" : options_.configFile,
      service_));
  auto calibration = loadCalibration(options_.calibrationFile);
  log_->info("efu {} starting: module {} {} from {}, instrument '{}'", EFU_VERSION, descriptor.name,
             descriptor.version, library_->path().string(), service_);
  return {std::move(config), std::move(calibration)};
}

void Daemon::registerMainCounters() {
  // Uptime is a clock reading (a rate of it says nothing), so a gauge like the other two.
  uptime_ = &stats_.add("main.uptime", CounterKind::Gauge);
  kernelRcvbufErrors_ = &stats_.add("kernel.udp.rcvbuf_errors");
  residentBytes_ = &stats_.add("process.rss_bytes", CounterKind::Gauge);
  openFds_ = &stats_.add("process.fds", CounterKind::Gauge);
  logReopenFailures_ = &stats_.add("log.reopen_failures");
  rcvbufErrorsAtStart_ = readSnmpUdp("RcvbufErrors");
}

void Daemon::openReceiveSockets() {
  receivers_ = openReceivers(options_);
  const UdpReceiver &receiver = *receivers_.front();
  if (receiver.grantedRcvbufBytes() < options_.rcvbufBytes) {
    log_->warn("socket receive buffer: requested {} B, kernel granted {} B (net.core.rmem_max); "
               "to allow it run: {}",
               options_.rcvbufBytes, receiver.grantedRcvbufBytes(),
               rmemMaxAdvice(options_.rcvbufBytes));
  } else {
    log_->info("socket receive buffer: {} B{}", receiver.grantedRcvbufBytes(),
               receiver.rcvbufForced() ? " (forced past net.core.rmem_max as root)" : "");
  }
  if (!receiver.busyPollProblem().empty()) {
    log_->warn("{}; receiving without busy polling", receiver.busyPollProblem());
  }
}

void Daemon::openEventOutput() {
  if (options_.noKafka) {
    noKafkaSink_ = std::make_unique<CountingEventSink>(stats_.add("events.unpublished"));
    log_->info("Kafka output disabled (--no-kafka)");
  } else {
    kafka::checkTopicNames(options_.kafka, service_);
    kafka_ = std::make_unique<KafkaOutput>(options_.kafka, service_, eventSource_, stats_, *log_,
                                           intervalMs_);
    log_->info("Kafka: {}", kafka_->describe());
  }
}

void Daemon::createModule(nlohmann::json config, nlohmann::json calibration) {
  const PartitionPlan plan = planPartitions(options_, library_->descriptor(), config);
  if (!plan.replaced.empty()) {
    log_->info("{} replaces {}", plan.from, plan.replaced);
  }
  if (plan.count > 1) {
    log_->info("{} processing threads ({}), one partition of module '{}' each, by {}", plan.count,
               plan.from, library_->descriptor().name, library_->descriptor().partitionKey);
  }
  const unsigned partitions = plan.count;
  const std::string configSource = options_.configFile.empty() ? "(defaults)" : options_.configFile;
  for (unsigned p = 0; p < partitions; ++p) {
    sdk::EventSink *events = nullptr;
    PartitionOutput *output = nullptr;
    if (p == 0) {
      events = kafka_ ? &kafka_->events() : noKafkaSink_.get();
    } else if (kafka_) {
      output = &kafka_->addPartition(stats_);
      events = &output->events();
    } else {
      events = partitionNoKafkaSinks_
                   .emplace_back(std::make_unique<CountingEventSink>(
                       stats_.addPart("events.unpublished")))
                   .get();
    }
    auto context = std::make_unique<DaemonContext>(stats_, *log_, *events, config, configSource,
                                                   intervalMs_, calibration,
                                                   options_.calibrationFile);
    context->setPartition(p, partitions);
    if (output != nullptr) {
      context->setEventSources(
          [output](const std::string &name) -> sdk::EventSink & { return output->events(name); });
      context->setDataArraySources([output](const std::string &name) -> sdk::DataArraySink & {
        return output->dataArrays(name);
      });
    } else if (kafka_) {
      context->setEventSources(
          [this](const std::string &name) -> sdk::EventSink & { return kafka_->events(name); });
      context->setDataArraySources([this](const std::string &name) -> sdk::DataArraySink & {
        return kafka_->dataArrays(name);
      });
    } else {
      context->setDiscardedArrayLimit(kafka::maxPayloadBytes(options_.kafka));
    }
    ModulePtr module = efu::createModule(library_, *context);
    if (p == 0) {
      context_ = std::move(context);
      module_ = std::move(module);
    } else {
      partitionContexts_.push_back(std::move(context));
      partitionModules_.push_back(std::move(module));
    }
  }
}

/// The runtime over every receive socket, the interval report and the per-thread CPU counters.
void Daemon::createDataPath() {
  std::vector<UdpReceiver *> queues;
  for (auto &r : receivers_) {
    queues.push_back(r.get());
  }
  std::vector<Partition> partitions{{module_.get(), kafka_.get()}};
  for (size_t p = 0; p < partitionModules_.size(); ++p) {
    partitions.push_back({partitionModules_[p].get(),
                          kafka_ ? &kafka_->partition(p) : nullptr});
  }
  const auto count = static_cast<unsigned>(partitions.size());
  runtime_ = std::make_unique<Runtime>(runtimeConfig(options_, count), queues,
                                       std::move(partitions), stats_, *log_);
  report_ = std::make_unique<IntervalReport>(stats_, context_->lostCounter(),
                                             context_->expectedCounter());
  cpu_ = std::make_unique<CpuUsage>(stats_);
  Runtime &runtime = *runtime_;
  for (size_t q = 0; q < runtime.queueCount(); ++q) {
    cpu_->addThread(runtime.queueCount() > 1 ? "rx" + std::to_string(q) : std::string("rx"),
                    [&runtime, q] { return runtime.rxTid(q); });
  }
  if (runtime.threading() == Threading::HandOff) {
    for (size_t p = 0; p < runtime.partitionCount(); ++p) {
      cpu_->addThread(runtime.partitionCount() > 1 ? "proc" + std::to_string(p) : std::string("proc"),
                      [&runtime, p] { return runtime.procTid(p); });
    }
  }
}

/// The control protocol's view of this daemon and its TCP server.
void Daemon::openControlPort() {
  ControlInfo info;
  info.version = EFU_VERSION " " EFU_BUILD_STRING;
  info.detectorInfo = library_->descriptor().name;
  info.runtimeStatus = [this] { return report_->runtimeStatus(); };
  info.runtimeStats = [this] {
    return fmt::format(R"({{"rx":{},"cpu":{}}})", report_->json(), cpu_->json());
  };
  info.requestExit = [this] { requestExit(); };
  info.report = [this](std::string_view name) -> std::optional<std::string> {
    const sdk::Report *found = context_->findReport(name);
    return found != nullptr ? std::optional(found->read()) : std::nullopt;
  };
  if (kafka_) {
    kafka::RawSampler &sampler = *kafka_->sampler();
    // Only a change is logged, and at most one line per kCalibLogIntervalNs (the rest counted
    // and said in the interval report): a client repeating the command cannot fill the disk.
    info.setCalibMode = [&sampler, this](bool on) {
      if (sampler.all() == on) {
        return;
      }
      sampler.setAll(on);
      const std::string line =
          fmt::format("CALIB_MODE_SET {}: {}", on ? 1 : 0,
                      on ? fmt::format("every datagram is copied to '{}'", sampler.topic())
                         : std::string("raw-data mode off"));
      if (calibLog_.allow(monotonicNs())) {
        log_->info("{}", line);
      } else {
        calibLog_.last = line;
      }
    };
    info.calibMode = [&sampler] { return sampler.all(); };
  }
  info.secret = readControlSecret(options_.cmdSecretFile);
  info.readOnly = options_.cmdReadOnly;
  protocol_ = std::make_unique<ControlProtocol>(stats_, std::move(info));
  ControlServerOptions controlOptions;
  controlOptions.address = options_.cmdAddress;
  controlOptions.port = options_.cmdPort;
  controlOptions.idleTimeoutMs = static_cast<int64_t>(options_.cmdIdleTimeoutS * 1000);
  control_ = std::make_unique<ControlServer>(*protocol_, controlOptions, stats_);
  if (const auto exposure = controlExposure(options_, control_->port()); !exposure.empty()) {
    log_->warn("{}", exposure);
  }
}

void Daemon::openMetrics() {
  if (options_.metricsPort == 0) {
    return;
  }
  metricsServer_ = std::make_unique<metrics::MetricsServer>(
      stats_, metrics::MetricsServerOptions{
                  options_.metricsAddress, options_.metricsPort, {service_, options_.region}});
  log_->info("Prometheus metrics on http://{}/metrics",
             endpoint(options_.metricsAddress, metricsServer_->port()));
  if (const auto exposure = metricsExposure(options_, metricsServer_->port()); !exposure.empty()) {
    log_->warn("{}", exposure);
  }
}

void Daemon::openGraphite() {
  if (options_.graphiteHost.empty()) {
    return;
  }
  std::string prefix = options_.graphitePrefix.empty()
                           ? "efu." + service_ + "." + options_.region + "."
                           : options_.graphitePrefix;
  if (prefix.back() != '.') {
    prefix += '.';
  }
  graphite_ = std::make_unique<GraphiteOutput>(
      GraphiteOptions{options_.graphiteHost, options_.graphitePort, prefix}, stats_, *log_);
  log_->info("Graphite: every counter to {}:{} as {}<counter> once per stats interval",
             options_.graphiteHost, options_.graphitePort, prefix);
}

std::string Daemon::serve() {
  startNs_ = monotonicNs();
  runtime_->start();
  logReceiving();
  intervalNs_ = static_cast<int64_t>(options_.statsIntervalS * 1e9);
  stopAtNs_ =
      options_.stopAfterS > 0 ? startNs_ + static_cast<int64_t>(options_.stopAfterS * 1e9) : 0;
  nextReportNs_ = startNs_ + intervalNs_;
  std::string reason;
  while (reason.empty()) {
    const int64_t nowNs = monotonicNs();
    const int64_t waitMs = std::clamp<int64_t>((nextReportNs_ - nowNs) / kNsPerMs, 0, 100);
    control_->poll(static_cast<int>(waitMs));
    const int64_t afterNs = monotonicNs();
    if (afterNs >= nextReportNs_) {
      reportInterval(afterNs);
      nextReportNs_ += intervalNs_;
    }
    if (takeHangup()) {
      handleHangup();
    }
    reason = stopReason(afterNs);
  }
  stopSignalsAtStop_ = stopSignalCount(); // any after this are repeats, logged by the stop
  return reason;
}

void Daemon::logReceiving() const {
  log_->info("receiving UDP on {}:{} ({} rx queue{}, {}, batch {}{}{}); control on {}:{}",
             options_.dataAddress, receivers_.front()->port(), runtime_->queueCount(),
             runtime_->queueCount() > 1 ? "s" : "",
             runtime_->threading() == Threading::RunToCompletion
                 ? std::string("module on the rx thread")
                 : fmt::format("processing thread behind {}-slot rings", options_.ringSlots),
             rxBatch(options_), options_.gro ? ", GRO" : "",
             options_.rxTimestamps == "kernel" ? ", kernel timestamps" : "", options_.cmdAddress,
             options_.cmdPort);
}

void Daemon::updateMainCounters(int64_t nowNs) {
  uptime_->set((nowNs - startNs_) / kNsPerSec);
  cpu_->sample(nowNs);
  residentBytes_->set(residentBytes());
  openFds_->set(openFileDescriptors());
  const int64_t rcvbufErrors = readSnmpUdp("RcvbufErrors");
  if (rcvbufErrors >= 0 && rcvbufErrorsAtStart_ >= 0) {
    kernelRcvbufErrors_->set(rcvbufErrors - rcvbufErrorsAtStart_);
  }
}

/// The status message published to Kafka with the counters.
std::string Daemon::statusJson(int64_t nowNs) const {
  const EfuModuleDescriptor &descriptor = library_->descriptor();
  return fmt::format(R"({{"module":"{}","module_version":"{}","uptime_s":{},"rx":{},"cpu":{}}})",
                     descriptor.name, descriptor.version, (nowNs - startNs_) / kNsPerSec,
                     report_->json(), cpu_->json());
}

/// Once per --stats-interval: the log line, and the counters to Kafka and Graphite.
void Daemon::reportInterval(int64_t nowNs) {
  updateMainCounters(nowNs);
  log_->info("{} | {}", report_->line(nowNs), cpu_->line());
  if (calibLog_.dueReport(nowNs)) {
    logSuppressedCalibModes();
  }
  if (kafka_) {
    kafka_->requestPublish(statusJson(nowNs));
  }
  if (graphite_) {
    graphite_->publish(realtimeNs() / kNsPerSec);
  }
}

void Daemon::logSuppressedCalibModes() {
  log_->info("{} further CALIB_MODE_SET changes not logged (at most one line per {} s; the "
             "last: {})",
             calibLog_.suppressed, calibLog_.intervalNs / kNsPerSec, calibLog_.last);
  calibLog_.reported();
}

/// SIGHUP reopens the log file (logrotate); a failure keeps the old file and is counted.
void Daemon::handleHangup() {
  const LogReopen reopened = reopenLogFile();
  if (reopened.status == LogReopen::Status::Failed) {
    logReopenFailures_->add();
    log_->error("SIGHUP: {}; still writing to the log file open before (the next SIGHUP "
                "tries again)",
                reopened.problem);
  } else {
    log_->info(reopened.status == LogReopen::Status::Reopened ? "SIGHUP: log file reopened"
                                                              : "SIGHUP: no --log-file to reopen");
  }
}

/// "" to keep serving, else why to stop (the first that applies, in this order).
std::string Daemon::stopReason(int64_t nowNs) const {
  if (exitRequested_.load(std::memory_order_relaxed)) {
    return "EXIT command";
  }
  if (const int signal = stopSignal(); signal != 0) {
    return signalName(signal);
  }
  if (stopAtNs_ != 0 && nowNs >= stopAtNs_) {
    return "--stopafter";
  }
  if (kafka_ && kafka_->fatal()) {
    return "the Kafka producer cannot deliver any more";
  }
  return {};
}

int Daemon::stop(const std::string &reason) {
  log_->info("stopping ({}): draining the ring and flushing", reason);
  if (calibLog_.suppressed > 0) {
    logSuppressedCalibModes();
  }
  updateMainCounters(monotonicNs());
  if (kafka_) {
    kafka_->requestPublish(statusJson(monotonicNs()));
  }
  drainAndFlush();
  module_.reset();
  const bool kafkaFatal = kafka_ && kafka_->fatal();
  kafka_.reset(); // discards (and counts) what stayed undelivered
  // After the producer is gone: its counts are final, so this line and the last one agree
  // (nothing queued; failed includes what was discarded).
  log_->info("whole run: {}", report_->total(monotonicNs()));
  if (options_.noKafka) {
    log_->info("efu stopped");
    return 0;
  }
  return accountDelivery(kafkaFatal);
}

// The module's thread drains the ring, publishes the final counters and flushes Kafka, all
// within --kafka-flush-timeout: a produce() still blocked on a full queue then (broker gone)
// gives up, and the flush waits only for what is left of the bound. Meanwhile the control port
// keeps answering.
void Daemon::drainAndFlush() {
  const int64_t deadlineNs = monotonicNs() + int64_t{options_.kafka.flushTimeoutMs} * kNsPerMs;
  if (kafka_) {
    kafka_->setFlushDeadline(deadlineNs);
  }
  std::atomic<bool> stopped{false};
  std::thread stopper([this, &stopped] {
    runtime_->stop();
    stopped.store(true);
  });
  bool aborted = false;
  int signalsSeen = stopSignalsAtStop_;
  while (!stopped.load()) {
    control_->poll(20);
    if (const int signals = stopSignalCount(); signals != signalsSeen) {
      log_->info("stop signal again ({} in all): the stop is under way, bounded by "
                 "--kafka-flush-timeout; only SIGKILL cuts it short",
                 signals);
      signalsSeen = signals;
    }
    if (!aborted && kafka_ && monotonicNs() >= deadlineNs) {
      log_->warn("Kafka producer still blocked at the end of --kafka-flush-timeout: giving up "
                 "on queued messages");
      kafka_->abortBlockedProduce();
      aborted = true;
    }
  }
  stopper.join();
}

/// The last line: what Kafka delivered of what was produced, and the exit code that says so.
int Daemon::accountDelivery(bool kafkaFatal) {
  auto value = [this](const char *name) {
    const Counter *counter = stats_.find(name);
    return counter != nullptr ? counter->get() : 0;
  };
  const int64_t produced = value("kafka.produced");
  const int64_t delivered = value("kafka.delivered");
  const int exitCode = kafkaFatal ? kExitKafkaFatal : delivered != produced ? kExitUndelivered : 0;
  log_->log(exitCode == 0 ? spdlog::level::info : spdlog::level::err,
            "efu stopped: Kafka messages produced {}, delivered {}, failed {} (discarded at "
            "shutdown {}){}",
            produced, delivered, value("kafka.failed"), value("kafka.discarded"),
            exitCode == 0 ? std::string() : fmt::format("; exit code {}", exitCode));
  return exitCode;
}

} // namespace efu
