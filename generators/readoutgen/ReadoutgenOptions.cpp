// SPDX-License-Identifier: BSD-2-Clause
// readoutgen's options: names, help texts and checks (docs/tools.md).
#include "generators/readoutgen/ReadoutgenOptions.h"

#include "common/system/CliAliases.h"
#include "common/system/CliChecks.h"
#include "generators/readoutgen/Pattern.h"

namespace efu::readoutgen {

void addReadoutgenOptions(CLI::App &app, ReadoutgenOptions &options) {
  GeneratorOptions &o = options.generator;
  auto *detectorOption = app.add_option("-d,--det", o.detector,
                                        "Detector module whose readouts to generate (any module "
                                        "that describes its readout source; see --help-modules)")
                             ->capture_default_str();
  auto *configOption =
      app.add_option("-f,--config", o.configPath, "Instrument JSON (the module's --config file)")
          ->required()
          ->check(efu::cli::kRegularFile);
  app.add_option("--calibration", o.calibrationPath,
                 "Calibration JSON as given to efu --calibration: readouts are written so that the "
                 "calibrated module recovers the drawn pixels (caen)")
      ->check(efu::cli::kRegularFile);
  auto *addressOption =
      app.add_option("-i,--dip", o.address, "Destination IPv4 address")->capture_default_str();
  app.add_option("--module-path", o.moduleDirs,
                 "Directories searched first for efu-module-NAME.so (as efu --module-path)");
  app.add_flag("--help-modules", options.listModules,
               "List the modules readoutgen can generate for");
  app.add_option("-p,--port", o.port, "Destination UDP port")->capture_default_str();
  app.add_option("-n,--count", o.count, "Events to send (0 = unlimited)")->capture_default_str();
  auto *stopAfterOption =
      app.add_option("--stopafter", o.durationS, "Seconds to run (0 = unlimited)")
          ->capture_default_str()
          ->check(CLI::NonNegativeNumber);
  auto *epsOption =
      app.add_option("--eps", o.rateEventsPerS, "Events per second (0 = as fast as possible)")
          ->capture_default_str()
          ->check(CLI::NonNegativeNumber);
  app.add_option("--bitrate", options.bitRate,
                 "Datagram bytes per second as a bit rate, e.g. 500M, 2G (with --eps: the "
                 "slower of the two)");
  app.add_option("-s,--size", o.sizeBytes, "Largest datagram, bytes (header + readouts)")
      ->capture_default_str();
  app.add_option("--pulse-hz", o.pulseHz, "Pulse frequency")->capture_default_str();
  app.add_option("--events-per-pulse", o.eventsPerPulse,
                 "Events per pulse (0 = eps / pulse-hz when --eps is set, else 1000)")
      ->capture_default_str();
  app.add_option("--tof", o.tof,
                 "TOF distribution: uniform:MIN_MS:MAX_MS or gauss:MEAN_MS:SIGMA_MS (default: "
                 "uniform over one pulse period)");
  app.add_option("--pattern", o.pattern, "Test pattern: " + Pattern::builtinNames())
      ->capture_default_str();
  app.add_option("--mask", o.maskPath,
                 "PGM mask (P2/P5): neutrons on pixels brighter than "
                 "half maxval; overrides --pattern")
      ->check(efu::cli::kRegularFile);
  app.add_option("--queues", o.queues, "Output queues used round-robin (1..12)")
      ->capture_default_str();
  app.add_option("--header-version", o.headerVersion, "ESS header version (0: 30 B, 1: 32 B)")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Random seed")->capture_default_str();
  app.add_option("--truth", o.truthPath,
                 "Write ground truth as CSV: pulse_time_ns,tof_ns,pixel_id (one line per event)");
  app.add_option("--pcap-out", o.pcapOutPath,
                 "Also write every datagram sent to this pcap file (Ethernet/IPv4/UDP, "
                 "stamped with the send time; replay it with udpgen --pcap)");
  app.add_option("--inject-errors", o.inject,
                 "Malformed datagrams to mix in, KIND:N (repeatable; kinds: cookie, version, "
                 "padding, length, truncated, short, queue, type, pulse_fraction, "
                 "prev_pulse_fraction, prev_after_pulse, timing, time_status, even_fibre_sync, "
                 "odd_fibre_sync); prev_after_pulse, which efu accepts, goes into N valid "
                 "datagrams instead")
      ->delimiter(',');
  app.add_option("--inject-every", o.injectEvery,
                 "One malformed datagram after every this many valid ones (prev_after_pulse: "
                 "in every this many)")
      ->capture_default_str();
  app.add_flag("-q,--quiet", o.quiet, "No progress lines");
  app.add_flag("--json", o.json, "Print the summary as one JSON line on stdout");
  // Spellings before the option vocabulary of docs/tools.md.
  efu::cli::addDeprecatedAlias(app, "--detector", detectorOption);
  efu::cli::addDeprecatedAlias(app, "-c", configOption);
  efu::cli::addDeprecatedAlias(app, "-a,--address", addressOption);
  efu::cli::addDeprecatedAlias(app, "--duration", stopAfterOption);
  efu::cli::addDeprecatedAlias(app, "-r,--rate", epsOption);
}

} // namespace efu::readoutgen
