// SPDX-License-Identifier: BSD-2-Clause
// udpgen's command-line options: one struct, registered on a CLI11 app with the real defaults.
#include "generators/udpgen/UdpGenOptions.h"

#include "common/net/LineRate.h"
#include "common/system/CliAliases.h"
#include "generators/udpgen/Sweep.h"

#include <stdexcept>

namespace efu::udpgen {

namespace {

/// Rewrites "10G" to "10000000000" so CLI11 can store it in a double; errors name the text.
CLI::Validator bitRateTransform() {
  return CLI::Validator(
      [](std::string &text) -> std::string {
        try {
          text = std::to_string(parseBitRate(text));
          return {};
        } catch (const std::invalid_argument &e) {
          return e.what();
        }
      },
      "RATE[k|M|G|T]", "BitRate");
}

} // namespace

void addUdpGenOptions(CLI::App &app, UdpGenOptions &options) {
  auto *address = app.add_option("-i,--dip", options.address, "Destination IPv4 address")
                      ->capture_default_str();
  app.add_option("-p,--port", options.port, "Destination UDP port")->capture_default_str();
  app.add_option("-s,--size", options.sizeBytes, "User data (UDP payload) bytes per datagram")
      ->capture_default_str()
      ->check(CLI::Range(kMinSizeBytes, kMaxSizeBytes));
  auto *rate = app.add_option("--bitrate", options.rateBps,
                              "Offered user-data rate in bits/s (suffixes k M G T; 0 = unpaced)")
                   ->capture_default_str()
                   ->transform(bitRateTransform());
  auto *pps = app.add_option("--pps", options.pps, "Offered datagrams per second (0 = unpaced)")
                  ->capture_default_str();
  rate->excludes(pps);
  pps->excludes(rate);
  auto *spacing =
      app.add_option("--spacing", options.spacingUs,
                     "Microseconds from the start of one group of --burst datagrams to the next "
                     "(udpmon's -w); a late group does not make the next one early (0 = off)")
          ->capture_default_str()
          ->check(CLI::Range(0.0, 1e9))
          ->excludes(rate)
          ->excludes(pps);
  app.add_option("--burst", options.burst,
                 "With --spacing: datagrams sent back to back in one send call per spacing")
      ->capture_default_str()
      ->check(CLI::Range(1U, kMaxBatch))
      ->needs(spacing);
  app.add_option("-n,--count", options.count, "Datagrams to send (0 = unlimited)")
      ->capture_default_str();
  auto *stopAfter =
      app.add_option("--stopafter", options.durationS, "Seconds to run (0 = unlimited)")
          ->capture_default_str()
          ->check(CLI::NonNegativeNumber);
  app.add_option("--cpu", options.cpu, "Pin the sending thread to this core (-1 = not pinned)")
      ->capture_default_str()
      ->check(CLI::Range(-1, 4095));
  app.add_option("--batch", options.batch,
                 "Messages per sendmmsg call (with --pcap: of datagrams already due)")
      ->capture_default_str()
      ->check(CLI::Range(1U, kMaxBatch));
  app.add_option("--gso", options.gso,
                 "UDP GSO: datagrams per message (UDP_SEGMENT; 0 = off; clamped to 64 and to "
                 "< 64 KiB per message; with --pcap: runs of equal-size datagrams)")
      ->capture_default_str()
      ->check(CLI::Range(0U, 1024U));
  app.add_option("--sndbuf", options.sndbufBytes,
                 "SO_SNDBUF request in bytes (0 = kernel default); the granted size is printed")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{0}, uint64_t{0x7fffffff}));
  auto *pcap = app.add_option("--pcap", options.pcapPath,
                              "Replay the UDP payloads of this capture (pcap/pcapng) byte for byte "
                              "instead of generating datagrams; -i/-p name the destination")
                   ->check(CLI::ExistingFile);
  app.add_option("--pcap-filter", options.pcapFilter,
                 "With --pcap: BPF filter choosing the packets (tcpdump syntax)")
      ->capture_default_str()
      ->needs(pcap);
  app.add_option("--speed", options.speed,
                 "With --pcap: 1 = the capture's own timing, 2 = twice as fast, 0 = as fast as "
                 "possible (--pps sets a fixed rate instead)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e6))
      ->needs(pcap);
  app.add_option("--loop", options.loops, "With --pcap: passes over the capture (0 = until stopped)")
      ->capture_default_str()
      ->needs(pcap);
  pcap->excludes(rate);
  pcap->excludes(spacing);
  auto *rr = app.add_flag("--rr", options.requestResponse,
                          "Request-response: send one datagram, wait for its echo (udpecho), "
                          "record the round-trip time; summary with p50/p90/p99. Ends with exit "
                          "code 1 after 3 requests in a row without an echo (nobody answers)")
                 ->excludes(rate)
                 ->excludes(pps)
                 ->excludes(spacing)
                 ->excludes(pcap);
  app.add_option("--rr-timeout", options.rrTimeoutMs,
                 "With --rr: milliseconds to wait for each echo; a request without one is "
                 "counted as a timeout")
      ->capture_default_str()
      ->check(CLI::Range(1U, 3'600'000U))
      ->needs(rr);
  auto *sweep =
      app.add_option("--sweep", options.sweep,
                     "Throughput vs spacing (udpmon): -n datagrams (default 10000) at each "
                     "spacing FROM, FROM+STEP, ... TO, in µs, one stream of sequence numbers; a "
                     "table at the end")
          ->type_name("FROM:TO:STEP")
          ->check(CLI::Validator(
              [](std::string &text) -> std::string {
                try {
                  (void)sweepSpacings(text);
                  return {};
                } catch (const std::invalid_argument &e) {
                  return e.what();
                }
              },
              "FROM:TO:STEP"))
          ->excludes(rate)
          ->excludes(pps)
          ->excludes(spacing)
          ->excludes(pcap)
          ->excludes(stopAfter)
          ->excludes("--rr");
  app.add_option("-m,--cmdport", options.cmdPort,
                 "With --sweep: control port of the efu receiving on -i (same address); its "
                 "receive.packets and receive.dropped per spacing go into the table (0 = none)")
      ->capture_default_str()
      ->needs(sweep);
  app.add_flag("--json", options.json, "Print the final summary as one JSON line on stdout");
  app.add_flag("-q,--quiet", options.quiet, "No per-second progress lines");
  app.add_flag("--theory", options.theory,
               "Print the line-rate table (the paper's Table 1) for --link and exit");
  app.add_option("--link", options.linkBps, "Link speed for --theory in bits/s (suffixes k M G T)")
      ->capture_default_str()
      ->transform(bitRateTransform())
      ->check(CLI::PositiveNumber);
  // Spellings before the option vocabulary of docs/tools.md.
  cli::addDeprecatedAlias(app, "--ip", address);
  cli::addDeprecatedAlias(app, "--rate", rate);
  cli::addDeprecatedAlias(app, "--duration", stopAfter);
}

} // namespace efu::udpgen
