// SPDX-License-Identifier: BSD-2-Clause
// efu command line: defaults equal DaemonOptions, bad values are refused, --help shows defaults.
#include "efu/Options.h"

#include "tests/support/CommandLine.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <sstream>
#include <string>
#include <vector>

namespace efu {
namespace {

DaemonOptions parse(std::vector<std::string> args) {
  return test::parseOptions<DaemonOptions>(addDaemonOptions, std::move(args));
}

std::string errorOf(const std::vector<std::string> &args) {
  return test::parseErrorOf<DaemonOptions>(addDaemonOptions, args);
}

std::string helpText() {
  CLI::App app{"efu"};
  DaemonOptions options;
  addDaemonOptions(app, options);
  return app.help();
}

/// The help line that mentions `option`.
std::string helpLine(const std::string &option) {
  std::istringstream in(helpText());
  for (std::string line; std::getline(in, line);) {
    if (line.find(option) != std::string::npos) {
      return line;
    }
  }
  return "";
}

TEST(Options, DefaultsAreTheDocumentedOnes) {
  const DaemonOptions o = parse({"-d", "udp"});
  EXPECT_EQ(o.detector, "udp");
  EXPECT_TRUE(o.modulePaths.empty());
  EXPECT_FALSE(o.helpModule);
  EXPECT_EQ(o.configFile, "");
  EXPECT_EQ(o.dataAddress, "0.0.0.0");
  EXPECT_EQ(o.dataPort, 9000);
  EXPECT_EQ(o.rcvbufBytes, 12 * 1024 * 1024);
  EXPECT_EQ(o.rxCpus, std::vector<int>{-1});
  EXPECT_EQ(o.procCpus, std::vector<int>{-1});
  EXPECT_EQ(o.procThreads, 0U);
  EXPECT_EQ(o.threads, "auto");
  EXPECT_EQ(o.rxQueues, 1U);
  EXPECT_FALSE(o.gro);
  EXPECT_EQ(o.rxPriority, 0);
  EXPECT_EQ(o.busyPollUs, 0);
  EXPECT_EQ(o.ringSlots, 256U);
  EXPECT_EQ(o.rxBatch, 0U); // auto
  EXPECT_EQ(rxBatch(o), 64U);
  EXPECT_EQ(o.stopAfterS, 0.0);
  EXPECT_EQ(o.statsIntervalS, 1.0);
  EXPECT_EQ(o.cmdPort, 8888);
  EXPECT_EQ(o.cmdAddress, "127.0.0.1");
  EXPECT_EQ(o.cmdIdleTimeoutS, 60.0);
  EXPECT_EQ(o.cmdSecretFile, "");
  EXPECT_FALSE(o.cmdReadOnly);
  EXPECT_EQ(o.logLevel, "info");
  EXPECT_EQ(o.logFile, "");
  EXPECT_EQ(o.instrument, "");
  EXPECT_EQ(o.metricsPort, 0) << "no metrics server unless asked for";
  EXPECT_EQ(o.metricsAddress, "127.0.0.1");
  EXPECT_FALSE(o.check);
  EXPECT_FALSE(o.noKafka);
}

TEST(Options, ParsedDefaultsEqualTheStructDefaults) {
  const DaemonOptions parsed = parse({"--det", "udp"});
  const DaemonOptions plain;
  EXPECT_EQ(parsed.dataAddress, plain.dataAddress);
  EXPECT_EQ(parsed.dataPort, plain.dataPort);
  EXPECT_EQ(parsed.rcvbufBytes, plain.rcvbufBytes);
  EXPECT_EQ(parsed.ringSlots, plain.ringSlots);
  EXPECT_EQ(parsed.rxBatch, plain.rxBatch);
  EXPECT_EQ(parsed.statsIntervalS, plain.statsIntervalS);
  EXPECT_EQ(parsed.cmdPort, plain.cmdPort);
  EXPECT_EQ(parsed.cmdAddress, plain.cmdAddress);
  EXPECT_EQ(parsed.logLevel, plain.logLevel);
}

TEST(Options, EveryOptionIsParsed) {
  const DaemonOptions o = parse({"-d",
                                 "vmm3",
                                 "--module-path",
                                 "/a",
                                 "--module-path",
                                 "/b",
                                 "--help-module",
                                 "-i",
                                 "10.1.2.3",
                                 "-p",
                                 "4321",
                                 "--rcvbuf",
                                 "65536",
                                 "--rx-cpu",
                                 "2",
                                 "--proc-cpu",
                                 "3",
                                 "--threads",
                                 "2",
                                 "--rx-queues",
                                 "3",
                                 "--gro",
                                 "--rx-priority",
                                 "50",
                                 "--busy-poll",
                                 "100",
                                 "--ring-slots",
                                 "4096",
                                 "--rx-batch",
                                 "1024",
                                 "--stopafter",
                                 "2.5",
                                 "--stats-interval",
                                 "0.5",
                                 "-m",
                                 "9999",
                                 "--cmdaddr",
                                 "0.0.0.0",
                                 "--cmd-idle-timeout",
                                 "2.5",
                                 "--cmd-secret-file",
                                 "/etc/hostname",
                                 "--cmd-read-only",
                                 "-l",
                                 "debug",
                                 "--log-file",
                                 "/tmp/efu.log",
                                 "--instrument",
                                 "freia1"});
  EXPECT_EQ(o.detector, "vmm3");
  EXPECT_EQ(o.modulePaths, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_TRUE(o.helpModule);
  EXPECT_EQ(o.dataAddress, "10.1.2.3");
  EXPECT_EQ(o.dataPort, 4321);
  EXPECT_EQ(o.rcvbufBytes, 65536);
  EXPECT_EQ(o.rxCpus, std::vector<int>{2});
  EXPECT_EQ(o.procCpus, std::vector<int>{3});
  EXPECT_EQ(o.threads, "2");
  EXPECT_EQ(o.rxQueues, 3U);
  EXPECT_TRUE(o.gro);
  EXPECT_EQ(o.rxPriority, 50);
  EXPECT_EQ(o.busyPollUs, 100);
  EXPECT_EQ(o.ringSlots, 4096U);
  EXPECT_EQ(o.rxBatch, 1024U);
  EXPECT_EQ(o.stopAfterS, 2.5);
  EXPECT_EQ(o.statsIntervalS, 0.5);
  EXPECT_EQ(o.cmdPort, 9999);
  EXPECT_EQ(o.cmdAddress, "0.0.0.0");
  EXPECT_EQ(o.cmdIdleTimeoutS, 2.5);
  EXPECT_EQ(o.cmdSecretFile, "/etc/hostname");
  EXPECT_TRUE(o.cmdReadOnly);
  EXPECT_EQ(o.logLevel, "debug");
  EXPECT_EQ(o.logFile, "/tmp/efu.log");
  EXPECT_EQ(o.instrument, "freia1");
}

TEST(Options, LongAndShortNames) {
  EXPECT_EQ(parse({"--det", "udp", "--port", "1", "--dip", "1.2.3.4", "--cmdport", "65535",
                   "--log-level", "off"})
                .dataPort,
            1);
  const DaemonOptions o = parse({"-d", "udp", "-p", "65535", "-i", "255.255.255.255", "-m", "1"});
  EXPECT_EQ(o.dataPort, 65535);
  EXPECT_EQ(o.dataAddress, "255.255.255.255");
  EXPECT_EQ(o.cmdPort, 1);
  // The ESS EFU's spellings: -f for the config, --service-id as an alias of --instrument.
  const DaemonOptions ess = parse({"-d", "caen", "-f", "/etc/hostname", "--service-id", "loki"});
  EXPECT_EQ(ess.configFile, "/etc/hostname");
  EXPECT_EQ(ess.instrument, "loki");
  EXPECT_NE(errorOf({"-d", "udp", "--instrument", ""}), "(accepted)");
}

TEST(Options, GraphiteAsTheEssEfuSpellsIt) {
  const DaemonOptions o = parse({"-d", "caen", "-g", "carbon.ess.eu", "-o", "2013", "-r", "1"});
  EXPECT_EQ(o.graphiteHost, "carbon.ess.eu");
  EXPECT_EQ(o.graphitePort, 2013);
  EXPECT_EQ(o.region, "1");
  const DaemonOptions defaults = parse({"-d", "caen"});
  EXPECT_EQ(defaults.graphiteHost, "") << "off unless asked for";
  EXPECT_EQ(defaults.graphitePort, 2003);
  EXPECT_EQ(defaults.region, "0");
  EXPECT_NE(errorOf({"-d", "caen", "-r", "a.b"}).find("without dots"), std::string::npos);
  EXPECT_NE(errorOf({"-d", "caen", "-g", ""}), "(accepted)");
}

TEST(Options, MetricsPortAddressAndCheck) {
  const DaemonOptions o =
      parse({"-d", "udp", "--metrics-port", "9100", "--metrics-addr", "0.0.0.0", "--check"});
  EXPECT_EQ(o.metricsPort, 9100);
  EXPECT_EQ(o.metricsAddress, "0.0.0.0");
  EXPECT_TRUE(o.check);
  const std::string port = errorOf({"-d", "udp", "--metrics-port", "70000"});
  EXPECT_NE(port.find("--metrics-port"), std::string::npos) << port;
  EXPECT_NE(port.find("70000"), std::string::npos) << port;
  EXPECT_NE(errorOf({"-d", "udp", "--metrics-port", "-1"}), "(accepted)");
  const std::string address = errorOf({"-d", "udp", "--metrics-addr", "localhost"});
  EXPECT_NE(address.find("--metrics-addr"), std::string::npos) << address;
  EXPECT_NE(address.find("localhost"), std::string::npos) << address;
}

TEST(Options, DetectorIsRequired) {
  EXPECT_THROW(parse({}), CLI::RequiredError);
  EXPECT_THROW(parse({"-p", "9000"}), CLI::RequiredError);
  EXPECT_TRUE(errorOf({}).find("--det") != std::string::npos) << errorOf({});
}

TEST(Options, RingSlotsMustBeAPowerOfTwoInRange) {
  for (const char *bad : {"1000", "0", "1", "3", "2047", "-2048", "131072", "many"}) {
    EXPECT_NE(errorOf({"-d", "udp", "--ring-slots", bad}), "(accepted)") << bad;
  }
  EXPECT_TRUE(errorOf({"-d", "udp", "--ring-slots", "1000"}).find("power of two") !=
              std::string::npos)
      << errorOf({"-d", "udp", "--ring-slots", "1000"});
  for (const char *good : {"2", "4", "1024", "65536"}) {
    EXPECT_EQ(errorOf({"-d", "udp", "--ring-slots", good}), "(accepted)") << good;
  }
}

TEST(Options, RingMemoryIsBoundedAcrossSlotsGroAndQueues) {
  EXPECT_EQ(errorOf({"-d", "udp", "--ring-slots", "65536"}), "(accepted)");          // 576 MiB
  EXPECT_EQ(errorOf({"-d", "udp", "--ring-slots", "16384", "--gro"}), "(accepted)"); // 1 GiB
  const std::string gro = errorOf({"-d", "udp", "--ring-slots", "65536", "--gro"});
  EXPECT_NE(gro.find("--ring-slots"), std::string::npos) << gro;
  EXPECT_NE(gro.find("4096 MiB"), std::string::npos) << gro;
  EXPECT_NE(gro.find("limit is 1024 MiB"), std::string::npos) << gro;
  const std::string queues = errorOf({"-d", "udp", "--ring-slots", "65536", "--rx-queues", "2"});
  EXPECT_NE(queues.find("1152 MiB"), std::string::npos) << queues;
}

TEST(Options, PortsOutsideOneTo65535AreRefused) {
  for (const char *bad : {"0", "70000", "65536", "-1", "http"}) {
    EXPECT_NE(errorOf({"-d", "udp", "-p", bad}), "(accepted)") << "-p " << bad;
    EXPECT_NE(errorOf({"-d", "udp", "-m", bad}), "(accepted)") << "-m " << bad;
  }
  EXPECT_THROW(parse({"-d", "udp", "-p", "0"}), CLI::ValidationError);
}

TEST(Options, AddressesMustBeDottedQuads) {
  for (const char *bad :
       {"1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.4x", "localhost", "::1", "", "-1.2.3.4"}) {
    EXPECT_NE(errorOf({"-d", "udp", "--dip", bad}), "(accepted)") << "--dip '" << bad << "'";
    EXPECT_NE(errorOf({"-d", "udp", "--cmdaddr", bad}), "(accepted)")
        << "--cmdaddr '" << bad << "'";
  }
  EXPECT_TRUE(errorOf({"-d", "udp", "--dip", "1.2.3"}).find("1.2.3") != std::string::npos);
}

// Regression: the validator once parsed with sscanf("%u.%u.%u.%u"), which skips blanks and
// accepts signs and leading zeros (getaddrinfo() then read `--cmdaddr 010.0.0.1` as octal and
// bound 8.0.0.1). It must accept exactly the strict dotted quads inet_pton() accepts.
TEST(Options, AddressValidatorAgreesWithInetPton) {
  for (const char *text : {"1.2.3.4", "0.0.0.0", " 1.2.3.4", "+1.2.3.4", "1.2.3.+4", "01.2.3.4",
                           "1.2.3.04", "1. 2.3.4", "1.2.3.4 ", "0x1.2.3.4"}) {
    in_addr addr{};
    const bool valid = inet_pton(AF_INET, text, &addr) == 1;
    EXPECT_EQ(errorOf({"-d", "udp", "--dip", text}) == "(accepted)", valid)
        << "--dip '" << text << "': inet_pton says " << (valid ? "valid" : "invalid");
  }
}

TEST(Options, LogLevelMustBeKnown) {
  const std::string message = errorOf({"-d", "udp", "--log-level", "loud"});
  EXPECT_NE(message, "(accepted)");
  EXPECT_TRUE(message.find("loud") != std::string::npos) << message;
  for (const char *level : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    EXPECT_EQ(parse({"-d", "udp", "-l", level}).logLevel, level);
  }
}

TEST(Options, OtherRangesAreEnforced) {
  const std::vector<std::vector<std::string>> bad{
      {"--rcvbuf", "1000"},         {"--rcvbuf", "2147483647"},
      {"--rx-cpu", "-2"},           {"--proc-cpu", "4096"},
      {"--rx-batch", "-1"},         {"--rx-batch", "1025"},
      {"--stopafter", "-1"},        {"--stats-interval", "0"},
      {"--stats-interval", "3601"}, {"--config", "/nonexistent/efu.json"},
  };
  for (const auto &pair : bad) {
    EXPECT_NE(errorOf({"-d", "udp", pair[0], pair[1]}), "(accepted)") << pair[0] << " " << pair[1];
  }
}

TEST(Options, UnknownOptionIsRefused) {
  EXPECT_THROW(parse({"-d", "udp", "--no-such-option"}), CLI::ParseError);
}

TEST(Options, RxCpuTakesAListForTheQueues) {
  EXPECT_EQ(parse({"-d", "udp", "--rx-queues", "2", "--rx-cpu", "0,1"}).rxCpus,
            (std::vector<int>{0, 1}));
  EXPECT_EQ(parse({"-d", "udp", "--rx-cpu", "1", "--rx-cpu", "0"}).rxCpus,
            (std::vector<int>{1, 0}));
  EXPECT_THROW(parse({"-d", "udp", "--rx-cpu", "0,x"}), CLI::ParseError);
  EXPECT_THROW(parse({"-d", "udp", "--rx-cpu", "0,-2"}), CLI::ParseError);
  EXPECT_THROW(parse({"-d", "udp", "--threads", "3"}), CLI::ParseError);
  EXPECT_THROW(parse({"-d", "udp", "--rx-queues", "17"}), CLI::ParseError);
  EXPECT_THROW(parse({"-d", "udp", "--rx-priority", "100"}), CLI::ParseError);
}

TEST(Options, AutoRunsToCompletionOnlyWhenBothThreadsWouldShareOneCpu) {
  const int twoCpus = 2;
  EXPECT_TRUE(runToCompletion(parse({"-d", "udp", "--rx-cpu", "0", "--proc-cpu", "0"}), twoCpus));
  EXPECT_FALSE(runToCompletion(parse({"-d", "udp", "--rx-cpu", "0", "--proc-cpu", "1"}), twoCpus));
  EXPECT_FALSE(runToCompletion(parse({"-d", "udp"}), twoCpus)); // unpinned: the kernel spreads
  EXPECT_TRUE(runToCompletion(parse({"-d", "udp"}), 1));
  // Several queues have several rx threads: one processing thread behind their rings.
  EXPECT_FALSE(runToCompletion(
      parse({"-d", "udp", "--rx-queues", "2", "--rx-cpu", "0", "--proc-cpu", "0"}), twoCpus));
  // Asked for explicitly.
  EXPECT_TRUE(runToCompletion(parse({"-d", "udp", "--threads", "1"}), twoCpus));
  EXPECT_FALSE(runToCompletion(
      parse({"-d", "udp", "--threads", "2", "--rx-cpu", "0", "--proc-cpu", "0"}), twoCpus));
}

TEST(Options, RxBatchDefaultsToFewerGroMessages) {
  EXPECT_EQ(rxBatch(parse({"-d", "udp"})), kRxBatch);
  EXPECT_EQ(rxBatch(parse({"-d", "udp", "--gro"})), kGroRxBatch);
  EXPECT_EQ(rxBatch(parse({"-d", "udp", "--gro", "--rx-batch", "32"})), 32U);
  EXPECT_EQ(rxBatch(parse({"-d", "udp", "--rx-batch", "16"})), 16U);
}

TEST(Options, HelpShowsTheRealDefaults) {
  const std::string help = helpText();
  for (const char *value : {"9000", "8888", "12582912", "256", "0.0.0.0", "127.0.0.1", "info"}) {
    EXPECT_NE(help.find(value), std::string::npos) << value << "\n" << help;
  }
  EXPECT_NE(helpLine("--port").find("9000"), std::string::npos) << helpLine("--port");
  EXPECT_NE(helpLine("--cmdport").find("8888"), std::string::npos) << helpLine("--cmdport");
  EXPECT_NE(helpLine("--rcvbuf").find(std::to_string(DaemonOptions{}.rcvbufBytes)),
            std::string::npos)
      << helpLine("--rcvbuf");
  EXPECT_NE(helpLine("--ring-slots").find(std::to_string(DaemonOptions{}.ringSlots)),
            std::string::npos)
      << helpLine("--ring-slots");
  EXPECT_NE(helpLine("--rx-batch").find("=0"), std::string::npos) << helpLine("--rx-batch");
  EXPECT_NE(help.find("(0 = 64, or 8 with --gro"), std::string::npos) << help;
  EXPECT_NE(helpLine("--dip").find("0.0.0.0"), std::string::npos) << helpLine("--dip");
  EXPECT_NE(helpLine("--cmdaddr").find("127.0.0.1"), std::string::npos) << helpLine("--cmdaddr");
}

} // namespace
} // namespace efu
