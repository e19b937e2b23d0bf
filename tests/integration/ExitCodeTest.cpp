// SPDX-License-Identifier: BSD-2-Clause
// Every program's exit codes for starting (docs/tools.md#exit-codes): --help and --version 0,
// any usage or configuration error 1 ("could not start", which efu@.service's
// RestartPreventExitStatus=1 relies on), never CLI11's own 105, 106, 109, ...
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace efu::testkit;
using namespace std::chrono_literals;

namespace {

constexpr int kCouldNotStart = 1;
const std::string kMissing = "/nonexistent-efu-test-dir/missing";

struct Program {
  std::string name;
  std::string binary;
  /// The required options: with them an unknown option is the one error to report.
  std::vector<std::string> required;
  /// Arguments naming a file that does not exist (empty: the program reads no file).
  std::vector<std::string> missingFile;
};

void PrintTo(const Program &program, std::ostream *os) { *os << program.name; }

/// Runs `binary args` to its end; returns the exit code and the output.
std::pair<int, std::string> run(const std::string &binary, const std::vector<std::string> &args) {
  std::vector<std::string> argv{binary};
  argv.insert(argv.end(), args.begin(), args.end());
  Process process(argv);
  const auto code = process.wait(30s);
  EXPECT_TRUE(code.has_value()) << binary << " did not end";
  return {code.value_or(-1), process.output()};
}

class ExitCodes : public ::testing::TestWithParam<Program> {};

TEST_P(ExitCodes, HelpVersionBadOptionAndMissingFile) {
  const Program &p = GetParam();
  const auto [help, helpText] = run(p.binary, {"--help"});
  EXPECT_EQ(help, 0) << helpText;
  EXPECT_NE(helpText.find("--version"), std::string::npos) << helpText;
  const auto [version, versionText] = run(p.binary, {"--version"});
  EXPECT_EQ(version, 0) << versionText;
  EXPECT_NE(versionText.find(EFU_VERSION), std::string::npos) << versionText;

  std::vector<std::string> bogusArgs = p.required;
  bogusArgs.emplace_back("--bogus");
  const auto [bogus, bogusText] = run(p.binary, bogusArgs);
  EXPECT_EQ(bogus, kCouldNotStart) << bogusText;
  EXPECT_NE(bogusText.find("--bogus"), std::string::npos) << bogusText;

  if (!p.missingFile.empty()) {
    const auto [missing, missingText] = run(p.binary, p.missingFile);
    EXPECT_EQ(missing, kCouldNotStart) << missingText;
    EXPECT_NE(missingText.find(kMissing), std::string::npos) << "the message names the file\n"
                                                             << missingText;
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryProgram, ExitCodes,
    ::testing::Values(
        Program{"efu",
                EFU_BINARY,
                {"-d", "udp", "--no-kafka"},
                {"-d", "caen", "-f", kMissing + ".json", "--no-kafka"}},
        Program{"efu_dump",
                DUMP_BINARY,
                {"-t", "x"},
                {"-t", "x", "--image", "/tmp/efu-exit-code-test.png", "--geometry",
                 kMissing + ".json"}},
        Program{"efu_view",
                VIEW_BINARY,
                {"-t", "x"},
                {"-t", "x", "--http-port", "0", "--geometry", kMissing + ".json"}},
        Program{"efu_broker", BROKER_BINARY, {}, {"--bootstrap-file", kMissing + ".addr"}},
        Program{"udpgen", UDPGEN_BINARY, {}, {"--pcap", kMissing + ".pcap"}},
        Program{"readoutgen",
                READOUTGEN_BINARY,
                {"-d", "caen", "-f", EFU_SOURCE_DIR "/modules/caen/configs/LokiFull.json"},
                {"-d", "caen", "-f", kMissing + ".json"}},
        Program{"udpecho", UDPECHO_BINARY, {}, {}}),
    [](const ::testing::TestParamInfo<Program> &p) { return p.param.name; });

// efu's own start errors, each once with CLI11's old code in mind: a missing required option
// (was 106), a value out of range (105), an unknown option (109).
TEST(ExitCodesEfu, EveryStartErrorIsOne) {
  const std::vector<std::vector<std::string>> cases = {
      {},                                           // no -d
      {"-d", "udp", "--no-kafka", "--port", "0"},   // out of range
      {"-d", "udp", "--no-kafka", "--bogus"},       // unknown option
      {"-d", "udp", "--no-kafka", "--threads", "9"}, // not one of auto, 1, 2
      {"-d", "nosuchmodule", "--no-kafka"},         // unknown module
  };
  for (const auto &args : cases) {
    const auto [code, text] = run(EFU_BINARY, args);
    EXPECT_EQ(code, kCouldNotStart) << text;
  }
}

} // namespace
