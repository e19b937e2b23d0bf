// SPDX-License-Identifier: BSD-2-Clause
// Integration: the real efu-broker and efu-dump binaries, librdkafka as producer, kcat if present.
#include "tests/efu/tools/Messages.h"
#include "tests/efu/tools/TestProducer.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <nlohmann/json.hpp>
#include <png.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char **environ;

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr auto kStartDeadline = std::chrono::seconds(15);
constexpr auto kExitDeadline = std::chrono::seconds(30);
constexpr auto kPollInterval = std::chrono::milliseconds(20);

/// Polls `done` until it is true or `deadline` passes; returns its last value.
bool pollUntil(const std::function<bool()> &done, Clock::duration deadline) {
  const auto end = Clock::now() + deadline;
  while (!done()) {
    if (Clock::now() >= end) {
      return done();
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  return true;
}

std::string readFile(const fs::path &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) {
      out.push_back(line);
    }
  }
  return out;
}

std::optional<fs::path> findOnPath(const std::string &name) {
  const char *path = std::getenv("PATH");
  std::istringstream dirs(path == nullptr ? "" : path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir) / name;
    if (!dir.empty() && access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return std::nullopt;
}

/// A child process with stdout and stderr sent to files; killed in the destructor if running.
class Child {
public:
  Child(const std::vector<std::string> &argv, const fs::path &out, const fs::path &err)
      : out_(out), err_(err) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char *> args;
    for (const auto &arg : argv) {
      args.push_back(const_cast<char *>(arg.c_str()));
    }
    args.push_back(nullptr);
    const int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
      pid_ = -1;
      ADD_FAILURE() << "cannot start " << argv[0] << ": " << std::strerror(rc);
    }
  }
  Child(const Child &) = delete;
  Child &operator=(const Child &) = delete;
  ~Child() {
    if (running()) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }

  bool running() {
    if (pid_ <= 0 || status_) {
      return false;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      status_ = status;
      return false;
    }
    return true;
  }

  void signal(int sig) const {
    if (pid_ > 0 && !status_) {
      kill(pid_, sig);
    }
  }

  /// Exit code once it ended within the deadline (-1 if killed by a signal), else nullopt.
  std::optional<int> waitExit(Clock::duration deadline) {
    if (!pollUntil([this] { return !running(); }, deadline) || !status_) {
      return std::nullopt;
    }
    return WIFEXITED(*status_) ? WEXITSTATUS(*status_) : -1;
  }

  std::string out() const { return readFile(out_); }
  std::string err() const { return readFile(err_); }

private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  fs::path out_;
  fs::path err_;
};

using efu::test::TestProducer;

/// Starts efu-broker with three topics up front (a fourth is left to auto-creation).
class ToolsIntegration : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/efu-tools-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    bootstrapFile_ = dir_ / "bootstrap";
    broker_ = std::make_unique<Child>(
        std::vector<std::string>{EFU_BROKER_BIN, "--topic", "t_detector", "--topic", "t_stats",
                                 "--topic", "t_status:2", "--bootstrap-file",
                                 bootstrapFile_.string()},
        dir_ / "broker.out", dir_ / "broker.err");
    ASSERT_TRUE(pollUntil([this] { return fs::exists(bootstrapFile_) || !broker_->running(); },
                          kStartDeadline))
        << "no bootstrap file; broker stderr:\n"
        << broker_->err();
    ASSERT_TRUE(fs::exists(bootstrapFile_)) << "broker ended early:\n" << broker_->err();
    const auto fileLines = lines(readFile(bootstrapFile_));
    ASSERT_EQ(fileLines.size(), 1u);
    bootstrap_ = fileLines[0];
  }

  void TearDown() override {
    broker_.reset();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  /// Messages produced by producePlan(), by topic.
  std::map<std::string, std::vector<efu::test::Bytes>> plan_ = {
      {"t_detector",
       {efu::test::makeEv44("loki", 1, {1000, 2000, 3000}, {0, 2, 3}, {11, 12, 21, 31, 32},
                            {1, 2, 3, 4, 5}),
        efu::test::makeEv44("loki", 2, {}, {}, {}, {})}},
      {"t_stats",
       {efu::test::makeF144Long("efu.udp.receive.packets", 1700000000000000000, 1234),
        efu::test::makeF144ArrayInt("efu.udp.hist", 1700000000000000001, {1, 2, 3}),
        efu::test::Bytes{'n', 'o', 't', ' ', 'a', ' ', 'f', 'l', 'a', 't', 'b', 'u', 'f'}}},
      {"t_status", {efu::test::makeX5f2(R"({"module":"udp","uptime_s":3})")}},
      {"t_auto", {efu::test::makeF144Double("auto.created", 5, 0.5)}},
  };

  size_t plannedCount() const {
    size_t count = 0;
    for (const auto &[topic, messages] : plan_) {
      count += messages.size();
    }
    return count;
  }

  void producePlan() {
    TestProducer producer(bootstrap_);
    for (const auto &[topic, messages] : plan_) {
      for (const auto &message : messages) {
        producer.produce(topic, message);
      }
    }
    ASSERT_TRUE(producer.flushAll());
  }

  fs::path dir_;
  fs::path bootstrapFile_;
  std::string bootstrap_;
  std::unique_ptr<Child> broker_;
};

TEST_F(ToolsIntegration, BrokerAnnouncesItselfAndStopsCleanlyOnSigterm) {
  EXPECT_EQ(bootstrap_.rfind("127.0.0.1:", 0), 0u) << bootstrap_;
  // stdout carries the same single line; it is flushed once the file exists.
  ASSERT_TRUE(pollUntil([this] { return lines(broker_->out()).size() == 1; }, kStartDeadline));
  EXPECT_EQ(lines(broker_->out())[0], bootstrap_);
  broker_->signal(SIGTERM);
  EXPECT_EQ(broker_->waitExit(kExitDeadline), std::optional<int>(0)) << broker_->err();
  EXPECT_FALSE(fs::exists(bootstrapFile_));
}

// --brokers (now --broker-count) works for one more release, with a warning.
TEST_F(ToolsIntegration, BrokerOldCountSpellingStillWorksAndWarns) {
  const fs::path file = dir_ / "bootstrap2";
  Child broker({EFU_BROKER_BIN, "--brokers", "2", "--bootstrap-file", file.string()},
               dir_ / "broker2.out", dir_ / "broker2.err");
  ASSERT_TRUE(pollUntil([&] { return fs::exists(file) || !broker.running(); }, kStartDeadline));
  const auto announced = lines(readFile(file));
  ASSERT_EQ(announced.size(), 1u) << broker.err();
  EXPECT_EQ(std::count(announced[0].begin(), announced[0].end(), ','), 1) << announced[0];
  EXPECT_NE(broker.err().find("warning: --brokers is deprecated and goes in the next release; use "
                              "--broker-count"),
            std::string::npos)
      << broker.err();
  broker.signal(SIGTERM);
  EXPECT_EQ(broker.waitExit(kExitDeadline), std::optional<int>(0)) << broker.err();
}

TEST_F(ToolsIntegration, DumpDecodesProducedMessages) {
  producePlan();
  Child dump({EFU_DUMP_BIN, "-b", bootstrap_, "-t", "t_detector", "-t", "t_stats", "-t", "t_status",
              "-t", "t_auto", "-n", std::to_string(plannedCount()), "--from", "beginning",
              "--timeout", "10", "--summary"},
             dir_ / "dump.out", dir_ / "dump.err");
  ASSERT_EQ(dump.waitExit(kExitDeadline), std::optional<int>(0)) << dump.err();

  std::map<std::string, std::vector<nlohmann::json>> byKind;
  for (const auto &line : lines(dump.out())) {
    const auto msg = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(msg.is_discarded()) << line;
    byKind[msg.at("kind").get<std::string>()].push_back(msg);
  }
  ASSERT_EQ(byKind["ev44"].size(), 2u) << dump.out();
  ASSERT_EQ(byKind["f144"].size(), 3u) << dump.out();
  ASSERT_EQ(byKind["x5f2"].size(), 1u) << dump.out();

  std::map<int64_t, nlohmann::json> ev44ById;
  for (const auto &msg : byKind["ev44"]) {
    EXPECT_EQ(msg["topic"], "t_detector");
    ev44ById[msg["message_id"].get<int64_t>()] = msg;
  }
  EXPECT_EQ(ev44ById[1]["event_count"], 5);
  EXPECT_EQ(ev44ById[1]["reference_time"], nlohmann::json({1000, 2000, 3000}));
  EXPECT_EQ(ev44ById[1]["pixel_id"], nlohmann::json({1, 2, 3, 4, 5}));
  EXPECT_EQ(ev44ById[2]["event_count"], 0);

  std::map<std::string, nlohmann::json> f144BySource;
  for (const auto &msg : byKind["f144"]) {
    f144BySource[msg["source_name"].get<std::string>()] = msg;
  }
  EXPECT_EQ(f144BySource["efu.udp.receive.packets"]["value"], 1234);
  EXPECT_EQ(f144BySource["efu.udp.hist"]["value"], nlohmann::json({1, 2, 3}));
  EXPECT_EQ(f144BySource["auto.created"]["topic"], "t_auto");
  EXPECT_EQ(byKind["x5f2"][0]["status_json"]["module"], "udp");
  EXPECT_EQ(byKind["x5f2"][0]["process_id"], 4242);

  const std::string err = dump.err();
  EXPECT_NE(err.find("skipped t_stats[0]@2: unknown file identifier 'a fl'"), std::string::npos)
      << err;
  EXPECT_NE(err.find("7 messages (6 decoded, 1 unknown identifier, 0 undecodable), 5 events"),
            std::string::npos)
      << err;

  broker_->signal(SIGTERM);
  EXPECT_EQ(broker_->waitExit(kExitDeadline), std::optional<int>(0)) << broker_->err();
}

TEST_F(ToolsIntegration, DumpTextFormat) {
  producePlan();
  Child dump({EFU_DUMP_BIN, "-b", bootstrap_, "-t", "t_detector", "-n", "2", "--from", "beginning",
              "--timeout", "10", "--format", "text"},
             dir_ / "dump.out", dir_ / "dump.err");
  ASSERT_EQ(dump.waitExit(kExitDeadline), std::optional<int>(0)) << dump.err();
  const auto got = lines(dump.out());
  ASSERT_EQ(got.size(), 2u) << dump.out();
  EXPECT_EQ(got[0], "t_detector[0]@0 ev44 loki id=1 pulses=3 events=5 ref=[1000@0 2000@2 3000@3] "
                    "tof=[11 12 21 31 32] pixel=[1 2 3 4 5]");
  EXPECT_EQ(got[1], "t_detector[0]@1 ev44 loki id=2 pulses=0 events=0 ref=[] tof=[] pixel=[]");
}

// -c (now -n/--count) works for one more release, with a warning (docs/tools.md, "Option
// vocabulary").
TEST_F(ToolsIntegration, DumpOldCountSpellingStillWorksAndWarns) {
  producePlan();
  Child dump({EFU_DUMP_BIN, "-b", bootstrap_, "-t", "t_detector", "-c", "1", "--from", "beginning",
              "--timeout", "10", "--format", "text"},
             dir_ / "dump.out", dir_ / "dump.err");
  ASSERT_EQ(dump.waitExit(kExitDeadline), std::optional<int>(0)) << dump.err();
  EXPECT_EQ(lines(dump.out()).size(), 1u) << "stopped after -c 1 message:\n" << dump.out();
  EXPECT_NE(
      dump.err().find("warning: -c is deprecated and goes in the next release; use -n/--count"),
      std::string::npos)
      << dump.err();
}

TEST_F(ToolsIntegration, DumpReportsWhenCountIsNotReached) {
  Child dump({EFU_DUMP_BIN, "-b", bootstrap_, "-t", "t_status", "-n", "1", "--from", "beginning",
              "--timeout", "0.5"},
             dir_ / "dump.out", dir_ / "dump.err");
  EXPECT_EQ(dump.waitExit(kExitDeadline), std::optional<int>(2)) << dump.err();
  EXPECT_TRUE(dump.out().empty());
}

/// Width, height and 8-bit RGB of a PNG read with libpng; nullopt when it does not decode.
struct Png {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> rgb;
  int luminance(uint32_t x, uint32_t y) const {
    const size_t i = (size_t{y} * width + x) * 3;
    return rgb[i] + rgb[i + 1] + rgb[i + 2];
  }
};

std::optional<Png> readPng(const fs::path &path) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_file(&png, path.c_str()) == 0) {
    return std::nullopt;
  }
  png.format = PNG_FORMAT_RGB;
  Png out{png.width, png.height, std::vector<uint8_t>(PNG_IMAGE_SIZE(png))};
  const bool ok = png_image_finish_read(&png, nullptr, out.rgb.data(), 0, nullptr) != 0;
  png_image_free(&png);
  return ok ? std::optional<Png>(std::move(out)) : std::nullopt;
}

TEST_F(ToolsIntegration, DumpDrawsImageAndTofHistogram) {
  // A 4 x 3 grid of the example module: pixel = y * 4 + x + 1. Pixel 1 (0,0) is hot, 12 (3,2)
  // has one count; 0 and 13 are outside.
  std::ofstream(dir_ / "tiny.json") << R"({"width": 4, "height": 3})";
  {
    TestProducer producer(bootstrap_);
    producer.produce("t_detector",
                     efu::test::makeEv44("tiny", 1, {1000}, {0}, {10, 20, 30, 40}, {1, 1, 1, 12}));
    producer.produce("t_detector",
                     efu::test::makeEv44("tiny", 2, {2000}, {0}, {50, 990, 5}, {1, 0, 13}));
    ASSERT_TRUE(producer.flushAll());
  }
  const std::string image = dir_ / "image.png";
  const std::string config = dir_ / "tiny.json";
  const std::string tof = dir_ / "tof.png";
  const std::vector<std::string> pictures = {"--image",       image, "--geometry",      config,
                                             "--image-scale", "2",   "--tof-histogram", tof,
                                             "--tof-bins",    "10"};
  std::vector<std::string> args = {EFU_DUMP_BIN, "-b",        bootstrap_, "-t",
                                   "t_detector", "-n",        "2",        "--from",
                                   "beginning",  "--timeout", "10"};
  args.insert(args.end(), pictures.begin(), pictures.end());
  Child dump(args, dir_ / "dump.out", dir_ / "dump.err");
  ASSERT_EQ(dump.waitExit(kExitDeadline), std::optional<int>(0)) << dump.err();
  const std::string err = dump.err();
  EXPECT_NE(
      err.find("4 x 3 pixels (example), 5 events, max 4 per pixel, 2 pixel ids outside 1..12"),
      std::string::npos)
      << err;
  EXPECT_NE(err.find("10 bins over [0, 1000) ns, max 6 per bin, 7 events binned"),
            std::string::npos)
      << err;

  const auto imagePng = readPng(image);
  ASSERT_TRUE(imagePng) << "image.png does not decode";
  EXPECT_EQ(imagePng->width, 8u);
  EXPECT_EQ(imagePng->height, 6u);
  // hot (0,0) vs one count at (3,2) vs none at (1,0)
  EXPECT_GT(imagePng->luminance(1, 1), imagePng->luminance(7, 5));
  EXPECT_GT(imagePng->luminance(7, 5), imagePng->luminance(2, 0));
  const auto tofPng = readPng(tof);
  ASSERT_TRUE(tofPng) << "tof.png does not decode";
  EXPECT_GT(tofPng->width, 800u);
  EXPECT_GT(tofPng->height, 300u);
}

TEST_F(ToolsIntegration, DumpRewritesImageWhileRunning) {
  std::ofstream(dir_ / "tiny.json") << R"({"width": 5, "height": 2})";
  {
    TestProducer producer(bootstrap_);
    producer.produce("t_detector", efu::test::makeEv44("tiny", 1, {1000}, {0}, {1}, {10}));
    ASSERT_TRUE(producer.flushAll());
  }
  const std::string path = dir_ / "live.png";
  const std::string config = dir_ / "tiny.json";
  Child dump({EFU_DUMP_BIN, "-b", bootstrap_, "-t", "t_detector", "--from", "beginning", "--image",
              path, "--geometry", config, "--image-every", "0.2"},
             dir_ / "dump.out", dir_ / "dump.err");
  ASSERT_TRUE(pollUntil([&] { return fs::exists(path) || !dump.running(); }, kStartDeadline))
      << dump.err();
  EXPECT_TRUE(dump.running()) << "the picture must appear before the run ends";
  const auto live = readPng(path);
  ASSERT_TRUE(live);
  EXPECT_EQ(live->width, 5u);
  EXPECT_EQ(live->height, 2u);
  dump.signal(SIGINT);
  ASSERT_EQ(dump.waitExit(kExitDeadline), std::optional<int>(0)) << dump.err();
  EXPECT_NE(dump.err().find("1 events, max 1 per pixel, 0 pixel ids outside 1..10"),
            std::string::npos)
      << dump.err();
  EXPECT_TRUE(readPng(path));
}

TEST_F(ToolsIntegration, DumpRejectsConfigWithoutGeometry) {
  std::ofstream(dir_ / "nogeo.json") << R"({"instrument": "x"})";
  const std::string image = dir_ / "x.png";
  const std::string config = dir_ / "nogeo.json";
  Child dump(
      {EFU_DUMP_BIN, "-b", bootstrap_, "-t", "t_detector", "--image", image, "--geometry", config},
      dir_ / "dump.out", dir_ / "dump.err");
  EXPECT_EQ(dump.waitExit(kExitDeadline), std::optional<int>(1));
  EXPECT_NE(dump.err().find(config + ": no module accepts it"), std::string::npos) << dump.err();
  EXPECT_FALSE(fs::exists(image));
}

TEST_F(ToolsIntegration, KcatReadsTheSameMessages) {
  const auto kcat = findOnPath("kcat");
  if (!kcat) {
    GTEST_SKIP() << "kcat is not on PATH";
  }
  producePlan();
  const auto &expected = plan_.at("t_detector");
  Child reader({kcat->string(), "-C", "-b", bootstrap_, "-t", "t_detector", "-c",
                std::to_string(expected.size()), "-e", "-q", "-f", "%t %p %o %S\\n"},
               dir_ / "kcat.out", dir_ / "kcat.err");
  ASSERT_EQ(reader.waitExit(kExitDeadline), std::optional<int>(0)) << reader.err();
  const auto got = lines(reader.out());
  ASSERT_EQ(got.size(), expected.size()) << reader.out();
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(got[i],
              "t_detector 0 " + std::to_string(i) + " " + std::to_string(expected[i].size()));
  }
}

} // namespace
