// SPDX-License-Identifier: BSD-2-Clause
// efu-view command line: defaults equal ViewOptions (and docs/tools.md), every option is parsed,
// bad values are refused naming the option and the value.
#include "efu/tools/view/ViewOptions.h"

#include "tests/support/CommandLine.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace efu::tools::view {
namespace {

ViewOptions parse(std::vector<std::string> args) {
  return test::parseOptions<ViewOptions>(addViewOptions, std::move(args));
}

std::string errorOf(const std::vector<std::string> &args) {
  return test::parseErrorOf<ViewOptions>(addViewOptions, args);
}

/// The error names the option and the value it refused.
void expectRefused(const std::vector<std::string> &args, const std::string &option,
                   const std::string &value) {
  const std::string error = errorOf(args);
  EXPECT_NE(error, "(accepted)") << option << " " << value;
  EXPECT_NE(error.find(option), std::string::npos) << error;
  EXPECT_NE(error.find(value), std::string::npos) << error;
}

TEST(ViewOptions, DefaultsAreTheDocumentedOnes) {
  const ViewOptions o = parse({"-t", "loki_detector"});
  EXPECT_EQ(o.topics, std::vector<std::string>{"loki_detector"});
  EXPECT_EQ(o.brokers, "localhost:9092");
  EXPECT_EQ(o.geometryPath, "");
  EXPECT_EQ(o.module, "");
  EXPECT_TRUE(o.moduleDirs.empty());
  EXPECT_EQ(o.from, "end");
  EXPECT_EQ(o.httpAddress, "127.0.0.1");
  EXPECT_EQ(o.httpPort, 8600);
  EXPECT_EQ(o.tofBins, 1000U);
  EXPECT_EQ(o.tofMaxNs, 100'000'000);
  EXPECT_EQ(o.windowS, 0.0);
  EXPECT_TRUE(o.settings.empty());
  EXPECT_EQ(o.logLevel, "info");
  EXPECT_EQ(o.stopAfterS, 0.0);
}

TEST(ViewOptions, EveryOptionIsParsed) {
  const ViewOptions o = parse({"-b",
                               "h:1,h:2",
                               "-t",
                               "a",
                               "--topic",
                               "b",
                               "--geometry",
                               "g.json",
                               "-d",
                               "caen",
                               "--module-path",
                               "/m",
                               "--module-path",
                               "/n",
                               "--from",
                               "beginning",
                               "--http-address",
                               "::1",
                               "--http-port",
                               "0",
                               "--tof-bins",
                               "100000",
                               "--tof-max-ns",
                               "10000000000000",
                               "--window",
                               "3600",
                               "-X",
                               "fetch.wait.max.ms=10",
                               "-X",
                               "debug=",
                               "-l",
                               "debug",
                               "--stopafter",
                               "2.5"});
  EXPECT_EQ(o.brokers, "h:1,h:2");
  EXPECT_EQ(o.topics, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(o.geometryPath, "g.json");
  EXPECT_EQ(o.module, "caen");
  EXPECT_EQ(o.moduleDirs, (std::vector<std::string>{"/m", "/n"}));
  EXPECT_EQ(o.from, "beginning");
  EXPECT_EQ(o.httpAddress, "::1");
  EXPECT_EQ(o.httpPort, 0);
  EXPECT_EQ(o.tofBins, kMaxTofBins);
  EXPECT_EQ(o.tofMaxNs, kMaxTofRangeNs);
  EXPECT_EQ(o.windowS, 3600.0);
  EXPECT_EQ(o.settings, (std::vector<std::string>{"fetch.wait.max.ms=10", "debug="}));
  EXPECT_EQ(o.logLevel, "debug");
  EXPECT_EQ(o.stopAfterS, 2.5);
  EXPECT_EQ(parse({"-t", "a", "--window", "1"}).windowS, 1.0);
  EXPECT_EQ(parse({"-t", "a", "--window", "0"}).windowS, 0.0);
  EXPECT_EQ(parse({"-t", "a", "--tof-bins", "1", "--tof-max-ns", "1"}).tofMaxNs, 1);
  EXPECT_EQ(parse({"-t", "a", "--http-address", "0.0.0.0"}).httpAddress, "0.0.0.0");
}

TEST(ViewOptions, ATopicIsRequired) {
  EXPECT_NE(errorOf({}).find("--topic is required"), std::string::npos) << errorOf({});
}

TEST(ViewOptions, ValuesOutOfRangeAreRefusedNamingOptionAndValue) {
  expectRefused({"-t", "a", "--tof-bins", "0"}, "--tof-bins", "0");
  expectRefused({"-t", "a", "--tof-bins", "100001"}, "--tof-bins", "100001");
  expectRefused({"-t", "a", "--tof-max-ns", "0"}, "--tof-max-ns", "0");
  expectRefused({"-t", "a", "--tof-max-ns", "10000000000001"}, "--tof-max-ns", "10000000000001");
  expectRefused({"-t", "a", "--window", "0.5"}, "--window", "0.5");
  expectRefused({"-t", "a", "--window", "3601"}, "--window", "3601");
  expectRefused({"-t", "a", "--window", "-1"}, "--window", "-1");
  expectRefused({"-t", "a", "--window", "nan"}, "--window", "nan");
  expectRefused({"-t", "a", "--http-port", "65536"}, "--http-port", "65536");
  expectRefused({"-t", "a", "--http-port", "-1"}, "--http-port", "-1");
  expectRefused({"-t", "a", "--http-address", "localhost"}, "--http-address", "localhost");
  expectRefused({"-t", "a", "--http-address", "127.0.0.256"}, "--http-address", "127.0.0.256");
  expectRefused({"-t", "a", "--from", "middle"}, "--from", "middle");
  expectRefused({"-t", "a", "-X", "novalue"}, "-X", "novalue");
  expectRefused({"-t", "a", "-X", "=1"}, "-X", "=1");
  expectRefused({"-t", "a", "--stopafter", "-1"}, "--stopafter", "-1");
  expectRefused({"-t", "a", "--stopafter", "inf"}, "--stopafter", "inf");
}

TEST(ViewOptions, DetNeedsGeometry) {
  const std::string error = errorOf({"-t", "a", "-d", "caen"});
  EXPECT_NE(error.find("--geometry"), std::string::npos) << error;
}

} // namespace
} // namespace efu::tools::view
