// SPDX-License-Identifier: BSD-2-Clause
// Command-line options of the efu daemon.
#include "efu/Options.h"

#include "common/system/CliChecks.h"
#include "common/system/Log.h"
#include "efu/Runtime.h"

#include <arpa/inet.h>

#include <bit>

namespace efu {
namespace {

/// CLI11 validator: a power of two (ring slots).
const CLI::Validator kPowerOfTwo(
    [](std::string &text) -> std::string {
      try {
        const auto value = std::stoull(text);
        if (value >= 2 && std::has_single_bit(value)) {
          return {};
        }
      } catch (const std::exception &) {
      }
      return "must be a power of two >= 2, got " + text;
    },
    "POWER_OF_TWO");

/// CLI11 validator: a dotted-quad IPv4 address exactly as inet_pton (and so the sockets) reads it.
const CLI::Validator kIpv4(
    [](std::string &text) -> std::string {
      in_addr address{};
      if (inet_pton(AF_INET, text.c_str(), &address) == 1) {
        return {};
      }
      return "not an IPv4 address (dotted quad, no leading zeros): " + text;
    },
    "IPV4");

} // namespace

void addDaemonOptions(CLI::App &app, DaemonOptions &o) {
  app.add_option("-d,--det", o.detector, "Detector module to load (efu-module-<NAME>.so), or an ESS instrument it serves (loki, "
                 "bifrost, cspec, miracles, tbl3he: the config's Detector must name it); 'list' "
                 "lists them")
      ->required();
  app.add_option("--module-path", o.modulePaths,
                 "Extra directory to search for modules, before the install dir and build tree "
                 "(repeatable)");
  app.add_flag("--help-module", o.helpModule, "Print the module's configuration keys and exit");
  app.add_option("-f,--config", o.configFile,
                 "Module configuration (JSON object; -f as in the ESS EFU)")
      ->check(cli::kRegularFile);
  app.add_option("--calibration", o.calibrationFile,
                 "Calibration JSON handed to the module (e.g. the ESS CAEN charge-division "
                 "calibration for caen); a module that takes none refuses it")
      ->check(cli::kRegularFile);
  app.add_option("-i,--dip", o.dataAddress, "IPv4 address to receive detector data on")
      ->capture_default_str()
      ->check(kIpv4);
  app.add_option("-p,--port", o.dataPort, "UDP port to receive detector data on")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  app.add_option("--rcvbuf", o.rcvbufBytes,
                 "Socket receive buffer to request, bytes (the paper's 12 MiB)")
      ->capture_default_str()
      ->check(CLI::Range(65536, 1 << 30));
  app.add_option("--rx-cpu", o.rxCpus,
                 "CPU to pin the receive thread to (-1 = not pinned); with --rx-queues a list, "
                 "one CPU per queue (0,1) or one for all")
      ->capture_default_str()
      ->delimiter(',')
      ->check(CLI::Range(-1, 4095));
  app.add_option("--proc-cpu", o.procCpus,
                 "CPU to pin the processing thread to (-1 = not pinned); with --proc-threads a "
                 "list, one CPU per thread (1,2) or one for all")
      ->capture_default_str()
      ->delimiter(',')
      ->check(CLI::Range(-1, 4095));
  app.add_option("--proc-threads", o.procThreads,
                 "Processing threads, each running a partition of the module on every datagram "
                 "(docs/modules.md, Partitions); above 1 only for a module that can be split "
                 "(--help-module says by what). Default 1, or the module's own key "
                 "(timepix3: ParallelThreads)")
      ->check(CLI::Range(1, 16));
  app.add_option("--threads", o.threads,
                 "Who runs the module: 1 = the receive thread, after each batch (run to "
                 "completion); 2 = a processing thread behind the ring; auto = 1 when the receive "
                 "and processing threads would share one CPU (same --rx-cpu and --proc-cpu, or "
                 "one CPU allowed) with one rx queue, else 2")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "1", "2"}));
  app.add_option("--rx-queues", o.rxQueues,
                 "Receive sockets on the port (SO_REUSEPORT), one rx thread and ring each; the "
                 "kernel keeps each source on one queue")
      ->capture_default_str()
      ->check(CLI::Range(1, 16));
  app.add_flag("--reuse-port", o.reusePort,
               "Bind the data port with SO_REUSEPORT with one rx queue too, so that other efu "
               "processes of the same user share it: the kernel keeps each source (address and "
               "port) on one process (docs/deploy.md, Beyond one core)");
  app.add_flag("--gro", o.gro,
               "UDP GRO: the kernel hands over up to 64 KiB of same-size datagrams per message "
               "(fewer system calls at small sizes; slots become 64 KiB)");
  app.add_option("--rx-priority", o.rxPriority,
                 "SCHED_FIFO priority of the receive thread(s) (1-99; 0 = normal scheduling; "
                 "needs CAP_SYS_NICE or an rtprio limit)")
      ->capture_default_str()
      ->check(CLI::Range(0, 99));
  app.add_option("--busy-poll", o.busyPollUs,
                 "SO_BUSY_POLL: microseconds to spin in the NIC driver for data before "
                 "sleeping (0 = off; NICs with NAPI busy polling only, not loopback)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  app.add_option("--rx-timestamps", o.rxTimestamps,
                 "Arrival time handed to the module: 'batch' = one clock reading per recvmmsg "
                 "batch, 'kernel' = the kernel's time of each datagram (SO_TIMESTAMPNS; what "
                 "the udp module's inter-arrival histogram needs when datagrams come in batches)")
      ->capture_default_str()
      ->check(CLI::IsMember({"batch", "kernel"}));
  app.add_option("--ring-slots", o.ringSlots,
                 "Ring slots per rx queue between receiving and processing (--threads 2; power "
                 "of two; 9 KiB each, 64 KiB with --gro)")
      ->capture_default_str()
      ->check(kPowerOfTwo)
      ->check(CLI::Range(2, 65536));
  app.add_option("--rx-batch", o.rxBatch,
                 "Most messages per recvmmsg() call (0 = " + std::to_string(kRxBatch) + ", or " +
                     std::to_string(kGroRxBatch) + " with --gro: GRO messages are up to 64 KiB)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
  app.add_option("--stopafter", o.stopAfterS, "Stop after this many seconds (0 = run until told)")
      ->capture_default_str()
      ->check(cli::kFinite)
      ->check(CLI::Range(0.0, 1e9));
  app.add_option("--stats-interval", o.statsIntervalS,
                 "Seconds between stats log lines and stats/status publishing")
      ->capture_default_str()
      ->check(cli::kFinite)
      ->check(CLI::Range(0.01, 3600.0));
  app.add_option("-m,--cmdport", o.cmdPort, "TCP port of the control server")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  app.add_option("--cmdaddr", o.cmdAddress,
                 "Address of the control server (keep it local; any other address is reachable "
                 "from the network, see --cmd-secret-file and --cmd-read-only)")
      ->capture_default_str()
      ->check(kIpv4);
  app.add_option("--cmd-idle-timeout", o.cmdIdleTimeoutS,
                 "Seconds after which a silent control client is disconnected (0 = never)")
      ->capture_default_str()
      ->check(cli::kFinite)
      ->check(CLI::Range(0.0, 86400.0));
  app.add_option("--cmd-secret-file", o.cmdSecretFile,
                 "File whose first line is a secret: EXIT on the control port then needs "
                 "'AUTH <secret>' first on the same connection")
      ->check(cli::kRegularFile);
  app.add_flag("--cmd-read-only", o.cmdReadOnly,
               "Control port answers queries only: EXIT is refused (stop efu with a signal)");
  app.add_option("-l,--log-level", o.logLevel, std::string("Log level: ") + kLogLevels)
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_option("--log-file", o.logFile,
                 "Also log to this file (a regular file; its directory must exist). SIGHUP "
                 "reopens it by name (logrotate); a failed reopen is logged, counted in "
                 "log.reopen_failures and retried on the next SIGHUP");
  app.add_option("--instrument,--service-id", o.instrument,
                 "Instrument name (e.g. loki): topics <instrument>_detector, _stats and _status, "
                 "counter names efu.<instrument>.*, the x5f2 service id (default: the module "
                 "name)")
      ->check(cli::kNotEmpty);
  app.add_option("-g,--graphite", o.graphiteHost,
                 "Send every counter to this carbon host once per stats interval (plaintext "
                 "protocol, as efu.<instrument>.<region>.<counter>; off when empty)")
      ->check(cli::kNotEmpty);
  app.add_option("-o,--gport", o.graphitePort, "Carbon plaintext port for --graphite")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  app.add_option("-r,--region", o.region, "Region part of the Graphite metric prefix")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string &text) -> std::string {
            return text.find_first_of(" .\t\n") == std::string::npos && !text.empty()
                       ? std::string()
                       : "must be one word without dots or spaces, got '" + text + "'";
          },
          "WORD"));
  app.add_option("--graphite-prefix", o.graphitePrefix,
                 "Metric prefix instead of efu.<instrument>.<region>. (a final dot is added if "
                 "missing)");
  app.add_option("--metrics-port", o.metricsPort,
                 "TCP port to serve GET /metrics on for Prometheus (text format 0.0.4; 0 = off)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  app.add_option("--metrics-addr", o.metricsAddress,
                 "Address of the metrics server (keep it local; any other address lets anyone "
                 "who can connect read every counter)")
      ->capture_default_str()
      ->check(kIpv4);
  app.add_flag("--check", o.check,
               "Check the machine and the configuration for this command line without starting "
               "(rmem_max, module and config, ports, CPUs, priority, Kafka); one line per check, "
               "exit 0 when none failed, else 1");
  app.add_flag("--no-kafka", o.noKafka,
               "Publish nothing to Kafka (measurements; counters stay on the control port)");
  kafka::addKafkaOptions(app, o.kafka);
  app.callback([&o] {
    if (o.procThreads > 1 && o.threads == "1") {
      throw CLI::ValidationError("--proc-threads",
                                 std::to_string(o.procThreads) +
                                     " processing threads need a ring to read: not with "
                                     "--threads 1 (the module on the receive thread)");
    }
    const uint64_t slotBytes = o.gro ? kGroSlotBytes : kSlotBytes;
    const uint64_t ringBytes = uint64_t{o.ringSlots} * slotBytes * o.rxQueues;
    if (ringBytes > kMaxRingBytes) {
      throw CLI::ValidationError(
          "--ring-slots",
          std::to_string(o.ringSlots) + " slots of " + std::to_string(slotBytes / 1024) + " KiB" +
              (o.gro ? " (--gro)" : "") + " x " + std::to_string(o.rxQueues) +
              " rx queue(s) = " + std::to_string(ringBytes >> 20) +
              " MiB of ring buffers; the limit is " + std::to_string(kMaxRingBytes >> 20) + " MiB");
    }
  });
}

} // namespace efu

namespace efu {

bool runToCompletion(const DaemonOptions &o, int availableCpus) {
  if (o.threads != "auto") {
    return o.threads == "1";
  }
  if (o.rxQueues != 1) {
    return false;
  }
  const int rxCpu = o.rxCpus.empty() ? -1 : o.rxCpus.front();
  if (o.procThreads > 1) {
    return false; // several processing threads read the ring
  }
  const int procCpu = o.procCpus.empty() ? -1 : o.procCpus.front();
  return (rxCpu >= 0 && rxCpu == procCpu) || availableCpus == 1;
}

} // namespace efu
