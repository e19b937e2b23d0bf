// SPDX-License-Identifier: BSD-2-Clause
// readoutgen command line: defaults equal GeneratorOptions, the documented spellings and the
// deprecated ones set the same fields, bad values are refused naming the option.
#include "generators/readoutgen/ReadoutgenOptions.h"

#include "tests/support/CommandLine.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace efu::readoutgen {
namespace {

/// An instrument file that exists (-f must name a regular file).
const std::string kConfig = std::string(EFU_SOURCE_DIR) + "/modules/caen/configs/LokiFull.json";

ReadoutgenOptions parse(std::vector<std::string> args) {
  return test::parseOptions<ReadoutgenOptions>(addReadoutgenOptions, std::move(args));
}

std::string errorOf(const std::vector<std::string> &args) {
  return test::parseErrorOf<ReadoutgenOptions>(addReadoutgenOptions, args);
}

TEST(ReadoutgenOptions, DefaultsAreTheDocumentedOnes) {
  const ReadoutgenOptions parsed = parse({"-f", kConfig});
  const GeneratorOptions &o = parsed.generator;
  EXPECT_EQ(o.configPath, kConfig);
  EXPECT_EQ(o.detector, "caen");
  EXPECT_EQ(o.address, "127.0.0.1");
  EXPECT_EQ(o.port, 9000);
  EXPECT_EQ(o.count, 0U);
  EXPECT_EQ(o.durationS, 0.0);
  EXPECT_EQ(o.rateEventsPerS, 0.0);
  EXPECT_EQ(o.bitsPerS, 0.0);
  EXPECT_EQ(o.sizeBytes, 8972U);
  EXPECT_EQ(o.pulseHz, 14.0);
  EXPECT_EQ(o.maxPulseGapNs, 0) << "set from the instrument file, not the command line";
  EXPECT_EQ(o.eventsPerPulse, 0U);
  EXPECT_EQ(o.tof, "");
  EXPECT_EQ(o.pattern, "ring");
  EXPECT_EQ(o.maskPath, "");
  EXPECT_EQ(o.queues, 1U);
  EXPECT_EQ(o.headerVersion, 0U);
  EXPECT_EQ(o.seed, 1U);
  EXPECT_EQ(o.truthPath, "");
  EXPECT_EQ(o.pcapOutPath, "");
  EXPECT_TRUE(o.inject.empty());
  EXPECT_EQ(o.injectEvery, 1U);
  EXPECT_FALSE(o.quiet);
  EXPECT_FALSE(o.json);
  EXPECT_TRUE(o.moduleDirs.empty());
  EXPECT_EQ(o.calibrationPath, "");
  EXPECT_EQ(parsed.bitRate, "");
  EXPECT_FALSE(parsed.listModules);
}

TEST(ReadoutgenOptions, EveryOptionIsParsed) {
  const ReadoutgenOptions parsed = parse({"-d",
                                          "vmm3",
                                          "-f",
                                          kConfig,
                                          "--calibration",
                                          kConfig,
                                          "-i",
                                          "10.1.2.3",
                                          "-p",
                                          "4321",
                                          "--module-path",
                                          "/a",
                                          "--module-path",
                                          "/b",
                                          "--help-modules",
                                          "-n",
                                          "7",
                                          "--stopafter",
                                          "2.5",
                                          "--eps",
                                          "1000",
                                          "--bitrate",
                                          "2G",
                                          "-s",
                                          "1472",
                                          "--pulse-hz",
                                          "28",
                                          "--events-per-pulse",
                                          "50",
                                          "--tof",
                                          "uniform:1:2",
                                          "--pattern",
                                          "uniform",
                                          "--mask",
                                          kConfig,
                                          "--queues",
                                          "3",
                                          "--header-version",
                                          "1",
                                          "--seed",
                                          "9",
                                          "--truth",
                                          "/tmp/t.csv",
                                          "--pcap-out",
                                          "/tmp/o.pcap",
                                          "--inject-errors",
                                          "cookie:1,version:2",
                                          "--inject-errors",
                                          "short:3",
                                          "--inject-every",
                                          "5",
                                          "-q",
                                          "--json"});
  const GeneratorOptions &o = parsed.generator;
  EXPECT_EQ(o.detector, "vmm3");
  EXPECT_EQ(o.configPath, kConfig);
  EXPECT_EQ(o.calibrationPath, kConfig);
  EXPECT_EQ(o.address, "10.1.2.3");
  EXPECT_EQ(o.port, 4321);
  EXPECT_EQ(o.moduleDirs, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_TRUE(parsed.listModules);
  EXPECT_EQ(o.count, 7U);
  EXPECT_EQ(o.durationS, 2.5);
  EXPECT_EQ(o.rateEventsPerS, 1000.0);
  EXPECT_EQ(parsed.bitRate, "2G");
  EXPECT_EQ(o.bitsPerS, 0.0) << "parsed by the run, once logging is up";
  EXPECT_EQ(o.sizeBytes, 1472U);
  EXPECT_EQ(o.pulseHz, 28.0);
  EXPECT_EQ(o.eventsPerPulse, 50U);
  EXPECT_EQ(o.tof, "uniform:1:2");
  EXPECT_EQ(o.pattern, "uniform");
  EXPECT_EQ(o.maskPath, kConfig);
  EXPECT_EQ(o.queues, 3U);
  EXPECT_EQ(o.headerVersion, 1U);
  EXPECT_EQ(o.seed, 9U);
  EXPECT_EQ(o.truthPath, "/tmp/t.csv");
  EXPECT_EQ(o.pcapOutPath, "/tmp/o.pcap");
  EXPECT_EQ(o.inject, (std::vector<std::string>{"cookie:1", "version:2", "short:3"}));
  EXPECT_EQ(o.injectEvery, 5U);
  EXPECT_TRUE(o.quiet);
  EXPECT_TRUE(o.json);
}

TEST(ReadoutgenOptions, DeprecatedSpellingsSetTheSameFields) {
  const GeneratorOptions o = parse({"--detector", "nmx", "-c", kConfig, "--address", "10.0.0.1",
                                    "--duration", "3", "--rate", "500"})
                                 .generator;
  EXPECT_EQ(o.detector, "nmx");
  EXPECT_EQ(o.configPath, kConfig);
  EXPECT_EQ(o.address, "10.0.0.1");
  EXPECT_EQ(o.durationS, 3.0);
  EXPECT_EQ(o.rateEventsPerS, 500.0);
}

TEST(ReadoutgenOptions, BadValuesAreRefusedNamingTheOption) {
  EXPECT_NE(errorOf({}).find("--config"), std::string::npos) << errorOf({});
  const std::string missing = errorOf({"-f", "/nonexistent/instrument.json"});
  EXPECT_NE(missing.find("--config"), std::string::npos) << missing;
  const std::string negative = errorOf({"-f", kConfig, "--stopafter", "-1"});
  EXPECT_NE(negative.find("--stopafter"), std::string::npos) << negative;
  // Through the deprecated spelling the new one's check applies, and names it.
  const std::string viaAlias = errorOf({"-f", kConfig, "-r", "-5"});
  EXPECT_NE(viaAlias.find("--eps"), std::string::npos) << viaAlias;
  const std::string port = errorOf({"-f", kConfig, "-p", "70000"});
  EXPECT_NE(port.find("--port"), std::string::npos) << port;
  EXPECT_EQ(errorOf({"-f", kConfig, "--stopafter", "0"}), "(accepted)");
}

} // namespace
} // namespace efu::readoutgen
