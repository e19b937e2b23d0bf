// SPDX-License-Identifier: BSD-2-Clause
// udpgen: UDP throughput/loss generator (docs/wire-formats.md §1 payloads), paced without drift.
#include "common/net/LineRate.h"
#include "common/system/Affinity.h"
#include "common/system/CliExit.h"
#include "common/system/Log.h"
#include "common/system/StopSignals.h"
#include "generators/udpgen/PcapReplay.h"
#include "generators/udpgen/RequestResponse.h"
#include "generators/udpgen/Sweep.h"
#include "generators/udpgen/UdpGenOptions.h"
#include "generators/udpgen/UdpSender.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <functional>
#include <string>

namespace {

using efu::udpgen::UdpGenOptions;

/// --pcap: replays a capture's UDP payloads to the address.
int replayCapture(const UdpGenOptions &options) {
  using namespace efu::udpgen;
  const PcapReplayOptions replay{options.pcapPath, options.pcapFilter, options.address,
                                 options.port,     options.speed,      options.pps,
                                 options.loops,    options.count,      options.durationS,
                                 options.gso,      options.batch};
  spdlog::info("replaying {} (filter '{}') to {}:{}, {}, {} pass(es), up to {} message(s) per "
               "call and {} equal-size datagram(s) per message",
               options.pcapPath,
               options.pcapFilter, options.address, options.port,
               options.pps > 0       ? fmt::format("{} pps", options.pps)
               : options.speed > 0.0 ? fmt::format("capture timing x{}", options.speed)
                                     : std::string("unpaced"),
               options.loops == 0 ? std::string("unlimited") : std::to_string(options.loops),
               options.batch, std::clamp<uint32_t>(options.gso, 1, kMaxGsoSegments));
  const PcapReplaySummary summary = replayPcap(replay, efu::stopFlag());
  std::fputs(replayText(summary).c_str(), stderr);
  if (options.json) {
    std::printf("%s\n", replayJson(summary).c_str());
    std::fflush(stdout);
  }
  return 0;
}

/// --rr: one datagram at a time, each waiting for its echo; 1 when the echoes stopped coming.
int requestResponse(const UdpGenOptions &options) {
  using namespace efu::udpgen;
  spdlog::info("request-response with {}:{}: {} B per datagram, count {}, echo timeout {} ms",
               options.address, options.port, options.sizeBytes,
               options.count > 0 ? std::to_string(options.count) : std::string("unlimited"),
               options.rrTimeoutMs);
  const RrSummary summary = runRequestResponse(options, efu::stopFlag());
  std::fputs(rrText(summary).c_str(), stderr);
  if (options.json) {
    std::printf("%s\n", rrJson(summary).c_str());
    std::fflush(stdout);
  }
  if (summary.gaveUp) {
    spdlog::error("--rr: no echo from {}:{} for {} requests in a row (in all {} timeouts "
                  "after --rr-timeout {} ms, {} refused by the host); is udpecho running "
                  "there?",
                  options.address, options.port, kRrGiveUpAfter, summary.timeouts,
                  options.rrTimeoutMs, summary.refused);
    return 1;
  }
  return 0;
}

/// --sweep: the same count of datagrams at each spacing, a table of what was sent (and, with
/// --cmdport, what efu received).
int sweepSpacings(const UdpGenOptions &options) {
  using namespace efu::udpgen;
  UdpGenOptions sweep = options;
  sweep.count = sweep.count > 0 ? sweep.count : 10000;
  spdlog::info("sweep {} us to {}:{}: {} x {} B per spacing{}", options.sweep, options.address,
               options.port, sweep.count, options.sizeBytes,
               options.cmdPort != 0 ? fmt::format(", receiver counts from efu at {}:{}",
                                                  options.address, options.cmdPort)
                                    : std::string());
  const auto rows = runSweep(sweep, efu::stopFlag(), [&](const SweepRow &row) {
    if (!options.quiet) {
      spdlog::info("spacing {} us: sent {} at {:.1f} Mb/s{}", row.spacingUs, row.sent, row.txMbps,
                   row.received ? fmt::format(", received {}", *row.received) : "");
    }
  });
  spdlog::default_logger()->flush();
  std::fputs(sweepText(rows, options.sizeBytes).c_str(), stderr);
  if (options.json) {
    std::printf("%s\n", sweepJson(rows, options.sizeBytes).c_str());
    std::fflush(stdout);
  }
  return 0;
}

/// The default mode: sequence-numbered datagrams, paced or as fast as the socket takes them.
int sendDatagrams(const UdpGenOptions &options) {
  using namespace efu::udpgen;
  UdpSender sender(options);
  const double pps = options.targetPps();
  const std::string pacing =
      options.spacingUs > 0.0 ? fmt::format("{} back to back every {} us ({:.0f} pps)",
                                            options.burst, options.spacingUs, pps)
      : pps > 0.0             ? fmt::format("paced at {:.0f} pps ({} user data)", pps,
                                            efu::formatBitRate(pps * 8.0 * options.sizeBytes))
                              : std::string("unpaced");
  spdlog::info("sending to {}:{}: {} B per datagram, {} x {} datagrams per call, {}, count {}, "
               "duration {}, SO_SNDBUF {} B",
               options.address, options.port, options.sizeBytes, sender.messagesPerCall(),
               sender.gsoSegments(), pacing,
               options.count > 0 ? std::to_string(options.count) : std::string("unlimited"),
               options.durationS > 0.0 ? fmt::format("{} s", options.durationS)
                                       : std::string("unlimited"),
               sender.sndbufBytes());
  std::function<void(const Progress &)> onProgress;
  if (!options.quiet) {
    onProgress = [](const Progress &progress) {
      spdlog::info("{:10.1f} Mb/s {:9.1f} kpps  sent {}  errors {}", progress.intervalMbps,
                   progress.intervalKpps, progress.total.sent, progress.total.errors());
    };
  }
  const SendSummary summary = sender.run(efu::stopFlag(), onProgress);
  spdlog::default_logger()->flush();
  std::fputs(summaryText(summary).c_str(), stderr);
  if (options.json) {
    std::printf("%s\n", summaryJson(summary).c_str());
    std::fflush(stdout);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"udpgen: UDP throughput and loss generator. Each datagram carries a u64 LE "
               "sequence number (from 0) and, from 16 B on, a u64 LE CLOCK_REALTIME transmit "
               "time in ns (docs/wire-formats.md §1)."};
  UdpGenOptions options;
  efu::udpgen::addUdpGenOptions(app, options);
  app.set_version_flag("--version", EFU_VERSION);
  if (const auto code = efu::cli::parseCommandLine(app, argc, argv)) {
    return *code;
  }
  if (options.theory) {
    std::fputs(efu::formatLineRateTable(efu::paperTable1UserSizes(), options.linkBps).c_str(),
               stdout);
    return 0;
  }
  try {
    efu::setupLogging("udpgen", "info", "");
    efu::installStopSignals();
    if (!options.pcapPath.empty()) {
      return replayCapture(options);
    }
    if (const std::string error = efu::pinCurrentThread(options.cpu); !error.empty()) {
      spdlog::warn("{}; running unpinned", error);
    }
    if (options.requestResponse) {
      return requestResponse(options);
    }
    if (!options.sweep.empty()) {
      return sweepSpacings(options);
    }
    return sendDatagrams(options);
  } catch (const std::exception &e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
