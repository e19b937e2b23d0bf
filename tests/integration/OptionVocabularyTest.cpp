// SPDX-License-Identifier: BSD-2-Clause
// docs/tools.md's option vocabulary against every program's --help, and readoutgen's old spellings.
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace efu::testkit {
namespace {

using namespace std::chrono_literals;

const std::map<std::string, std::string> kPrograms = {{"efu", EFU_BINARY},
                                                      {"udpgen", UDPGEN_BINARY},
                                                      {"readoutgen", READOUTGEN_BINARY},
                                                      {"efu-dump", DUMP_BINARY},
                                                      {"efu-view", VIEW_BINARY},
                                                      {"efu-broker", BROKER_BINARY},
                                                      {"udpecho", UDPECHO_BINARY}};

/// One row of the table: spellings, the programs that have them, and each program's old ones.
struct Row {
  std::string meaning;
  std::vector<std::string> spellings;
  std::vector<std::string> programs;
  std::map<std::string, std::vector<std::string>> old;
};

/// The option names in `text` ("-d, --det NAME" gives -d and --det).
std::vector<std::string> optionNames(const std::string &text) {
  static const std::regex kName(R"((?:^|[\s,`])(--?[A-Za-z][A-Za-z0-9-]*))");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kName);
       it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1]);
  }
  return names;
}

std::vector<std::string> split(const std::string &text, char separator) {
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, separator);) {
    const auto first = part.find_first_not_of(' ');
    const auto last = part.find_last_not_of(' ');
    parts.push_back(first == std::string::npos ? "" : part.substr(first, last - first + 1));
  }
  return parts;
}

/// The rows of the table under "## Option vocabulary" in docs/tools.md.
std::vector<Row> readVocabulary() {
  std::ifstream in(EFU_SOURCE_DIR "/docs/tools.md");
  std::string line;
  while (std::getline(in, line) && line.rfind("## Option vocabulary", 0) != 0) {
  }
  while (std::getline(in, line) && line.rfind('|', 0) != 0) {
  }
  std::getline(in, line); // the |---| line under the header
  std::vector<Row> rows;
  while (std::getline(in, line) && line.rfind('|', 0) == 0) {
    const auto cells = split(line.substr(1), '|');
    EXPECT_GE(cells.size(), 4U) << line;
    if (cells.size() < 4) {
      continue;
    }
    Row row{cells[0], optionNames(cells[1]), split(cells[2], ','), {}};
    for (const auto &entry : split(cells[3], ';')) {
      if (!entry.empty()) {
        const std::string program = entry.substr(0, entry.find(' '));
        row.old[program] = optionNames(entry.substr(program.size()));
      }
    }
    rows.push_back(row);
  }
  return rows;
}

/// The option names `program --help` lists (the first word of each line starting with '-').
std::set<std::string> helpOptions(const std::string &program) {
  Process help({kPrograms.at(program), "--help"});
  EXPECT_EQ(help.wait(20s), std::optional<int>(0)) << program << ":\n" << help.output();
  std::set<std::string> names;
  std::istringstream out(help.output());
  for (std::string line; std::getline(out, line);) {
    const auto first = line.find_first_not_of(' ');
    if (first != std::string::npos && line[first] == '-') {
      for (const auto &name : split(line.substr(first, line.find(' ', first) - first), ',')) {
        names.insert(name);
      }
    }
  }
  return names;
}

TEST(OptionVocabulary, EveryProgramsHelpFollowsTheTable) {
  const std::vector<Row> rows = readVocabulary();
  ASSERT_GE(rows.size(), 15U) << "the table in docs/tools.md was not found or lost rows";
  std::map<std::string, std::set<std::string>> help;
  for (const auto &[program, binary] : kPrograms) {
    help[program] = helpOptions(program);
    ASSERT_GT(help[program].size(), 3U) << program;
  }
  std::map<std::string, const Row *> rowOf;
  for (const Row &row : rows) {
    EXPECT_FALSE(row.spellings.empty()) << row.meaning;
    for (const auto &spelling : row.spellings) {
      EXPECT_TRUE(rowOf.emplace(spelling, &row).second) << spelling << " is in two rows";
    }
    for (const auto &program : row.programs) {
      ASSERT_TRUE(kPrograms.count(program)) << "unknown program '" << program << "'";
      for (const auto &spelling : row.spellings) {
        EXPECT_TRUE(help[program].count(spelling))
            << program << " --help does not list " << spelling << " (" << row.meaning << ")";
      }
    }
    for (const auto &[program, oldNames] : row.old) {
      ASSERT_TRUE(kPrograms.count(program)) << "unknown program '" << program << "'";
      EXPECT_FALSE(oldNames.empty()) << program << ": " << row.meaning;
      for (const auto &name : oldNames) {
        EXPECT_FALSE(help[program].count(name)) << program << " --help lists the old " << name;
      }
    }
  }
  // A program that shows a spelling of the table has that meaning: its row must name it.
  for (const auto &[program, names] : help) {
    for (const auto &name : names) {
      const auto found = rowOf.find(name);
      if (found != rowOf.end()) {
        const auto &programs = found->second->programs;
        EXPECT_NE(std::find(programs.begin(), programs.end(), program), programs.end())
            << program << " has " << name << " but its row in docs/tools.md does not name it";
      }
    }
  }
}

// Every old spelling of the table still parses (with the same checks: the values below are
// valid), prints its one-line warning naming the new spelling, and is not an error.
TEST(OptionVocabulary, EveryOldSpellingStillParsesAndWarns) {
  const std::string config = EFU_SOURCE_DIR "/modules/caen/configs/LokiFull.json";
  const std::map<std::string, std::string> sample = {
      {"--detector", "caen"},     {"-c", "1"},         {"--ip", "127.0.0.1"}, {"-a", "127.0.0.1"},
      {"--address", "127.0.0.1"}, {"--duration", "1"}, {"--rate", "1000"},    {"-r", "1000"},
      {"--brokers", "1"}};
  for (const Row &row : readVocabulary()) {
    for (const auto &[program, oldNames] : row.old) {
      for (const auto &name : oldNames) {
        ASSERT_TRUE(sample.count(name)) << "add a sample value for " << name;
        std::string value = sample.at(name);
        if (program == "readoutgen" && name == "-c") {
          value = config;
        }
        Process run({kPrograms.at(program), name, value, "--help"});
        ASSERT_EQ(run.wait(20s), std::optional<int>(0)) << program << " " << name << ":\n"
                                                        << run.output();
        const std::string warning = "warning: ";
        const auto at = run.output().find(warning);
        ASSERT_NE(at, std::string::npos) << program << " " << name << ":\n" << run.output();
        const std::string line = run.output().substr(at, run.output().find('\n', at) - at);
        EXPECT_NE(line.find(name), std::string::npos) << line;
        EXPECT_NE(line.find("deprecated"), std::string::npos) << line;
        std::string spelling;
        for (const auto &part : row.spellings) {
          spelling += (spelling.empty() ? "" : "/") + part;
        }
        EXPECT_NE(line.find("; use " + spelling), std::string::npos) << line;
      }
    }
  }
}

// readoutgen's old spellings set what the new ones set (udpgen, efu-dump and efu-broker have
// theirs tested with their other process tests).
TEST(OptionVocabulary, ReadoutgenOldSpellingsStillWork) {
  const uint16_t port = freeUdpPort(); // nobody listens: sends are refused and counted
  Process gen({READOUTGEN_BINARY, "--detector", "vmm3", "-c",
               EFU_SOURCE_DIR "/modules/vmm3/configs/freia.json", "-a", "127.0.0.1", "-p",
               std::to_string(port), "-r", "2000", "--duration", "0.3", "-q", "--json"});
  ASSERT_EQ(gen.wait(60s), std::optional<int>(0)) << gen.output();
  const std::string out = gen.output();
  EXPECT_NE(out.find("vmm3 (" EFU_SOURCE_DIR "/modules/vmm3/configs/freia.json) to 127.0.0.1:" +
                     std::to_string(port)),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("paced at 2000 events/s"), std::string::npos) << out;
  const auto json = nlohmann::json::parse(out.substr(out.rfind("{\"events\"")));
  EXPECT_GE(json.at("elapsed_s").get<double>(), 0.25) << "--duration 0.3";
  EXPECT_LT(json.at("elapsed_s").get<double>(), 10.0) << "--duration 0.3";
  EXPECT_LT(json.at("events").get<uint64_t>(), 20000U) << "paced by -r 2000";
  for (const char *old : {"--detector", "-c", "-a/--address", "-r/--rate", "--duration"}) {
    EXPECT_NE(out.find(std::string("warning: ") + old + " is deprecated"), std::string::npos)
        << old << " in\n"
        << out;
  }
}

} // namespace
} // namespace efu::testkit
