// SPDX-License-Identifier: BSD-2-Clause
// efu: receives detector datagrams, runs a detector module on them, publishes events and counters.
#include "common/net/UdpReceiver.h"
#include "common/sdk/ModuleConfig.h"
#include "common/stats/Stats.h"
#include "common/system/Affinity.h"
#include "common/system/CliExit.h"
#include "common/system/CpuUsage.h"
#include "common/system/Log.h"
#include "common/system/ProcStats.h"
#include "common/system/StopSignals.h"
#include "common/time/Time.h"
#include "efu/DaemonContext.h"
#include "efu/GraphiteOutput.h"
#include "efu/IntervalReport.h"
#include "efu/KafkaOutput.h"
#include "efu/ModuleLoader.h"
#include "efu/Options.h"
#include "efu/Preflight.h"
#include "efu/Runtime.h"
#include "efu/Startup.h"
#include "efu/control/ControlProtocol.h"
#include "efu/control/ControlServer.h"
#include "efu/metrics/MetricsServer.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <malloc.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <thread>

namespace {

/// With --no-kafka: events are counted and dropped.
class CountingEventSink final : public efu::sdk::EventSink {
public:
  explicit CountingEventSink(efu::Stats &stats) : events_(stats.add("events.unpublished")) {}
  void add(int64_t, int32_t, int32_t) noexcept override { events_.add(); }

private:
  efu::Counter &events_;
};

int run(const efu::DaemonOptions &options) {
  auto log = efu::setupLogging("efu", options.logLevel, options.logFile);
  const auto searchPath = efu::moduleSearchPath(options.modulePaths);
  if (options.detector == "list") {
    std::fputs(efu::describeModules(searchPath).c_str(), stdout);
    return 0;
  }
  const auto library = efu::loadModule(options.detector, searchPath);
  const EfuModuleDescriptor &descriptor = library->descriptor();
  if (options.helpModule) {
    std::fputs(efu::formatModuleHelp(descriptor).c_str(), stdout);
    return 0;
  }
  auto config = efu::loadModuleConfig(descriptor, options.configFile);
  efu::checkInstrument(options.detector, config, options.configFile);
  auto calibration = efu::loadCalibration(options.calibrationFile);
  // -d loki: the instrument's name; -d caen: the module's.
  const std::string service = options.instrument.empty() ? options.detector : options.instrument;
  log->info("efu {} starting: module {} {} from {}, instrument '{}'", EFU_VERSION, descriptor.name,
            descriptor.version, library->path().string(), service);

  efu::Stats stats;
  // Uptime is a clock reading (a rate of it says nothing), so a gauge like the other two.
  efu::Counter &uptime = stats.add("main.uptime", efu::CounterKind::Gauge);
  efu::Counter &kernelRcvbufErrors = stats.add("kernel.udp.rcvbuf_errors");
  efu::Counter &residentBytes = stats.add("process.rss_bytes", efu::CounterKind::Gauge);
  efu::Counter &openFds = stats.add("process.fds", efu::CounterKind::Gauge);
  efu::Counter &logReopenFailures = stats.add("log.reopen_failures");
  const int64_t rcvbufErrorsAtStart = efu::readSnmpUdp("RcvbufErrors");

  const auto receivers = efu::openReceivers(options);
  const efu::UdpReceiver &receiver = *receivers.front();
  if (receiver.grantedRcvbufBytes() < options.rcvbufBytes) {
    log->warn("socket receive buffer: requested {} B, kernel granted {} B (net.core.rmem_max); "
              "to allow it run: {}",
              options.rcvbufBytes, receiver.grantedRcvbufBytes(),
              efu::rmemMaxAdvice(options.rcvbufBytes));
  } else {
    log->info("socket receive buffer: {} B{}", receiver.grantedRcvbufBytes(),
              receiver.rcvbufForced() ? " (forced past net.core.rmem_max as root)" : "");
  }
  if (!receiver.busyPollProblem().empty()) {
    log->warn("{}; receiving without busy polling", receiver.busyPollProblem());
  }

  const auto intervalMs = static_cast<uint32_t>(options.statsIntervalS * 1000);
  std::unique_ptr<efu::KafkaOutput> kafka;
  std::unique_ptr<CountingEventSink> noKafkaSink;
  if (options.noKafka) {
    noKafkaSink = std::make_unique<CountingEventSink>(stats);
    log->info("Kafka output disabled (--no-kafka)");
  } else {
    efu::kafka::checkTopicNames(options.kafka, service);
    kafka = std::make_unique<efu::KafkaOutput>(options.kafka, service, stats, *log, intervalMs);
    log->info("Kafka: {}", kafka->describe());
  }
  efu::sdk::EventSink &events = kafka ? kafka->events() : *noKafkaSink;
  efu::DaemonContext context(stats, *log, events, std::move(config),
                             options.configFile.empty() ? "(defaults)" : options.configFile,
                             intervalMs, std::move(calibration), options.calibrationFile);
  if (kafka) {
    context.setEventSources([&kafka](const std::string &name) -> efu::sdk::EventSink & {
      return kafka->events(name);
    });
    context.setDataArraySources([&kafka](const std::string &name) -> efu::sdk::DataArraySink & {
      return kafka->dataArrays(name);
    });
  }
  auto module = efu::createModule(library, context);

  std::vector<efu::UdpReceiver *> queues;
  for (auto &r : receivers) {
    queues.push_back(r.get());
  }
  efu::Runtime runtime(efu::runtimeConfig(options), queues, *module, stats, *log, kafka.get());
  efu::IntervalReport report(stats, context.lostCounter(), context.expectedCounter());
  efu::CpuUsage cpu(stats);
  for (size_t q = 0; q < runtime.queueCount(); ++q) {
    cpu.addThread(runtime.queueCount() > 1 ? "rx" + std::to_string(q) : std::string("rx"),
                  [&runtime, q] { return runtime.rxTid(q); });
  }
  if (runtime.threading() == efu::Threading::HandOff) {
    cpu.addThread("proc", [&runtime] { return runtime.procTid(); });
  }

  bool exitRequested = false;
  efu::ControlInfo info;
  info.version = EFU_VERSION " " EFU_BUILD_STRING;
  info.detectorInfo = descriptor.name;
  info.runtimeStatus = [&report] { return report.runtimeStatus(); };
  info.runtimeStats = [&report, &cpu] {
    return fmt::format(R"({{"rx":{},"cpu":{}}})", report.json(), cpu.json());
  };
  info.requestExit = [&exitRequested] { exitRequested = true; };
  info.report = [&context](std::string_view name) -> std::optional<std::string> {
    const efu::sdk::Report *found = context.findReport(name);
    return found != nullptr ? std::optional(found->read()) : std::nullopt;
  };
  if (kafka) {
    efu::kafka::RawSampler &sampler = *kafka->sampler();
    info.setCalibMode = [&sampler, &log](bool on) {
      sampler.setAll(on);
      log->info("CALIB_MODE_SET {}: {}", on ? 1 : 0,
                on ? fmt::format("every datagram is copied to '{}'", sampler.topic())
                   : std::string("raw-data mode off"));
    };
    info.calibMode = [&sampler] { return sampler.all(); };
  }
  info.secret = efu::readControlSecret(options.cmdSecretFile);
  info.readOnly = options.cmdReadOnly;
  efu::ControlProtocol protocol(stats, std::move(info));
  efu::ControlServerOptions controlOptions;
  controlOptions.address = options.cmdAddress;
  controlOptions.port = options.cmdPort;
  controlOptions.idleTimeoutMs = static_cast<int64_t>(options.cmdIdleTimeoutS * 1000);
  efu::ControlServer control(protocol, controlOptions, stats);
  if (const auto exposure = efu::controlExposure(options, control.port()); !exposure.empty()) {
    log->warn("{}", exposure);
  }
  std::unique_ptr<efu::metrics::MetricsServer> metricsServer;
  if (options.metricsPort != 0) {
    metricsServer = std::make_unique<efu::metrics::MetricsServer>(
        stats, efu::metrics::MetricsServerOptions{
                   options.metricsAddress, options.metricsPort, {service, options.region}});
    log->info("Prometheus metrics on http://{}/metrics",
              efu::endpoint(options.metricsAddress, metricsServer->port()));
    if (const auto exposure = efu::metricsExposure(options, metricsServer->port());
        !exposure.empty()) {
      log->warn("{}", exposure);
    }
  }

  std::unique_ptr<efu::GraphiteOutput> graphite;
  if (!options.graphiteHost.empty()) {
    std::string prefix = options.graphitePrefix.empty()
                             ? "efu." + service + "." + options.region + "."
                             : options.graphitePrefix;
    if (prefix.back() != '.') {
      prefix += '.';
    }
    graphite = std::make_unique<efu::GraphiteOutput>(
        efu::GraphiteOptions{options.graphiteHost, options.graphitePort, prefix}, stats, *log);
    log->info("Graphite: every counter to {}:{} as {}<counter> once per stats interval",
              options.graphiteHost, options.graphitePort, prefix);
  }

  efu::installStopSignals(efu::Hangup::ReopenLog);
  const int64_t startNs = efu::monotonicNs();
  runtime.start();
  log->info("receiving UDP on {}:{} ({} rx queue{}, {}, batch {}{}{}); control on {}:{}",
            options.dataAddress, receiver.port(), runtime.queueCount(),
            runtime.queueCount() > 1 ? "s" : "",
            runtime.threading() == efu::Threading::RunToCompletion
                ? std::string("module on the rx thread")
                : fmt::format("processing thread behind {}-slot rings", options.ringSlots),
            efu::rxBatch(options), options.gro ? ", GRO" : "",
            options.rxTimestamps == "kernel" ? ", kernel timestamps" : "", options.cmdAddress,
            options.cmdPort);

  const int64_t intervalNs = static_cast<int64_t>(options.statsIntervalS * 1e9);
  const int64_t stopAtNs =
      options.stopAfterS > 0 ? startNs + static_cast<int64_t>(options.stopAfterS * 1e9) : 0;
  int64_t nextReportNs = startNs + intervalNs;
  auto updateMainCounters = [&](int64_t nowNs) {
    uptime.set((nowNs - startNs) / efu::kNsPerSec);
    cpu.sample(nowNs);
    residentBytes.set(efu::residentBytes());
    openFds.set(efu::openFileDescriptors());
    const int64_t rcvbufErrors = efu::readSnmpUdp("RcvbufErrors");
    if (rcvbufErrors >= 0 && rcvbufErrorsAtStart >= 0) {
      kernelRcvbufErrors.set(rcvbufErrors - rcvbufErrorsAtStart);
    }
  };
  auto statusJson = [&](int64_t nowNs) {
    return fmt::format(R"({{"module":"{}","module_version":"{}","uptime_s":{},"rx":{},"cpu":{}}})",
                       descriptor.name, descriptor.version, (nowNs - startNs) / efu::kNsPerSec,
                       report.json(), cpu.json());
  };
  std::string stopReason;
  while (stopReason.empty()) {
    const int64_t nowNs = efu::monotonicNs();
    const int64_t waitMs = std::clamp<int64_t>((nextReportNs - nowNs) / efu::kNsPerMs, 0, 100);
    control.poll(static_cast<int>(waitMs));
    const int64_t afterNs = efu::monotonicNs();
    if (afterNs >= nextReportNs) {
      updateMainCounters(afterNs);
      log->info("{} | {}", report.line(afterNs), cpu.line());
      if (kafka) {
        kafka->requestPublish(statusJson(afterNs));
      }
      if (graphite) {
        graphite->publish(efu::realtimeNs() / efu::kNsPerSec);
      }
      nextReportNs += intervalNs;
    }
    if (efu::takeHangup()) {
      const efu::LogReopen reopened = efu::reopenLogFile();
      if (reopened.status == efu::LogReopen::Status::Failed) {
        logReopenFailures.add();
        log->error("SIGHUP: {}; still writing to the log file open before (the next SIGHUP "
                   "tries again)",
                   reopened.problem);
      } else {
        log->info(reopened.status == efu::LogReopen::Status::Reopened
                      ? "SIGHUP: log file reopened"
                      : "SIGHUP: no --log-file to reopen");
      }
    }
    if (exitRequested) {
      stopReason = "EXIT command";
    } else if (const int signal = efu::stopSignal(); signal != 0) {
      stopReason = efu::signalName(signal);
    } else if (stopAtNs != 0 && afterNs >= stopAtNs) {
      stopReason = "--stopafter";
    } else if (kafka && kafka->fatal()) {
      stopReason = "the Kafka producer cannot deliver any more";
    }
  }
  log->info("stopping ({}): draining the ring and flushing", stopReason);
  updateMainCounters(efu::monotonicNs());
  if (kafka) {
    kafka->requestPublish(statusJson(efu::monotonicNs()));
  }
  // The module's thread drains the ring, publishes the final counters and flushes Kafka, all
  // within --kafka-flush-timeout: a produce() still blocked on a full queue then (broker
  // gone) gives up, and the flush waits only for what is left of the bound. Meanwhile the
  // control port keeps answering.
  const int64_t deadlineNs =
      efu::monotonicNs() + int64_t{options.kafka.flushTimeoutMs} * efu::kNsPerMs;
  if (kafka) {
    kafka->setFlushDeadline(deadlineNs);
  }
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    runtime.stop();
    stopped.store(true);
  });
  bool aborted = false;
  while (!stopped.load()) {
    control.poll(20);
    if (!aborted && kafka && efu::monotonicNs() >= deadlineNs) {
      log->warn("Kafka producer still blocked at the end of --kafka-flush-timeout: giving up "
                "on queued messages");
      kafka->abortBlockedProduce();
      aborted = true;
    }
  }
  stopper.join();
  module.reset();
  const bool kafkaFatal = kafka && kafka->fatal();
  kafka.reset(); // discards (and counts) what stayed undelivered
  // After the producer is gone: its counts are final, so this line and the last one agree
  // (nothing queued; failed includes what was discarded).
  log->info("whole run: {}", report.total(efu::monotonicNs()));
  if (options.noKafka) {
    log->info("efu stopped");
    return 0;
  }
  auto value = [&stats](const char *name) {
    const efu::Counter *counter = stats.find(name);
    return counter != nullptr ? counter->get() : 0;
  };
  const int64_t produced = value("kafka.produced");
  const int64_t delivered = value("kafka.delivered");
  const int exitCode = kafkaFatal            ? efu::kExitKafkaFatal
                       : delivered != produced ? efu::kExitUndelivered
                                               : 0;
  log->log(exitCode == 0 ? spdlog::level::info : spdlog::level::err,
           "efu stopped: Kafka messages produced {}, delivered {}, failed {} (discarded at "
           "shutdown {}){}",
           produced, delivered, value("kafka.failed"), value("kafka.discarded"),
           exitCode == 0 ? std::string() : fmt::format("; exit code {}", exitCode));
  return exitCode;
}

/// efu --check: one line per check on stdout, exit 0 when none failed, else 1. Logging only
/// warnings (a module or librdkafka may give some), to stderr.
int check(const efu::DaemonOptions &options) {
  auto log = efu::setupLogging("efu", "warn", "");
  const auto results = efu::preflight(options, *log);
  std::fputs(efu::formatChecks(results).c_str(), stdout);
  return efu::checkExitCode(results);
}

} // namespace

int main(int argc, char **argv) {
  // A fixed threshold (glibc's default, without its dynamic growth): buffers of 128 KiB and more
  // (ev44 messages, the producer's copies) are mapped on their own and returned to the kernel
  // when freed, so memory that buffered a broker outage is given back after it.
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  CLI::App app{"efu " EFU_VERSION " - event formation unit: receives detector readout over UDP, "
               "runs a detector module on it and publishes events and counters"};
  app.set_version_flag("--version", EFU_VERSION);
  efu::DaemonOptions options;
  efu::addDaemonOptions(app, options);
  if (const auto code = efu::cli::parseCommandLine(app, argc, argv)) {
    return *code;
  }
  try {
    return options.check ? check(options) : run(options);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "efu: error: %s\n", e.what());
    spdlog::shutdown();
    return efu::cli::kExitCouldNotStart;
  }
}
