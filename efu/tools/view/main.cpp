// SPDX-License-Identifier: BSD-2-Clause
// efu-view: reads efu's Kafka topics and serves a live page of them (detector image, time-of-flight
// spectra, regions of interest, beam monitors, efu's counters and status) from the binary itself.
#include "common/net/TcpListener.h"
#include "common/system/CliExit.h"
#include "common/system/Log.h"
#include "common/system/StopSignals.h"
#include "common/time/Time.h"
#include "efu/tools/dump/Image.h"
#include "efu/tools/view/KafkaReader.h"
#include "efu/tools/view/ViewOptions.h"
#include "efu/tools/view/ViewServer.h"
#include "efu/tools/view/ViewState.h"
#include "efu/tools/view/EmbeddedFiles.h"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <exception>
#include <limits>

namespace {

using efu::tools::view::ViewOptions;

/// The accumulation's settings; loads --geometry (throws efu::tools::GeometryError naming it).
efu::tools::view::ViewConfig viewConfig(const ViewOptions &options) {
  efu::tools::view::ViewConfig config;
  if (!options.geometryPath.empty()) {
    config.geometry =
        efu::tools::loadGeometry(options.geometryPath, options.module, options.moduleDirs);
    const auto &g = *config.geometry;
    spdlog::info("image: {} geometry {} x {} pixels (ids {}..{}) from {}{}", g.kind, g.width,
                 g.height, g.firstPixel, g.lastPixel(), options.geometryPath,
                 g.instrument.empty() ? "" : " (" + g.instrument + ")");
  }
  config.tofBins = options.tofBins;
  config.tofMaxNs = options.tofMaxNs;
  config.windowS = options.windowS;
  config.bootstrap = options.brokers;
  config.topics = options.topics;
  return config;
}

int run(const ViewOptions &options) {
  efu::tools::view::ViewState state(viewConfig(options));
  efu::tools::view::KafkaReader reader(
      {options.brokers, options.topics, options.from, options.settings}, state);
  efu::tools::view::ServerOptions serverOptions;
  serverOptions.address = options.httpAddress;
  serverOptions.port = options.httpPort;
  efu::tools::view::ViewServer server(state, serverOptions, efu::tools::view::webAssets());
  if (const auto warning = efu::tools::view::httpExposure(options.httpAddress, server.port());
      !warning.empty()) {
    spdlog::warn("{}", warning);
  }
  server.start();
  reader.start();
  // The one line on stdout: scripts and tests read the port from it.
  std::printf("efu-view: serving http://%s/\n",
              efu::endpoint(options.httpAddress, server.port()).c_str());
  std::fflush(stdout);

  const int64_t deadlineNs =
      options.stopAfterS > 0
          ? efu::monotonicNs() + static_cast<int64_t>(options.stopAfterS * efu::kNsPerSec)
          : std::numeric_limits<int64_t>::max();
  efu::sleepUntilMonotonicNs(deadlineNs, efu::stopFlag());
  if (efu::stopSignal() != 0) {
    spdlog::info("stopping on {}", efu::signalName(efu::stopSignal()));
  } else {
    spdlog::info("stopping after --stopafter {} s", options.stopAfterS);
  }
  server.stop();
  reader.stop();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{
      "efu-view: read efu's Kafka topics (ev44, da00, f144, x5f2) and serve a live page of\n"
      "them: detector image, time-of-flight spectra, regions of interest, beam monitors,\n"
      "efu's counters and status. Once listening it prints one line on stdout,\n"
      "'efu-view: serving http://ADDR:PORT/'; logs go to stderr. Exit status: 0 stopped\n"
      "(SIGINT, SIGTERM, --stopafter), 1 could not start."};
  ViewOptions options;
  efu::tools::view::addViewOptions(app, options);
  app.set_version_flag("--version", EFU_VERSION);
  if (const auto code = efu::cli::parseCommandLine(app, argc, argv)) {
    return *code;
  }
  try {
    efu::setupLogging("efu-view", options.logLevel, "");
    efu::installStopSignals();
    return run(options);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "efu-view: %s\n", e.what());
    return efu::cli::kExitCouldNotStart;
  }
}
