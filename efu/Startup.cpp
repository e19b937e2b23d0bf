// SPDX-License-Identifier: BSD-2-Clause
// Steps of efu's start that the run and `efu --check` share.
#include "efu/Startup.h"

#include "common/net/TcpListener.h"
#include "common/system/Affinity.h"

#include <fmt/format.h>

#include <fstream>
#include <stdexcept>

namespace efu {

std::vector<std::unique_ptr<UdpReceiver>> openReceivers(const DaemonOptions &options) {
  // The receive timeout bounds how late the module's tick() comes when nothing arrives and the
  // rx thread runs the module.
  std::vector<std::unique_ptr<UdpReceiver>> receivers;
  uint16_t port = options.dataPort;
  for (unsigned q = 0; q < options.rxQueues; ++q) {
    receivers.push_back(std::make_unique<UdpReceiver>(
        UdpReceiver::Options{options.dataAddress, port, options.rcvbufBytes, 10, rxBatch(options),
                             options.rxQueues > 1 || options.reusePort, options.gro, options.busyPollUs,
                             options.rxTimestamps == "kernel"}));
    port = receivers.back()->port();
  }
  return receivers;
}

RuntimeConfig runtimeConfig(const DaemonOptions &options, unsigned partitions) {
  DaemonOptions planned = options;
  if (partitions != 0) {
    planned.procThreads = partitions;
  }
  RuntimeConfig config;
  config.threading =
      runToCompletion(planned, availableCpus()) ? Threading::RunToCompletion : Threading::HandOff;
  config.ringSlots = options.ringSlots;
  config.rxBatch = rxBatch(options);
  config.slotBytes = options.gro ? kGroSlotBytes : kSlotBytes;
  config.rxCpus = options.rxCpus;
  config.procCpus = options.procCpus;
  config.rxPriority = options.rxPriority;
  return config;
}

PartitionPlan planPartitions(const DaemonOptions &options, const EfuModuleDescriptor &descriptor,
                             const nlohmann::json &config) {
  const std::string file = options.configFile.empty() ? "(defaults)" : options.configFile;
  PartitionPlan plan;
  if (descriptor.threadsKey != nullptr && config.contains(descriptor.threadsKey)) {
    const int64_t keyed = config.at(descriptor.threadsKey).get<int64_t>();
    if (keyed < 1 || keyed > kMaxPartitions) {
      throw std::runtime_error(fmt::format("{}: {} {}: efu runs 1..{} processing threads", file,
                                           descriptor.threadsKey, keyed, kMaxPartitions));
    }
    plan.count = static_cast<unsigned>(keyed);
    plan.from = fmt::format("{} {} in {}", descriptor.threadsKey, keyed, file);
  }
  if (options.procThreads != 0) {
    if (descriptor.threadsKey != nullptr && config.contains(descriptor.threadsKey) &&
        plan.count != options.procThreads) {
      plan.replaced = plan.from;
    }
    plan.count = options.procThreads;
    plan.from = fmt::format("--proc-threads {}", plan.count);
  }
  if (plan.count > 1 && descriptor.partitionKey == nullptr) {
    throw std::runtime_error(fmt::format(
        "{}: module '{}' cannot be split over processing threads (its state spans the whole "
        "stream); run it with one (docs/modules.md, Partitions)",
        plan.from, descriptor.name));
  }
  return plan;
}

std::string readControlSecret(const std::string &path) {
  if (path.empty()) {
    return {};
  }
  std::ifstream in(path);
  std::string secret;
  if (!in || !std::getline(in, secret)) {
    throw std::runtime_error("--cmd-secret-file " + path + ": cannot read a line");
  }
  while (!secret.empty() && (secret.back() == '\r' || secret.back() == ' ')) {
    secret.pop_back();
  }
  if (secret.empty() || secret.find_first_of(" \t") != std::string::npos) {
    throw std::runtime_error("--cmd-secret-file " + path +
                             ": the first line must be one word (the secret), without spaces");
  }
  return secret;
}

std::string controlExposure(const DaemonOptions &options, uint16_t port) {
  if (isLoopback(options.cmdAddress)) {
    return {};
  }
  const std::string where = "control port " + endpoint(options.cmdAddress, port);
  if (options.cmdSecretFile.empty() && !options.cmdReadOnly) {
    return where + " is reachable from the network and anyone who connects can stop efu with "
                   "EXIT; use --cmd-secret-file or --cmd-read-only, or keep --cmdaddr on "
                   "127.0.0.1";
  }
  return where + " is reachable from the network (counters readable by anyone; " +
         (options.cmdReadOnly ? "EXIT refused" : "EXIT needs AUTH, sent in clear text") + ")";
}

std::string metricsExposure(const DaemonOptions &options, uint16_t port) {
  if (isLoopback(options.metricsAddress)) {
    return {};
  }
  return "metrics port " + endpoint(options.metricsAddress, port) +
         " is reachable from the network: anyone who connects reads every counter; keep "
         "--metrics-addr on 127.0.0.1 (a Prometheus on this host) or firewall the port";
}

} // namespace efu
