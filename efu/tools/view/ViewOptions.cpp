// SPDX-License-Identifier: BSD-2-Clause
// efu-view's options: names, help texts and checks, in the vocabulary of docs/tools.md.
#include "efu/tools/view/ViewOptions.h"

#include "common/system/CliChecks.h"
#include "efu/tools/dump/DumpOptions.h"
#include "common/system/Log.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmath>

namespace efu::tools::view {

namespace {

/// A numeric IPv4 or IPv6 address (what the server binds to; names are not resolved).
const CLI::Validator kNumericAddress(
    [](std::string &text) -> std::string {
      in_addr v4{};
      in6_addr v6{};
      if (::inet_pton(AF_INET, text.c_str(), &v4) == 1 ||
          ::inet_pton(AF_INET6, text.c_str(), &v6) == 1) {
        return {};
      }
      return "'" + text + "' is not a numeric IPv4 or IPv6 address";
    },
    "");

/// --window: 0 (everything since the start or the last reset) or 1..kMaxWindowS seconds.
const CLI::Validator kWindow(
    [](std::string &text) -> std::string {
      try {
        size_t used = 0;
        const double value = std::stod(text, &used);
        if (used == text.size() && std::isfinite(value) &&
            (value == 0.0 || (value >= 1.0 && value <= kMaxWindowS))) {
          return {};
        }
      } catch (const std::exception &) {
      }
      return "must be 0 or 1..3600 seconds, got '" + text + "'";
    },
    "");

} // namespace

void addViewOptions(CLI::App &app, ViewOptions &options) {
  app.add_option("-b,--broker", options.brokers, "Kafka bootstrap servers (host:port[,...])")
      ->type_name("LIST")
      ->capture_default_str();
  app.add_option("-t,--topic", options.topics,
                 "Topic to read (repeatable): ev44, da00, f144 and x5f2 messages, told apart by "
                 "their flatbuffers file identifier")
      ->type_name("TOPIC")
      ->required();
  app.add_option("--from", options.from, "Start at the beginning or the end of each partition")
      ->check(CLI::IsMember({"beginning", "end"}))
      ->capture_default_str();
  app.add_option("-X", options.settings,
                 "librdkafka consumer setting key=value (repeatable, as in kcat)")
      ->check(efu::cli::kKeyValue)
      ->type_name("KEY=VALUE");
  app.add_option("-l,--log-level", options.logLevel, std::string("One of: ") + efu::kLogLevels)
      ->capture_default_str();
  app.add_option("--stopafter", options.stopAfterS,
                 "Stop after S seconds (0 = until SIGINT/SIGTERM)")
      ->type_name("S")
      ->check(efu::cli::kFinite)
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();

  auto *geometry = app.add_option("--geometry", options.geometryPath,
                                  "Instrument config (modules/*/configs/*.json) giving the "
                                  "detector image; without it, spectra and rates only")
                       ->type_name("CONFIG.json")
                       ->group("Accumulation");
  addGeometryModuleOptions(app, geometry, options.module, options.moduleDirs, "Accumulation");
  app.add_option("--tof-bins", options.tofBins,
                 "Time-of-flight bins of every spectrum (the page regroups them)")
      ->check(CLI::Range(1U, kMaxTofBins))
      ->capture_default_str()
      ->group("Accumulation");
  app.add_option("--tof-max-ns", options.tofMaxNs,
                 "Range of every time-of-flight spectrum: [0, NS) (default 100 ms)")
      ->type_name("NS")
      ->check(CLI::Range(int64_t{1}, kMaxTofRangeNs))
      ->capture_default_str()
      ->group("Accumulation");
  app.add_option("--window", options.windowS,
                 "Show the last S seconds (1..3600); 0 = everything since the start or the "
                 "last reset")
      ->type_name("S")
      ->check(kWindow)
      ->capture_default_str()
      ->group("Accumulation");

  app.add_option("--http-address", options.httpAddress,
                 "Numeric address the page is served on; anything but loopback is warned about "
                 "(no authentication)")
      ->type_name("ADDR")
      ->check(kNumericAddress)
      ->capture_default_str()
      ->group("HTTP");
  app.add_option("--http-port", options.httpPort,
                 "TCP port of the page (0 = the kernel picks one; the line on stdout says which)")
      ->type_name("N")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str()
      ->group("HTTP");
}

} // namespace efu::tools::view
