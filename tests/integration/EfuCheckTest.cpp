// SPDX-License-Identifier: BSD-2-Clause
// efu --check: the pre-flight checks on this machine, passing and failing for the right reason.
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace efu::testkit;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

int64_t rmemMax() {
  std::ifstream in("/proc/sys/net/core/rmem_max");
  int64_t value = -1;
  in >> value;
  return value;
}

/// The first CPU this process may run on.
int firstAllowedCpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof(set), &set);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) {
      return cpu;
    }
  }
  return 0;
}

struct CheckRun {
  int exitCode = -1;
  std::string output;
  /// The line of check `what` with its level ("FAIL net.core.rmem_max: ..."), "" if none.
  [[nodiscard]] std::string line(const std::string &what) const {
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
      if (line.size() > 5 && line.compare(5, what.size() + 1, what + ":") == 0) {
        return line;
      }
    }
    return {};
  }
};

/// efu --check -d <module> on free ports, plus `extra`; run through `wrapper` if given.
CheckRun check(const std::string &module, const std::vector<std::string> &extra,
               const std::vector<std::string> &wrapper = {}) {
  std::vector<std::string> argv = wrapper;
  argv.insert(argv.end(), {EFU_BINARY, "--check", "-d", module, "-i", "127.0.0.1", "-p",
                           std::to_string(freeUdpPort()), "-m", std::to_string(freeTcpPort())});
  argv.insert(argv.end(), extra.begin(), extra.end());
  Process efu(argv);
  CheckRun run;
  run.exitCode = efu.wait(60s).value_or(-1);
  run.output = efu.output();
  return run;
}

TEST(EfuCheck, RcvbufAboveRmemMaxFailsWithTheSysctlToRun) {
  const int64_t limit = rmemMax();
  if (limit < 0 || limit + 1 > (int64_t{1} << 30)) {
    GTEST_SKIP() << "net.core.rmem_max unreadable or beyond --rcvbuf's range: " << limit;
  }
  const std::string wanted = std::to_string(limit + 1);
  const CheckRun run = check("udp", {"--rcvbuf", wanted, "--no-kafka"});
  EXPECT_EQ(run.exitCode, 1) << run.output;
  const std::string line = run.line("net.core.rmem_max");
  EXPECT_EQ(line.rfind("FAIL", 0), 0U) << run.output;
  EXPECT_NE(line.find("sudo sysctl -w net.core.rmem_max=" + wanted), std::string::npos) << line;
  EXPECT_NE(line.find("/etc/sysctl.d/"), std::string::npos) << line;
  EXPECT_EQ(run.line("module").rfind("ok", 0), 0U) << run.output << "only rmem_max fails";
  EXPECT_NE(run.output.find("1 FAIL"), std::string::npos) << run.output;
}

TEST(EfuCheck, AGoodSetupPassesWithABrokerAndWarnsWithoutOne) {
  const int64_t limit = rmemMax();
  if (limit < 65536) {
    GTEST_SKIP() << "net.core.rmem_max below the smallest --rcvbuf: " << limit;
  }
  const int cpu = firstAllowedCpu();
  const std::vector<std::string> common{
      "--rcvbuf",   std::to_string(limit), "--rx-cpu",       std::to_string(cpu),
      "--proc-cpu", std::to_string(cpu),   "--metrics-port", std::to_string(freeTcpPort())};
  DevBroker broker(BROKER_BINARY);
  std::vector<std::string> args = common;
  args.insert(args.end(), {"-b", broker.bootstrap()});
  const CheckRun good = check("udp", args);
  EXPECT_EQ(good.exitCode, 0) << good.output;
  for (const char *what :
       {"module", "udp port", "net.core.rmem_max", "control port", "metrics port", "kafka"}) {
    EXPECT_EQ(good.line(what).rfind("ok", 0), 0U) << what << "\n" << good.output;
  }
  EXPECT_EQ(good.line("cpu " + std::to_string(cpu)).rfind("ok", 0), 0U) << good.output;
  EXPECT_NE(good.output.find("0 FAIL"), std::string::npos) << good.output;

  // Nothing listens on this port: a warning, and still exit 0 (efu would start and retry).
  args = common;
  args.insert(args.end(), {"-b", "127.0.0.1:" + std::to_string(freeTcpPort())});
  const CheckRun noBroker = check("udp", args);
  EXPECT_EQ(noBroker.exitCode, 0) << noBroker.output;
  EXPECT_EQ(noBroker.line("kafka").rfind("warn", 0), 0U) << noBroker.output;
}

TEST(EfuCheck, ABadConfigFailsNamingTheKey) {
  std::ifstream in(std::string(CONFIG_DIR) + "/LokiFull.json");
  const std::string loki((std::istreambuf_iterator<char>(in)), {});
  const struct {
    std::string from, to, key;
  } cases[] = {
      // the key table (type, unknown key), and the module's own check of the ESS sections (run
      // by constructing it)
      {"\"Resolution\" : 512", "\"Resolution\" : \"many\"", "Resolution"},
      {"\"GroupsZ\" : 4", "\"GroupsZ\" : 4, \"GroupZ\": 4", "GroupZ"},
      {"{ \"Ring\" : 2, \"Bank\" : 1", "{ \"Ring\" : 2, \"Bank\" : 11", "Config[2].Bank = 11"},
  };
  const fs::path file =
      fs::temp_directory_path() / ("efu-check-" + std::to_string(getpid()) + ".json");
  for (const auto &c : cases) {
    std::string text = loki;
    ASSERT_NE(text.find(c.from), std::string::npos) << c.from;
    text.replace(text.find(c.from), c.from.size(), c.to);
    std::ofstream(file) << text;
    const CheckRun run = check("caen", {"-f", file.string(), "--no-kafka", "--rcvbuf", "65536"});
    EXPECT_EQ(run.exitCode, 1) << run.output;
    const std::string line = run.line("module");
    EXPECT_EQ(line.rfind("FAIL", 0), 0U) << run.output;
    EXPECT_NE(line.find(c.key), std::string::npos) << line;
  }
  fs::remove(file);
}

TEST(EfuCheck, TakenPortsMissingCpusAndBadTopicsFail) {
  // A port something listens on.
  const int taken = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(taken, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(taken, 1), 0);
  socklen_t len = sizeof(addr);
  ::getsockname(taken, reinterpret_cast<sockaddr *>(&addr), &len);
  const std::string port = std::to_string(ntohs(addr.sin_port));

  const struct {
    std::vector<std::string> args;
    std::string what, text;
  } cases[] = {
      {{"--metrics-port", port}, "metrics port", "Address already in use"},
      {{"--rx-cpu", "4095"}, "cpu 4095", "cannot pin to CPU 4095"},
      {{"--instrument", "lo ki", "-b", "127.0.0.1:1"}, "kafka", "not a Kafka topic name"},
  };
  for (const auto &c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"--rcvbuf", "65536"});
    if (c.what != "kafka") {
      args.push_back("--no-kafka");
    }
    const CheckRun run = check("udp", args);
    EXPECT_EQ(run.exitCode, 1) << run.output;
    const std::string line = run.line(c.what);
    EXPECT_EQ(line.rfind("FAIL", 0), 0U) << c.what << "\n" << run.output;
    EXPECT_NE(line.find(c.text), std::string::npos) << line;
  }
  ::close(taken);
}

TEST(EfuCheck, RxPriorityWithoutTheRightToItFails) {
  if (!fs::exists("/usr/bin/prlimit") || !fs::exists("/usr/bin/setpriv")) {
    GTEST_SKIP() << "prlimit or setpriv (util-linux) not installed";
  }
  // No rtprio limit, and (as root) no CAP_SYS_NICE in the bounding set.
  std::vector<std::string> wrapper{"/usr/bin/prlimit", "--rtprio=0"};
  if (::geteuid() == 0) {
    wrapper.insert(wrapper.end(), {"/usr/bin/setpriv", "--bounding-set=-sys_nice", "--"});
  }
  const CheckRun denied =
      check("udp", {"--rx-priority", "10", "--no-kafka", "--rcvbuf", "65536"}, wrapper);
  EXPECT_EQ(denied.exitCode, 1) << denied.output;
  const std::string line = denied.line("rx priority");
  EXPECT_EQ(line.rfind("FAIL", 0), 0U) << denied.output;
  EXPECT_NE(line.find("CAP_SYS_NICE"), std::string::npos) << line;
}

/// A file in the temporary directory for one test, named for this process (another run of the
/// tests on the machine writes its own) and removed when the test ends.
struct TempFile {
  TempFile(const std::string &name, const std::string &text)
      : path((fs::temp_directory_path() / ("efu-check-" + std::to_string(getpid()) + "-" + name))
                 .string()) {
    std::ofstream(path) << text;
  }
  TempFile(const TempFile &) = delete;
  TempFile &operator=(const TempFile &) = delete;
  ~TempFile() { fs::remove(path); }
  const std::string path;
};

// efu --calibration: a calibration the module refuses stops efu at start (exit 1), naming the
// file and the key path; a module that takes no calibration refuses any.
TEST(EfuCalibration, ARefusedCalibrationStopsEfuNamingFileAndKey) {
  const TempFile badFile(
      "bad-calibration.json",
      R"({"Calibration": {"instrument": "loki", "groups": 3, "groupsize": 1, "Parameters": []}})");
  const std::string &bad = badFile.path;
  Process efu({EFU_BINARY, "-d", "caen", "-f", std::string(CONFIG_DIR) + "/LokiFull.json",
               "--calibration", bad, "--no-kafka", "-i", "127.0.0.1", "-p",
               std::to_string(freeUdpPort()), "-m", std::to_string(freeTcpPort())});
  EXPECT_EQ(efu.wait(60s).value_or(-1), 1) << efu.output();
  EXPECT_NE(efu.output().find(bad + ": calibration Calibration.Parameters = []: expected an "
                                    "array of 3"),
            std::string::npos)
      << efu.output();

  Process udp({EFU_BINARY, "-d", "udp", "--calibration", bad, "--no-kafka", "-i", "127.0.0.1", "-p",
               std::to_string(freeUdpPort()), "-m", std::to_string(freeTcpPort())});
  EXPECT_EQ(udp.wait(60s).value_or(-1), 1) << udp.output();
  EXPECT_NE(udp.output().find(bad + ": module 'udp' takes no calibration"), std::string::npos)
      << udp.output();

  const TempFile notJsonFile("not-json-calibration.json", "{\"Calibration\": [");
  const std::string &notJson = notJsonFile.path;
  Process broken({EFU_BINARY, "-d", "caen", "-f", std::string(CONFIG_DIR) + "/LokiFull.json",
                  "--calibration", notJson, "--no-kafka", "-i", "127.0.0.1", "-p",
                  std::to_string(freeUdpPort()), "-m", std::to_string(freeTcpPort())});
  EXPECT_EQ(broken.wait(60s).value_or(-1), 1) << broken.output();
  EXPECT_NE(
      broken.output().find(notJson + ": line 1, column 17, at 'Calibration[0]': not valid JSON"),
      std::string::npos)
      << broken.output();

  const CheckRun run = check("caen", {"-f", std::string(CONFIG_DIR) + "/LokiFull.json",
                                      "--calibration", bad, "--no-kafka"});
  EXPECT_EQ(run.exitCode, 1) << run.output;
  EXPECT_NE(run.line("module").find("Calibration.Parameters = []"), std::string::npos)
      << run.output;
}

// Issue 37 item 3: a cbm histogram whose da00 message the producer cannot take stops efu at
// start, and fails efu --check, with Kafka or without (the limit is message.max.bytes as the
// options give it), naming the key, the message's size and the limit; -X message.max.bytes
// raises the limit. (200 000 bins were "ok", and every message then failed in the producer.)
TEST(EfuCheck, ACbmHistogramLargerThanAKafkaMessageFailsNamingTheKey) {
  const TempFile configFile("cbm-200k.json",
                            R"({"Detector": "CBM", "MaxFENId": 0, "Topology": [{"FEN": 0,
        "Channel": 0, "Type": "IBM", "Schema": "da00", "Source": "cbm1", "MaxTofBin": 71428572,
        "BinCount": 200000}]})");
  const std::string &config = configFile.path;
  const std::string refusal = config + ": Topology[0].BinCount = 200000: its da00 message would "
                                       "take up to 1600508 bytes, more than the 1016860 a "
                                       "message may have";
  const CheckRun run = check("cbm", {"-f", config, "--no-kafka", "--rcvbuf", "65536"});
  EXPECT_EQ(run.exitCode, 1) << run.output;
  EXPECT_EQ(run.line("module").rfind("FAIL", 0), 0U) << run.output;
  EXPECT_NE(run.line("module").find(refusal), std::string::npos) << run.output;

  const CheckRun raised = check(
      "cbm", {"-f", config, "--no-kafka", "--rcvbuf", "65536", "-X", "message.max.bytes=2000000"});
  EXPECT_EQ(raised.line("module").rfind("ok", 0), 0U) << raised.output;

  // The daemon with a producer (no broker needed to refuse at start).
  Process efu({EFU_BINARY, "-d", "cbm", "-f", config, "-b", "127.0.0.1:1", "-i", "127.0.0.1", "-p",
               std::to_string(freeUdpPort()), "-m", std::to_string(freeTcpPort())});
  EXPECT_EQ(efu.wait(60s).value_or(-1), 1) << efu.output();
  EXPECT_NE(efu.output().find(refusal), std::string::npos) << efu.output();
}

} // namespace
