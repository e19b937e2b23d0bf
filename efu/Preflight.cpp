// SPDX-License-Identifier: BSD-2-Clause
// `efu --check`: the machine and the configuration checked without starting.
#include "efu/Preflight.h"

#include "common/kafka/KafkaProducer.h"
#include "common/net/TcpListener.h"
#include "common/sdk/ModuleConfig.h"
#include "common/stats/Stats.h"
#include "common/system/Affinity.h"
#include "common/system/Log.h"
#include "common/system/ProcStats.h"
#include "efu/DaemonContext.h"
#include "common/sdk/ModuleLoader.h"
#include "efu/Startup.h"

#include <fmt/format.h>

#include <functional>
#include <set>
#include <thread>

namespace efu {
namespace {

using Level = CheckResult::Level;

/// Events of the module built for the check go nowhere (nothing is received).
class NullEventSink final : public sdk::EventSink {
public:
  void add(int64_t, int32_t, int32_t) noexcept override {}
};

/// Runs `attempt` on a thread of its own, so pinning or a real-time policy tried there ends
/// with the thread and never touches efu's own threads. Returns its problem text.
std::string onScratchThread(const std::function<std::string()> &attempt) {
  std::string problem;
  std::thread thread([&] { problem = attempt(); });
  thread.join();
  return problem;
}

class Checks {
public:
  void ok(std::string what, std::string detail) {
    add(Level::Ok, std::move(what), std::move(detail));
  }
  void warn(std::string what, std::string detail) {
    add(Level::Warn, std::move(what), std::move(detail));
  }
  void fail(std::string what, std::string detail) {
    add(Level::Fail, std::move(what), std::move(detail));
  }
  std::vector<CheckResult> results;

private:
  void add(Level level, std::string what, std::string detail) {
    results.push_back({level, std::move(what), std::move(detail)});
  }
};

/// Loads the module, validates its configuration and constructs an instance (which checks what
/// the key table cannot, e.g. a geometry). Returns the instrument name efu would use.
std::string checkModule(const DaemonOptions &options, spdlog::logger &log, Checks &checks) {
  std::string service = options.instrument.empty() ? options.detector : options.instrument;
  try {
    const auto library = loadModule(options.detector, moduleSearchPath(options.modulePaths));
    const EfuModuleDescriptor &descriptor = library->descriptor();
    const std::string source = options.configFile.empty() ? "(defaults)" : options.configFile;
    auto config = loadModuleConfig(descriptor, options.configFile);
    checkInstrument(options.detector, config, source);
    Stats stats;
    NullEventSink events;
    DaemonContext context(stats, log, events, std::move(config),
                          source, static_cast<uint32_t>(options.statsIntervalS * 1000),
                          loadCalibration(options.calibrationFile), options.calibrationFile);
    // The module's data arrays are sized against the producer's limit, with Kafka or without.
    context.setDiscardedArrayLimit(kafka::maxPayloadBytes(options.kafka));
    const ModulePtr module = createModule(library, context);
    checks.ok("module", fmt::format("{} {} from {}, configuration {} accepted", descriptor.name,
                                    descriptor.version, library->path().string(), source));
    try {
      const PartitionPlan plan = planPartitions(options, descriptor, context.config());
      validateRuntimeConfig(runtimeConfig(options, plan.count), options.rxQueues, plan.count);
      if (plan.count > 1) {
        checks.ok("processing threads", fmt::format("{} ({}), one partition each, by {}",
                                                    plan.count, plan.from,
                                                    descriptor.partitionKey));
      }
    } catch (const std::exception &e) {
      checks.fail("processing threads", e.what());
    }
  } catch (const std::exception &e) {
    checks.fail("module", e.what());
  }
  return service;
}

void checkReceiving(const DaemonOptions &options, Checks &checks) {
  const RuntimeConfig config = runtimeConfig(options);
  try {
    validateRuntimeConfig(config, options.rxQueues);
    checks.ok("threads",
              config.threading == Threading::RunToCompletion
                  ? std::string("the module runs on the rx thread")
                  : fmt::format("a processing thread behind {} rx queue(s)", options.rxQueues));
  } catch (const std::exception &e) {
    checks.fail("threads", e.what());
  }

  bool forced = false;
  int granted = 0;
  try {
    const auto receivers = openReceivers(options);
    forced = receivers.front()->rcvbufForced();
    granted = receivers.front()->grantedRcvbufBytes();
    checks.ok("udp port",
              fmt::format("{} can be bound ({} rx queue(s))",
                          endpoint(options.dataAddress, options.dataPort), options.rxQueues));
    if (const auto &problem = receivers.front()->busyPollProblem(); !problem.empty()) {
      checks.warn("busy poll", problem);
    }
  } catch (const std::exception &e) {
    checks.fail("udp port", std::string(e.what()) + " (another efu, or another program, on it?)");
  }

  const int64_t rmemMax = readProcInteger("/proc/sys/net/core/rmem_max");
  if (rmemMax < 0) {
    checks.warn("net.core.rmem_max", "cannot read /proc/sys/net/core/rmem_max");
  } else if (rmemMax < options.rcvbufBytes) {
    checks.fail("net.core.rmem_max",
                fmt::format("{} B, less than --rcvbuf {} B{}; run: {}", rmemMax,
                            options.rcvbufBytes,
                            forced ? fmt::format(" (as root efu forces it past the limit, any "
                                                 "other user gets {} B)",
                                                 rmemMax)
                                   : fmt::format(" (the socket gets {} B)", granted),
                            rmemMaxAdvice(options.rcvbufBytes)));
  } else {
    checks.ok("net.core.rmem_max",
              fmt::format("{} B >= --rcvbuf {} B", rmemMax, options.rcvbufBytes));
  }
}

void checkListeners(const DaemonOptions &options, Checks &checks) {
  try {
    const TcpListener listener("control server", options.cmdAddress, options.cmdPort, 1);
    checks.ok("control port", endpoint(options.cmdAddress, options.cmdPort) + " can listen");
    if (const auto exposure = controlExposure(options, options.cmdPort); !exposure.empty()) {
      checks.warn("control port", exposure);
    }
  } catch (const std::exception &e) {
    checks.fail("control port", std::string(e.what()) + " (choose another with -m/--cmdport)");
  }
  if (!options.cmdSecretFile.empty()) {
    try {
      (void)readControlSecret(options.cmdSecretFile);
      checks.ok("control secret", options.cmdSecretFile + " holds a secret");
    } catch (const std::exception &e) {
      checks.fail("control secret", e.what());
    }
  }
  if (options.metricsPort != 0) {
    try {
      const TcpListener listener("metrics server", options.metricsAddress, options.metricsPort, 1);
      checks.ok("metrics port",
                endpoint(options.metricsAddress, options.metricsPort) + " can listen");
      if (const auto exposure = metricsExposure(options, options.metricsPort); !exposure.empty()) {
        checks.warn("metrics port", exposure);
      }
    } catch (const std::exception &e) {
      checks.fail("metrics port", std::string(e.what()) + " (choose another --metrics-port)");
    }
  }
  if (!options.logFile.empty()) {
    if (const auto problem = checkLogFilePath(options.logFile); problem.empty()) {
      checks.ok("log file", options.logFile + " can be written");
    } else {
      checks.fail("log file", "--log-file " + options.logFile + ": " + problem);
    }
  }
}

void checkScheduling(const DaemonOptions &options, Checks &checks) {
  std::set<int> cpus(options.rxCpus.begin(), options.rxCpus.end());
  cpus.insert(options.procCpus.begin(), options.procCpus.end());
  cpus.erase(-1);
  if (cpus.empty()) {
    checks.ok("cpus", "no thread pinned (--rx-cpu, --proc-cpu)");
  }
  for (const int cpu : cpus) {
    const std::string what = "cpu " + std::to_string(cpu);
    if (const auto problem = onScratchThread([cpu] { return pinCurrentThread(cpu); });
        problem.empty()) {
      checks.ok(what, "exists and this process may run on it");
    } else {
      checks.fail(what, problem + "; choose a CPU listed by 'taskset -cp $$' (efu would run "
                                  "that thread unpinned)");
    }
  }
  if (options.rxPriority > 0) {
    const int priority = options.rxPriority;
    if (const auto problem =
            onScratchThread([priority] { return setCurrentThreadFifoPriority(priority); });
        problem.empty()) {
      checks.ok("rx priority", fmt::format("SCHED_FIFO {} allowed", priority));
    } else {
      checks.fail("rx priority", problem + " (efu would receive at normal priority)");
    }
  }
}

void checkKafka(const DaemonOptions &options, const std::string &service, spdlog::logger &log,
                int timeoutMs, Checks &checks) {
  if (options.noKafka) {
    checks.ok("kafka", "off (--no-kafka)");
    return;
  }
  try {
    kafka::checkTopicNames(options.kafka, service);
    Stats stats;
    kafka::KafkaProducer producer(options.kafka, stats, log);
    if (const auto problem = producer.metadataProblem(timeoutMs); problem.empty()) {
      checks.ok("kafka", "broker " + options.kafka.brokers + " answers");
    } else {
      checks.warn("kafka",
                  fmt::format("no answer from {} within {} ms ({}); efu would start and keep "
                              "events queued until a broker answers: check -b and the network",
                              options.kafka.brokers, timeoutMs, problem));
    }
  } catch (const std::exception &e) {
    checks.fail("kafka", e.what());
  }
}

} // namespace

std::vector<CheckResult> preflight(const DaemonOptions &options, spdlog::logger &log,
                                   int kafkaTimeoutMs) {
  Checks checks;
  const std::string service = checkModule(options, log, checks);
  checkReceiving(options, checks);
  checkListeners(options, checks);
  checkScheduling(options, checks);
  checkKafka(options, service, log, kafkaTimeoutMs, checks);
  return std::move(checks.results);
}

std::string formatChecks(const std::vector<CheckResult> &results) {
  std::string out;
  int counts[3] = {0, 0, 0};
  for (const CheckResult &result : results) {
    static constexpr const char *kLevel[] = {"ok  ", "warn", "FAIL"};
    const auto level = static_cast<size_t>(result.level);
    ++counts[level];
    out += fmt::format("{} {}: {}\n", kLevel[level], result.what, result.detail);
  }
  out += fmt::format("efu --check: {} ok, {} warn, {} FAIL\n", counts[0], counts[1], counts[2]);
  return out;
}

int checkExitCode(const std::vector<CheckResult> &results) {
  for (const CheckResult &result : results) {
    if (result.level == Level::Fail) {
      return 1;
    }
  }
  return 0;
}

} // namespace efu
