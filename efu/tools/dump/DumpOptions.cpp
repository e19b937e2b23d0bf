// SPDX-License-Identifier: BSD-2-Clause
// efu-dump's options: names, help texts, checks and which ones need which (docs/tools.md).
#include "efu/tools/dump/DumpOptions.h"

#include "common/system/CliAliases.h"
#include "common/system/CliChecks.h"
#include "common/system/Log.h"
#include "efu/tools/dump/Image.h"
#include "efu/tools/dump/TofHistogram.h"

namespace efu::tools {

void addGeometryModuleOptions(CLI::App &app, CLI::Option *geometry, std::string &module,
                              std::vector<std::string> &moduleDirs, const std::string &group) {
  app.add_option("-d,--det", module,
                 "Module whose geometry --geometry is (efu -d NAME); default: the one module "
                 "that accepts the config")
      ->type_name("NAME")
      ->needs(geometry)
      ->group(group);
  app.add_option("--module-path", moduleDirs,
                 "Directories searched first for efu-module-NAME.so (as efu --module-path)")
      ->type_name("DIR")
      ->group(group);
}

void addDumpOptions(CLI::App &app, DumpOptions &options) {
  app.add_option("-b,--broker", options.brokers, "Kafka bootstrap servers (host:port[,...])")
      ->type_name("LIST")
      ->capture_default_str();
  auto *topic = app.add_option("-t,--topic", options.topics,
                               "Topic to consume (repeatable; required unless --report)")
                    ->type_name("TOPIC");
  app.add_option("--from", options.from, "Start at the beginning or the end of each partition")
      ->check(CLI::IsMember({"beginning", "end"}))
      ->capture_default_str();
  auto *count = app.add_option("-n,--count", options.count, "Stop after N messages (0 = unlimited)")
                    ->capture_default_str();
  efu::cli::addDeprecatedAlias(app, "-c", count); // before the option vocabulary, docs/tools.md
  app.add_option("--timeout", options.timeoutS,
                 "Stop after S seconds without a message (0 = never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--format", options.format, "Output: json (one object per line) or text")
      ->check(CLI::IsMember({"json", "text"}))
      ->capture_default_str();
  app.add_flag("--summary", options.summary,
               "At the end, print counts and messages/s, events/s, bytes/s to stderr");
  app.add_option("-X", options.settings,
                 "librdkafka consumer setting key=value (repeatable, as in kcat)")
      ->check(efu::cli::kKeyValue)
      ->type_name("KEY=VALUE");
  app.add_option("-l,--log-level", options.logLevel, std::string("One of: ") + efu::kLogLevels)
      ->capture_default_str();
  auto *geometry = app.add_option("--geometry", options.geometryPath,
                                  "Instrument config (modules/*/configs/*.json) giving the image "
                                  "geometry for --image")
                       ->type_name("CONFIG.json")
                       ->group("Pictures");
  auto *image = app.add_option("--image", options.imagePath,
                               "Write a PNG of the counts per ev44 pixel id (at the end, and with "
                               "--image-every also while running)")
                    ->type_name("FILE.png")
                    ->needs(geometry)
                    ->group("Pictures");
  geometry->needs(image);
  addGeometryModuleOptions(app, geometry, options.module, options.moduleDirs, "Pictures");
  app.add_option("--image-scale", options.imageScale,
                 "Draw each detector pixel as N x N picture pixels")
      ->check(CLI::Range(1U, kMaxImageScale))
      ->capture_default_str()
      ->needs(image)
      ->group("Pictures");
  app.add_flag("--log-scale", options.logScale, "Colour --image by log(1 + count)")
      ->needs(image)
      ->group("Pictures");
  app.add_option("--pcap", options.pcapPath,
                 "Also write the datagrams of ar51 raw-readout samples to this pcap file "
                 "(Ethernet/IPv4/UDP on 127.0.0.1, for Wireshark or replay)");
  app.add_option("--pcap-port", options.pcapPort, "UDP port the --pcap datagrams are addressed to")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  auto *tof = app.add_option("--tof-histogram", options.tofPath,
                             "Write a PNG bar chart of the ev44 time of flight")
                  ->type_name("FILE.png")
                  ->group("Pictures");
  app.add_option("--tof-bins", options.tofBins, "Bins of --tof-histogram")
      ->check(CLI::Range(1U, TofHistogram::kMaxBins))
      ->capture_default_str()
      ->needs(tof)
      ->group("Pictures");
  app.add_option("--tof-max-ns", options.tofMaxNs,
                 "Range of --tof-histogram is [0, NS) (default: the largest tof seen, rounded "
                 "up to whole bins)")
      ->check(CLI::Range(int64_t{1}, TofHistogram::kMaxRangeNs))
      ->needs(tof)
      ->group("Pictures");
  app.add_option("--da00-png", options.da00Prefix,
                 "Write a PNG bar chart per da00 source (the cbm module's histograms) as "
                 "PREFIX<source>.png: its 'signal' summed over the messages, against its "
                 "time-bin axis")
      ->type_name("PREFIX")
      ->group("Pictures");
  app.add_option("--image-every", options.imageEveryS,
                 "Also rewrite --image, --tof-histogram and --da00-png every S seconds when "
                 "new messages arrived (0 = only at the end)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->group("Pictures");
  auto *report =
      app.add_option("--report", options.report,
                     "Instead of Kafka: print a module's report (REPORT_GET NAME, e.g. "
                     "udp.histograms, udp.loss.pattern) from efu's control port and exit")
          ->group("Reports");
  app.add_option("-m,--cmdport", options.cmdPort, "With --report: efu's control port")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535))
      ->needs(report)
      ->group("Reports");
  app.add_option("--cmdaddr", options.cmdAddress, "With --report: efu's control address")
      ->capture_default_str()
      ->needs(report)
      ->group("Reports");
  app.add_option("--report-png", options.reportPng,
                 "With --report: draw each histogram of the report as PREFIX<name>.png (log "
                 "bins, one bar each)")
      ->type_name("PREFIX")
      ->needs(report)
      ->group("Reports");
  topic->excludes(report);
}

} // namespace efu::tools
