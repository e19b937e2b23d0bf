// SPDX-License-Identifier: BSD-2-Clause
// docs/counters.md against the real daemon: every module, every optional output; the counters
// it registers are exactly the documented ones, and the ESS tools find what they look for.
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

using namespace efu::testkit;
using namespace std::chrono_literals;

namespace {

/// One documented name (placeholders turned into a pattern) and the modules it belongs to.
struct Documented {
  std::string name;
  std::regex pattern;
  std::set<std::string> modules; ///< "all" or module names
};

std::string patternOf(const std::string &name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name.compare(i, 3, "<i>") == 0) {
      out += "[0-9]+";
      i += 2;
    } else if (name.compare(i, 4, "<NN>") == 0) {
      out += "[0-9][0-9]";
      i += 3;
    } else if (name.compare(i, 3, "<s>") == 0) {
      out += "[a-z0-9_]+";
      i += 2;
    } else if (name.compare(i, 3, "<t>") == 0) {
      out += "(rx|rx[0-9]+|proc)";
      i += 2;
    } else if (name[i] == '.') {
      out += "\\.";
    } else {
      out += name[i];
    }
  }
  return out;
}

/// Reads the tables of docs/counters.md: a heading "... — modules: a, b" sets the modules of
/// the rows below it; a row's first cell holds one backticked counter name.
std::vector<Documented> readDocs() {
  std::ifstream in(std::string(EFU_SOURCE_DIR) + "/docs/counters.md");
  EXPECT_TRUE(in.good()) << "docs/counters.md not found";
  std::vector<Documented> out;
  std::set<std::string> modules;
  const std::regex heading(R"(^#+ .* — modules: (.*)$)");
  const std::regex row(R"(^\| `([a-z0-9_.<>A-Z]+)` \|)");
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_match(line, m, heading)) {
      modules.clear();
      std::istringstream list(m[1].str());
      for (std::string word; list >> word;) {
        while (!word.empty() && (word.back() == ',' || word.back() == ')')) {
          word.pop_back();
        }
        if (!word.empty() && word.front() != '(') {
          modules.insert(word);
        }
        if (word.front() == '(') {
          break; // "(not with --no-kafka)": a condition, not a module
        }
      }
    } else if (line.rfind("#", 0) == 0) {
      modules.clear(); // a section without "modules:" documents no counters
    } else if (std::regex_search(line, m, row) && !modules.empty()) {
      out.push_back({m[1].str(), std::regex(patternOf(m[1].str())), modules});
    }
  }
  return out;
}

/// Every counter name efu registered, in STAT_GET order (1-based, as the ESS tools walk them).
std::vector<std::string> registered(uint16_t cmd) {
  std::vector<std::string> out;
  const std::string count = control(cmd, "STAT_GET_COUNT");
  const int n = std::atoi(count.substr(count.rfind(' ') + 1).c_str());
  for (int i = 1; i <= n; ++i) {
    std::istringstream reply(control(cmd, "STAT_GET " + std::to_string(i)));
    std::string verb, name;
    reply >> verb >> name;
    out.push_back(name);
  }
  return out;
}

struct Module {
  std::string name;
  std::vector<std::string> args;
};

void PrintTo(const Module &module, std::ostream *out) { *out << module.name; }

/// Starts efu with `args`, returns the registered names and stops it.
std::vector<std::string> namesOf(const Module &module, std::vector<std::string> args) {
  const uint16_t cmd = freeTcpPort();
  std::vector<std::string> argv{EFU_BINARY,    "-d", module.name, "-i", "127.0.0.1", "-p",
                                std::to_string(freeUdpPort()), "-m", std::to_string(cmd),
                                "--stats-interval", "0.2"};
  argv.insert(argv.end(), module.args.begin(), module.args.end());
  argv.insert(argv.end(), args.begin(), args.end());
  Process efu(argv);
  // thread.* and machine.* appear with the first interval: wait for main.uptime's neighbours.
  EXPECT_TRUE(eventually([&] { return counter(cmd, "machine.cpu.busy_pct").has_value(); }))
      << efu.output();
  auto names = registered(cmd);
  efu.signal(SIGTERM);
  EXPECT_TRUE(efu.wait(20s).has_value()) << efu.output();
  return names;
}

class CounterDocs : public ::testing::TestWithParam<Module> {};

TEST_P(CounterDocs, RegisteredCountersAreExactlyTheDocumentedOnes) {
  const Module &module = GetParam();
  const auto docs = readDocs();
  ASSERT_GT(docs.size(), 50U);
  DevBroker broker(BROKER_BINARY);
  // Every optional output on (Kafka with ar51 sampling, Graphite to a port nobody listens on,
  // the metrics server, two rx queues, a processing thread), then everything off.
  const std::vector<std::vector<std::string>> runs{
      {"-b", broker.bootstrap(), "--monitor-every", "10", "-g", "127.0.0.1", "-o",
       std::to_string(freeTcpPort()), "--metrics-port", std::to_string(freeTcpPort()),
       "--rx-queues", "2", "--threads", "2"},
      {"--no-kafka"}};
  std::set<std::string> seen;
  for (const auto &run : runs) {
    const auto names = namesOf(module, run);
    ASSERT_FALSE(names.empty());
    for (const auto &name : names) {
      seen.insert(name);
      const bool documented = std::any_of(docs.begin(), docs.end(), [&](const Documented &d) {
        return (d.modules.count("all") > 0 || d.modules.count(module.name) > 0) &&
               std::regex_match(name, d.pattern);
      });
      EXPECT_TRUE(documented) << name << " (" << module.name
                              << ") is registered but not in docs/counters.md";
    }
    // efurates.py: every counter whose name contains one of these, in STAT_GET order; it
    // prints the first four, so each must match exactly once.
    // (caen has the ESS EFU's CAEN name, parser.readout.count.)
    for (const std::vector<std::string> &wanted :
         std::vector<std::vector<std::string>>{{"receive.packets"}, {"receive.bytes"},
                                               {"readouts.count", "readout.count"},
                                               {"events.count"}}) {
      EXPECT_EQ(std::count_if(names.begin(), names.end(),
                              [&](const std::string &n) {
                                return std::any_of(wanted.begin(), wanted.end(), [&](const auto &w) {
                                  return n.find(w) != std::string::npos;
                                });
                              }),
                1)
          << wanted.front() << " for efurates.py (" << module.name << ")";
    }
    EXPECT_EQ(names.front(), "main.uptime") << "isefurunning.py reads STAT_GET 1 as a number";
  }
  for (const auto &d : docs) {
    if (d.modules.count("all") == 0 && d.modules.count(module.name) == 0) {
      continue;
    }
    const bool present = std::any_of(seen.begin(), seen.end(), [&](const std::string &name) {
      return std::regex_match(name, d.pattern);
    });
    EXPECT_TRUE(present) << d.name << " is documented for " << module.name
                         << " but efu did not register it";
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryModule, CounterDocs,
    ::testing::Values(Module{"udp", {}},
                      Module{"caen", {"-f", std::string(EFU_SOURCE_DIR) + "/modules/caen/configs/LokiFull.json"}},
                      Module{"vmm3", {"-f", std::string(EFU_SOURCE_DIR) + "/modules/vmm3/configs/freia.json"}},
                      Module{"trex", {"-f", std::string(EFU_SOURCE_DIR) + "/modules/trex/configs/trex.json"}},
                      Module{"nmx", {"-f", std::string(EFU_SOURCE_DIR) + "/modules/nmx/configs/nmx.json"}},
                      Module{"cbm", {"-f", std::string(EFU_SOURCE_DIR) + "/modules/cbm/configs/cbmtest.json"}},
                      Module{"dream", {"-f", std::string(EFU_SOURCE_DIR) + "/modules/dream/configs/DreamInst.json"}},
                      Module{"magic", {"-f", std::string(EFU_SOURCE_DIR) + "/modules/dream/configs/MagicInst.json"}},
                      Module{"heimdal", {"-f", std::string(EFU_SOURCE_DIR) + "/modules/dream/configs/HeimdalInst.json"}},
                      Module{"timepix3", {"-f", std::string(EFU_SOURCE_DIR) + "/modules/timepix3/configs/timepix3.json"}},
                      Module{"example", {}},
                      Module{"perfgen", {}}),
    [](const ::testing::TestParamInfo<Module> &p) { return p.param.name; });

} // namespace
