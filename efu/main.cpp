// SPDX-License-Identifier: BSD-2-Clause
// efu: receives detector datagrams, runs a detector module on them, publishes events and counters.
#include "common/sdk/ModuleConfig.h"
#include "common/sdk/ModuleLoader.h"
#include "common/system/CliExit.h"
#include "common/system/Log.h"
#include "common/system/StopSignals.h"
#include "efu/Daemon.h"
#include "efu/Options.h"
#include "efu/Preflight.h"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <malloc.h>

#include <cstdio>
#include <exception>

namespace {

/// -d list and --help-module print and return instead of running. Logging is set up first, as
/// for a run, so a bad --log-level or --log-file fails the same way.
int describe(const efu::DaemonOptions &options) {
  efu::setupLogging("efu", options.logLevel, options.logFile);
  const auto searchPath = efu::moduleSearchPath(options.modulePaths);
  if (options.detector == "list") {
    std::fputs(efu::describeModules(searchPath).c_str(), stdout);
    return 0;
  }
  const auto library = efu::loadModule(options.detector, searchPath);
  std::fputs(efu::formatModuleHelp(library->descriptor()).c_str(), stdout);
  return 0;
}

int run(const efu::DaemonOptions &options) {
  if (options.detector == "list" || options.helpModule) {
    return describe(options);
  }
  // Before start-up, which may take seconds (a large config, a slow broker lookup): a stop
  // signal meanwhile ends it cleanly instead of killing the process without a word.
  efu::installStopSignals(efu::Hangup::ReopenLog, efu::Repeat::Ignore);
  try {
    efu::Daemon daemon(options);
    const std::string reason = daemon.serve();
    return daemon.stop(reason);
  } catch (const efu::StartupStopped &) {
    return 0; // logged by the Daemon
  }
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
