// SPDX-License-Identifier: BSD-2-Clause
// efu-dump command line: defaults equal DumpOptions, options that need another are refused
// without it, bad values are refused naming the option.
#include "efu/tools/dump/DumpOptions.h"

#include "tests/support/CommandLine.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace efu::tools {
namespace {

DumpOptions parse(std::vector<std::string> args) {
  return test::parseOptions<DumpOptions>(addDumpOptions, std::move(args));
}

std::string errorOf(const std::vector<std::string> &args) {
  return test::parseErrorOf<DumpOptions>(addDumpOptions, args);
}

TEST(DumpOptions, DefaultsAreTheDocumentedOnes) {
  const DumpOptions o = parse({"-t", "loki_detector"});
  EXPECT_EQ(o.topics, std::vector<std::string>{"loki_detector"});
  EXPECT_EQ(o.brokers, "localhost:9092");
  EXPECT_EQ(o.from, "end");
  EXPECT_EQ(o.count, 0U);
  EXPECT_EQ(o.timeoutS, 0.0);
  EXPECT_EQ(o.format, "json");
  EXPECT_FALSE(o.summary);
  EXPECT_TRUE(o.settings.empty());
  EXPECT_EQ(o.logLevel, "info");
  EXPECT_EQ(o.geometryPath, "");
  EXPECT_EQ(o.module, "");
  EXPECT_TRUE(o.moduleDirs.empty());
  EXPECT_EQ(o.imagePath, "");
  EXPECT_EQ(o.imageScale, 1U);
  EXPECT_FALSE(o.logScale);
  EXPECT_EQ(o.imageEveryS, 0.0);
  EXPECT_EQ(o.tofPath, "");
  EXPECT_EQ(o.tofBins, 200U);
  EXPECT_FALSE(o.tofMaxNs.has_value());
  EXPECT_EQ(o.da00Prefix, "");
  EXPECT_EQ(o.pcapPath, "");
  EXPECT_EQ(o.pcapPort, 9000);
  EXPECT_EQ(o.report, "");
  EXPECT_EQ(o.cmdAddress, "127.0.0.1");
  EXPECT_EQ(o.cmdPort, 8888);
  EXPECT_EQ(o.reportPng, "");
  EXPECT_TRUE(parse({}).topics.empty()) << "the program, not the parser, asks for a topic";
}

TEST(DumpOptions, EveryOptionIsParsed) {
  const DumpOptions o = parse({"-b",
                               "h:1,h:2",
                               "-t",
                               "a",
                               "-t",
                               "b",
                               "--from",
                               "beginning",
                               "-n",
                               "5",
                               "--timeout",
                               "2.5",
                               "--format",
                               "text",
                               "--summary",
                               "-X",
                               "fetch.wait.max.ms=10",
                               "-l",
                               "debug",
                               "--geometry",
                               "g.json",
                               "--image",
                               "i.png",
                               "-d",
                               "caen",
                               "--module-path",
                               "/m",
                               "--image-scale",
                               "4",
                               "--log-scale",
                               "--pcap",
                               "o.pcap",
                               "--pcap-port",
                               "9001",
                               "--tof-histogram",
                               "t.png",
                               "--tof-bins",
                               "50",
                               "--tof-max-ns",
                               "1000",
                               "--da00-png",
                               "cbm_",
                               "--image-every",
                               "0.5"});
  EXPECT_EQ(o.brokers, "h:1,h:2");
  EXPECT_EQ(o.topics, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(o.from, "beginning");
  EXPECT_EQ(o.count, 5U);
  EXPECT_EQ(o.timeoutS, 2.5);
  EXPECT_EQ(o.format, "text");
  EXPECT_TRUE(o.summary);
  EXPECT_EQ(o.settings, std::vector<std::string>{"fetch.wait.max.ms=10"});
  EXPECT_EQ(o.logLevel, "debug");
  EXPECT_EQ(o.geometryPath, "g.json");
  EXPECT_EQ(o.imagePath, "i.png");
  EXPECT_EQ(o.module, "caen");
  EXPECT_EQ(o.moduleDirs, std::vector<std::string>{"/m"});
  EXPECT_EQ(o.imageScale, 4U);
  EXPECT_TRUE(o.logScale);
  EXPECT_EQ(o.pcapPath, "o.pcap");
  EXPECT_EQ(o.pcapPort, 9001);
  EXPECT_EQ(o.tofPath, "t.png");
  EXPECT_EQ(o.tofBins, 50U);
  EXPECT_EQ(o.tofMaxNs, 1000);
  EXPECT_EQ(o.da00Prefix, "cbm_");
  EXPECT_EQ(o.imageEveryS, 0.5);
  const DumpOptions r = parse(
      {"--report", "udp.histograms", "-m", "9999", "--cmdaddr", "10.0.0.1", "--report-png", "r_"});
  EXPECT_EQ(r.report, "udp.histograms");
  EXPECT_EQ(r.cmdPort, 9999);
  EXPECT_EQ(r.cmdAddress, "10.0.0.1");
  EXPECT_EQ(r.reportPng, "r_");
  EXPECT_EQ(parse({"-t", "a", "-c", "7"}).count, 7U) << "the deprecated spelling of -n";
}

TEST(DumpOptions, BadValuesAreRefusedNamingTheOption) {
  const std::string from = errorOf({"-t", "a", "--from", "middle"});
  EXPECT_NE(from.find("--from"), std::string::npos) << from;
  const std::string format = errorOf({"-t", "a", "--format", "xml"});
  EXPECT_NE(format.find("--format"), std::string::npos) << format;
  const std::string setting = errorOf({"-t", "a", "-X", "novalue"});
  EXPECT_NE(setting.find("'novalue' is not key=value"), std::string::npos) << setting;
  const std::string emptyKey = errorOf({"-t", "a", "-X", "=1"});
  EXPECT_NE(emptyKey.find("is not key=value"), std::string::npos) << emptyKey;
  const std::string timeout = errorOf({"-t", "a", "--timeout", "-1"});
  EXPECT_NE(timeout.find("--timeout"), std::string::npos) << timeout;
  const std::string bins = errorOf({"-t", "a", "--tof-histogram", "t.png", "--tof-bins", "0"});
  EXPECT_NE(bins.find("--tof-bins"), std::string::npos) << bins;
  const std::string port = errorOf({"-t", "a", "--pcap-port", "0"});
  EXPECT_NE(port.find("--pcap-port"), std::string::npos) << port;
  EXPECT_EQ(errorOf({"-t", "a", "--from", "beginning", "--timeout", "0"}), "(accepted)");
}

TEST(DumpOptions, OptionsThatNeedAnotherAreRefusedWithoutIt) {
  // --image and --geometry only together; picture and report options only with theirs.
  EXPECT_NE(errorOf({"-t", "a", "--image", "i.png"}).find("--geometry"), std::string::npos);
  EXPECT_NE(errorOf({"-t", "a", "--geometry", "g.json"}).find("--image"), std::string::npos);
  EXPECT_NE(errorOf({"-t", "a", "--log-scale"}).find("--image"), std::string::npos);
  EXPECT_NE(errorOf({"-t", "a", "--tof-bins", "10"}).find("--tof-histogram"), std::string::npos);
  EXPECT_NE(errorOf({"-m", "9999"}).find("--report"), std::string::npos);
  // A topic and a report exclude each other.
  EXPECT_NE(errorOf({"-t", "a", "--report", "udp.histograms"}), "(accepted)");
}

} // namespace
} // namespace efu::tools
