// SPDX-License-Identifier: BSD-2-Clause
// Integration: the real efu-broker and efu-view binaries; ev44, f144, x5f2 and da00 messages
// produced with librdkafka; the page and the API read back with cpp-httplib's client. Every wait
// polls with a deadline.
#include "common/serialize/Da00.h"
#include "tests/efu/tools/Messages.h"
#include "tests/efu/tools/TestProducer.h"
#include "tests/integration/TestKit.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace efu::testkit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test::Bytes;
using test::TestProducer;
using namespace std::chrono_literals;

std::string readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// A running efu-view; the constructor waits for its "serving" line and reads the port from it.
class View {
public:
  explicit View(std::vector<std::string> args) {
    args.insert(args.begin(), EFU_VIEW_BIN);
    process_ = std::make_unique<Process>(args);
    static const std::regex kServing(R"(efu-view: serving http://(\S+):(\d+)/)");
    std::smatch match;
    eventually([&] {
      const std::string out = process_->output();
      return std::regex_search(out, match, kServing) || !process_->running();
    });
    const std::string out = process_->output();
    if (std::regex_search(out, match, kServing)) {
      address_ = match[1];
      port_ = static_cast<uint16_t>(std::stoi(match[2]));
    }
  }

  [[nodiscard]] bool serving() const { return port_ != 0; }
  [[nodiscard]] uint16_t port() const { return port_; }
  [[nodiscard]] const std::string &address() const { return address_; }
  Process &process() { return *process_; }
  [[nodiscard]] std::string output() const { return process_->output(); }

  /// A client of the page on loopback (whatever address it serves on).
  [[nodiscard]] std::unique_ptr<httplib::Client> client() const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_connection_timeout(5, 0);
    c->set_read_timeout(10, 0);
    c->set_write_timeout(5, 0);
    return c;
  }

  /// GET `path`: its JSON body, after checking status and the JSON headers.
  json get(const std::string &path, int status = 200) const {
    const auto res = client()->Get(path);
    if (!res) {
      ADD_FAILURE() << "GET " << path << ": " << httplib::to_string(res.error());
      return {};
    }
    EXPECT_EQ(res->status, status) << path << ": " << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json") << path;
    EXPECT_EQ(res->get_header_value("Cache-Control"), "no-store") << path;
    return json::parse(res->body, nullptr, false);
  }

  /// POST `body` to `path`: its JSON answer, after checking the status.
  json post(const std::string &path, const std::string &body, int status = 200) const {
    const auto res = client()->Post(path, body, "application/json");
    if (!res) {
      ADD_FAILURE() << "POST " << path << ": " << httplib::to_string(res.error());
      return {};
    }
    EXPECT_EQ(res->status, status) << path << " " << body << ": " << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/json") << path;
    return json::parse(res->body, nullptr, false);
  }

  json del(const std::string &path, int status = 200) const {
    const auto res = client()->Delete(path);
    if (!res) {
      ADD_FAILURE() << "DELETE " << path << ": " << httplib::to_string(res.error());
      return {};
    }
    EXPECT_EQ(res->status, status) << path << ": " << res->body;
    return json::parse(res->body, nullptr, false);
  }

  json state() const { return get("/api/state"); }

  /// The entry of source `name` in /api/state, or null.
  json source(const std::string &name) const {
    const json st = state();
    if (!st.is_object() || !st["sources"].is_array()) {
      return nullptr;
    }
    for (const auto &s : st["sources"]) {
      if (s.value("name", "") == name) {
        return s;
      }
    }
    return nullptr;
  }

  /// The events of source `name` in the accumulation, -1 before it has any message.
  int64_t eventsNow(const std::string &name) const {
    const json s = source(name);
    return s.is_object() ? s.value("events", int64_t{0}) : -1;
  }

  /// Polls until source `name` has `events` events in the accumulation.
  bool eventsReach(const std::string &name, uint64_t events) const {
    return eventually([&] {
      const json s = source(name);
      return s.is_object() && s.value("events", uint64_t{0}) == events;
    });
  }

private:
  std::unique_ptr<Process> process_;
  std::string address_;
  uint16_t port_ = 0;
};

/// The "error" of an answer, "" when there is none (or no JSON object).
std::string errorText(const json &answer) {
  return answer.is_object() ? answer.value("error", std::string()) : std::string();
}

std::span<const uint8_t> bytesOf(const std::vector<int32_t> &v) {
  return {reinterpret_cast<const uint8_t *>(v.data()), v.size() * sizeof(int32_t)};
}

/// A da00 message as the cbm module sends it: a signal over three time-bin edges.
Bytes makeDa00(const std::string &source) {
  static const std::vector<int32_t> edges{0, 100, 200};
  static const std::vector<int32_t> signal{3, 7};
  const std::string_view axes[] = {"frame_time"};
  const int64_t three[] = {3};
  const int64_t two[] = {2};
  const sdk::DataVariable vars[] = {
      {"frame_time", "ns", axes, three, sdk::DataType::Int32, bytesOf(edges)},
      {"signal", "counts", axes, two, sdk::DataType::Int32, bytesOf(signal)}};
  flatbuffers::FlatBufferBuilder fbb;
  const auto span = serialize::buildDa00(fbb, source, 42, vars);
  return Bytes(span.begin(), span.end());
}

/// A broker with the test's topics and a 4 x 3 detector of the example module (pixel = y * 4 + x
/// + 1) in a scratch folder.
class ViewIntegration : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("efu-view-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "tiny.json") << R"({"width": 4, "height": 3})";
    broker_ = std::make_unique<DevBroker>(
        BROKER_BIN, std::vector<std::string>{"--log-level", "warn", "--topic", "t_detector",
                                             "--topic", "t_stats", "--topic", "t_status"});
  }

  void TearDown() override {
    broker_.reset();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  /// efu-view on the broker, all three topics from the beginning, the tiny geometry, 10 TOF bins
  /// of 100 ns.
  std::unique_ptr<View> startView(std::vector<std::string> extra = {}) {
    std::vector<std::string> args{"-b",           broker_->bootstrap(),
                                  "-t",           "t_detector",
                                  "-t",           "t_stats",
                                  "-t",           "t_status",
                                  "--from",       "beginning",
                                  "--geometry",   (dir_ / "tiny.json").string(),
                                  "--tof-bins",   "10",
                                  "--tof-max-ns", "1000",
                                  "--http-port",  "0"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto view = std::make_unique<View>(args);
    EXPECT_TRUE(view->serving()) << view->output();
    return view;
  }

  void produce(const std::string &topic, const std::vector<Bytes> &messages) {
    TestProducer producer(broker_->bootstrap());
    for (const auto &m : messages) {
      producer.produce(topic, m);
    }
    ASSERT_TRUE(producer.flushAll());
  }

  /// Two ev44 messages of source "tiny": 9 events; pixels 1 (x4), 6 (x2), 12, and 0 and 13
  /// outside the picture; tofs 10..50 and 990 in range, -7 negative, 2000 above --tof-max-ns.
  void produceTiny() {
    produce("t_detector",
            {test::makeEv44("tiny", 1, {1000}, {0}, {10, 20, 30, 40}, {1, 1, 1, 12}),
             test::makeEv44("tiny", 2, {2000}, {0}, {50, 990, 5, -7, 2000}, {1, 0, 13, 6, 6})});
  }

  fs::path dir_;
  std::unique_ptr<DevBroker> broker_;
};

TEST_F(ViewIntegration, ImageTofMonitorsAndHealthFromEveryKindOfMessage) {
  produceTiny();
  produce("t_stats", {test::makeF144Long("efu.tiny.receive.dropped", 1700000000000000000, 3),
                      Bytes{'n', 'o', 't', ' ', 'a', ' ', 'f', 'l', 'a', 't', 'b', 'u', 'f'}});
  produce("t_status", {test::makeX5f2(R"({"module":"example"})"), makeDa00("cbm1")});
  const auto view = startView();
  ASSERT_TRUE(view->serving());
  ASSERT_TRUE(eventually([&] {
    const json s = view->state();
    return s["monitors"].size() == 1 && s["health"]["counters"].size() == 1 &&
           s["health"]["services"].size() == 1 && view->eventsNow("tiny") == 9;
  })) << view->state().dump(1)
      << "\nefu-view's log:\n"
      << view->output();

  const json state = view->state();
  EXPECT_EQ(state["program"], "efu-view");
  EXPECT_EQ(state["version"], EFU_VERSION);
  EXPECT_EQ(state["broker"]["bootstrap"], broker_->bootstrap());
  EXPECT_EQ(state["broker"]["topics"], json({"t_detector", "t_stats", "t_status"}));
  EXPECT_EQ(state["broker"]["connected"], true);
  EXPECT_EQ(state["geometry"]["width"], 4);
  EXPECT_EQ(state["geometry"]["height"], 3);
  EXPECT_EQ(state["geometry"]["first_pixel"], 1);
  EXPECT_EQ(state["tof"], json({{"bins", 10}, {"max_ns", 1000}}));
  const json tiny = view->source("tiny");
  EXPECT_EQ(tiny["topic"], "t_detector");
  EXPECT_EQ(tiny["messages"], 2);
  EXPECT_EQ(tiny["outside_image"], 2);
  EXPECT_EQ(tiny["negative_tof"], 1);
  EXPECT_EQ(tiny["tof_above_range"], 1);
  EXPECT_EQ(state["messages"]["total"], 6);
  EXPECT_EQ(state["messages"]["unknown"], 1);
  EXPECT_EQ(state["monitors"][0]["name"], "cbm1");
  EXPECT_EQ(state["monitors"][0]["topic"], "t_status");
  const json &counter = state["health"]["counters"][0];
  EXPECT_EQ(counter["source"], "efu.tiny.receive.dropped");
  EXPECT_EQ(counter["name"], "receive.dropped");
  EXPECT_EQ(counter["value"], 3);
  EXPECT_EQ(counter["losing"], true);
  EXPECT_EQ(state["health"]["services"][0]["service_id"], "udp");
  EXPECT_EQ(state["health"]["services"][0]["process_id"], 4242);

  // The image as JSON: exactly the pixels sent, row-major from the top row.
  std::vector<uint64_t> expected(12, 0);
  expected[0] = 4;  // pixel 1: (0, 0)
  expected[5] = 2;  // pixel 6: (1, 1)
  expected[11] = 1; // pixel 12: (3, 2)
  const json image = view->get("/api/image?source=tiny&format=json");
  EXPECT_EQ(image["width"], 4);
  EXPECT_EQ(image["height"], 3);
  EXPECT_EQ(image["first_pixel"], 1);
  EXPECT_EQ(image["max"], 4);
  EXPECT_GT(image["since_ns"].get<int64_t>(), 0);
  EXPECT_EQ(image["counts"].get<std::vector<uint64_t>>(), expected);

  // The same image in binary: little-endian uint32, the sizes in headers.
  const auto binary = view->client()->Get("/api/image?source=tiny");
  ASSERT_TRUE(binary);
  EXPECT_EQ(binary->status, 200);
  EXPECT_EQ(binary->get_header_value("Content-Type"), "application/octet-stream");
  EXPECT_EQ(binary->get_header_value("Cache-Control"), "no-store");
  EXPECT_EQ(binary->get_header_value("X-Width"), "4");
  EXPECT_EQ(binary->get_header_value("X-Height"), "3");
  EXPECT_EQ(binary->get_header_value("X-First-Pixel"), "1");
  EXPECT_EQ(binary->get_header_value("X-Max"), "4");
  EXPECT_EQ(binary->get_header_value("X-Since-Ns"), image["since_ns"].dump());
  ASSERT_EQ(binary->body.size(), 12U * 4);
  for (size_t i = 0; i < 12; ++i) {
    const auto *b = reinterpret_cast<const uint8_t *>(binary->body.data() + 4 * i);
    EXPECT_EQ(b[0] | b[1] << 8 | b[2] << 16 | uint32_t{b[3]} << 24, expected[i]) << i;
  }

  // The spectrum: 10 bins of 100 ns; 10..50 in bin 0, 990 in bin 9.
  const json tof = view->get("/api/tof?source=tiny");
  EXPECT_EQ(tof["bin_ns"], 100);
  EXPECT_EQ(tof["max_ns"], 1000);
  EXPECT_EQ(tof["negative"], 1);
  EXPECT_EQ(tof["above_range"], 1);
  EXPECT_EQ(tof["bins"], json({6, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
}

// A regression: once the first topic was read, a lookup of the next could wait at the broker
// behind that topic's fetch, which waits fetch.wait.max.ms for data; lookups shorter than the
// wait then never came back, and the other topics stayed unread (the code before failed this
// test 1 time in 3). With a 3-s wait every topic is read.
TEST_F(ViewIntegration, ReadsEveryTopicWhileAFetchWaitsAtTheBroker) {
  produceTiny();
  produce("t_stats", {test::makeF144Long("efu.tiny.receive.dropped", 1700000000000000000, 3)});
  produce("t_status", {test::makeX5f2(R"({"module":"example"})")});
  const auto view = startView({"-X", "fetch.wait.max.ms=3000"});
  ASSERT_TRUE(view->serving());
  ASSERT_TRUE(eventually([&] {
    const json s = view->state();
    return s["health"]["counters"].size() == 1 && s["health"]["services"].size() == 1 &&
           view->eventsNow("tiny") == 9;
  })) << view->state().dump(1)
      << "\nefu-view's log:\n"
      << view->output();
  EXPECT_EQ(view->state()["messages"]["total"], 4);
}

TEST_F(ViewIntegration, RegionsGateAndControls) {
  produceTiny();
  const auto view = startView();
  ASSERT_TRUE(view->serving());
  ASSERT_TRUE(view->eventsReach("tiny", 9)) << view->state().dump(1);

  // A region over (0..1, 0..1): pixels 1 and 6, 4 + 2 counts of the image so far.
  const json roi = view->post("/api/roi", R"({"source":"tiny","x0":0,"y0":0,"x1":2,"y1":2})");
  ASSERT_TRUE(roi.contains("id")) << roi;
  const std::string id = roi["id"].dump();
  ASSERT_TRUE(eventually([&] {
    const json rois = view->state()["rois"];
    return rois.size() == 1 && rois[0]["counts"] == 6;
  })) << view->state()["rois"];
  const json rois = view->state()["rois"];
  EXPECT_EQ(rois[0]["source"], "tiny");
  EXPECT_EQ(rois[0]["x1"], 2);
  // Its spectrum counts the events inside it since it was drawn: none yet, then one at 150 ns.
  EXPECT_EQ(view->get("/api/tof?source=tiny&roi=" + id)["bins"],
            json({0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  produce("t_detector", {test::makeEv44("tiny", 3, {3000}, {0}, {150, 150}, {6, 12})});
  ASSERT_TRUE(eventually([&] {
    return view->get("/api/tof?source=tiny&roi=" + id)["bins"] ==
           json({0, 1, 0, 0, 0, 0, 0, 0, 0, 0});
  })) << view->get("/api/tof?source=tiny&roi=" + id);

  // A gate on [0, 100) ns: the gated image starts empty, then holds only the events inside it.
  view->get("/api/image?source=tiny&gated=1&format=json", 404);
  EXPECT_EQ(view->post("/api/gate", R"({"tof_min_ns":0,"tof_max_ns":100})"), json({{"ok", true}}));
  EXPECT_EQ(view->state()["gate"]["tof_max_ns"], 100);
  EXPECT_EQ(view->get("/api/image?source=tiny&gated=1&format=json")["counts"],
            json(std::vector<int>(12, 0)));
  produce("t_detector", {test::makeEv44("tiny", 4, {4000}, {0}, {50, 500}, {1, 12})});
  ASSERT_TRUE(view->eventsReach("tiny", 13));
  std::vector<int> gated(12, 0);
  gated[0] = 1;
  EXPECT_EQ(view->get("/api/image?source=tiny&gated=1&format=json")["counts"], json(gated));
  EXPECT_EQ(view->post("/api/gate", "{}"), json({{"ok", true}}));
  EXPECT_TRUE(view->state()["gate"].is_null());
  view->get("/api/image?source=tiny&gated=1", 404);

  // Pause: messages are still counted, their events not accumulated.
  EXPECT_EQ(view->post("/api/control", R"({"action":"pause"})"), json({{"ok", true}}));
  EXPECT_EQ(view->state()["control"]["paused"], true);
  const uint64_t before = view->state()["messages"]["total"];
  produce("t_detector", {test::makeEv44("tiny", 5, {5000}, {0}, {10}, {1})});
  ASSERT_TRUE(eventually([&] { return view->state()["messages"]["total"] == before + 1; }));
  EXPECT_EQ(view->source("tiny")["events"], 13);
  // Reset: the accumulation starts again, empty; the regions stay.
  EXPECT_EQ(view->post("/api/control", R"({"action":"reset"})"), json({{"ok", true}}));
  EXPECT_EQ(view->source("tiny")["events"], 0);
  EXPECT_EQ(view->get("/api/image?source=tiny&format=json")["counts"],
            json(std::vector<int>(12, 0)));
  EXPECT_EQ(view->post("/api/control", R"({"action":"resume"})"), json({{"ok", true}}));
  EXPECT_EQ(view->state()["control"]["paused"], false);
  produce("t_detector", {test::makeEv44("tiny", 6, {6000}, {0}, {10}, {1})});
  ASSERT_TRUE(view->eventsReach("tiny", 1));

  // A window of the last 5 s; one shorter than a second is refused with the reason.
  EXPECT_EQ(view->post("/api/control", R"({"action":"window","seconds":5})"), json({{"ok", true}}));
  EXPECT_EQ(view->state()["control"]["window_s"], 5);
  const json refused = view->post("/api/control", R"({"action":"window","seconds":0.5})", 400);
  EXPECT_NE(errorText(refused).find("window"), std::string::npos) << refused;

  // Regions go by id: once.
  EXPECT_EQ(view->del("/api/roi?id=" + id), json({{"ok", true}}));
  EXPECT_TRUE(view->state()["rois"].empty());
  EXPECT_NE(errorText(view->del("/api/roi?id=" + id, 404)), "");
  view->get("/api/tof?source=tiny&roi=" + id, 404);
}

TEST_F(ViewIntegration, BadRequestsAreRefusedWithTheirReason) {
  produceTiny();
  const auto view = startView();
  ASSERT_TRUE(view->serving());
  ASSERT_TRUE(view->eventsReach("tiny", 9));
  const auto errorOf = [](const json &answer) { return errorText(answer); };

  // Unknown paths and things.
  EXPECT_EQ(errorOf(view->get("/nope", 404)), "not found: GET /nope");
  EXPECT_NE(errorOf(view->get("/api/nope", 404)), "");
  EXPECT_NE(errorOf(view->get("/api/image?source=nosuch", 404)).find("nosuch"), std::string::npos);
  EXPECT_NE(errorOf(view->get("/api/tof?source=nosuch", 404)).find("nosuch"), std::string::npos);
  EXPECT_NE(errorOf(view->get("/api/tof?source=tiny&roi=7", 404)).find("7"), std::string::npos);
  EXPECT_NE(errorOf(view->post("/api/state", "{}", 404)), "");

  // Malformed queries.
  EXPECT_NE(errorOf(view->get("/api/image", 400)).find("source"), std::string::npos);
  EXPECT_NE(errorOf(view->get("/api/tof", 400)).find("source"), std::string::npos);
  EXPECT_NE(errorOf(view->get("/api/image?source=tiny&format=png", 400)).find("png"),
            std::string::npos);
  EXPECT_NE(errorOf(view->get("/api/image?source=tiny&gated=yes", 400)).find("yes"),
            std::string::npos);
  EXPECT_NE(errorOf(view->get("/api/tof?source=tiny&roi=x", 400)).find("'x'"), std::string::npos);
  EXPECT_NE(errorOf(view->del("/api/roi?id=-1", 400)).find("-1"), std::string::npos);

  // Malformed bodies.
  EXPECT_EQ(errorOf(view->post("/api/control", "not json", 400)), "the body is not JSON");
  EXPECT_EQ(errorOf(view->post("/api/control", "[1]", 400)), "the body must be a JSON object");
  EXPECT_NE(errorOf(view->post("/api/control", R"({"action":"explode"})", 400)).find("explode"),
            std::string::npos);
  EXPECT_NE(errorOf(view->post("/api/control", R"({"action":"window"})", 400)).find("seconds"),
            std::string::npos);
  EXPECT_NE(
      errorOf(view->post("/api/roi", R"({"source":"tiny","x0":0,"y0":0,"x1":2})", 400)).find("y1"),
      std::string::npos);
  EXPECT_NE(
      errorOf(view->post("/api/roi", R"({"source":"tiny","x0":-1,"y0":0,"x1":2,"y1":2})", 400))
          .find("x0"),
      std::string::npos);
  EXPECT_NE(
      errorOf(view->post("/api/roi", R"({"source":"nosuch","x0":0,"y0":0,"x1":2,"y1":2})", 400))
          .find("nosuch"),
      std::string::npos);
  EXPECT_NE(
      errorOf(view->post("/api/roi", R"({"source":"tiny","x0":2,"y0":0,"x1":2,"y1":2})", 400)), "");
  EXPECT_NE(errorOf(view->post("/api/gate", R"({"tof_min_ns":5})", 400)).find("tof_max_ns"),
            std::string::npos);
  EXPECT_NE(errorOf(view->post("/api/gate", R"({"tof_min_ns":5,"tof_max_ns":5})", 400)), "");
  // A body over 4 KiB is refused before it is read.
  const std::string large = R"({"action":"reset","pad":")" + std::string(5000, 'x') + "\"}";
  EXPECT_NE(errorOf(view->post("/api/control", large, 413)).find("4096"), std::string::npos);
  // None of it changed anything.
  EXPECT_EQ(view->source("tiny")["events"], 9);
  EXPECT_TRUE(view->state()["rois"].empty());
}

TEST_F(ViewIntegration, ServesEveryFileOfThePageAsBuilt) {
  const auto view = startView();
  ASSERT_TRUE(view->serving());
  const fs::path web = fs::path(EFU_SOURCE_DIR) / "efu/tools/view/web";
  ASSERT_TRUE(fs::exists(web / "index.html"));
  const auto index = view->client()->Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(index->body, readFile(web / "index.html"));
  const std::map<std::string, std::string> types = {
      {".html", "text/html; charset=utf-8"},
      {".js", "application/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"}};
  for (const auto &entry : fs::recursive_directory_iterator(web)) {
    if (!entry.is_regular_file()) {
      continue;
    }
    const std::string name = fs::relative(entry.path(), web).string();
    const auto res = view->client()->Get("/" + name);
    ASSERT_TRUE(res) << name;
    EXPECT_EQ(res->status, 200) << name;
    EXPECT_EQ(res->body, readFile(entry.path())) << name << " differs from the source tree";
    const auto type = types.find(entry.path().extension().string());
    if (type != types.end()) {
      EXPECT_EQ(res->get_header_value("Content-Type"), type->second) << name;
    }
  }
}

TEST_F(ViewIntegration, StopsCleanlyOnSigtermSigintAndStopafter) {
  for (const int sig : {SIGTERM, SIGINT}) {
    auto view = startView();
    ASSERT_TRUE(view->serving());
    view->process().signal(sig);
    EXPECT_EQ(view->process().wait(20s), std::optional<int>(0)) << view->output();
  }
  // A stop asked while it starts (pending when it runs): it still starts, serves and stops.
  Process early({EFU_VIEW_BIN, "-b", broker_->bootstrap(), "-t", "t_detector", "--http-port", "0"},
                {SIGTERM});
  EXPECT_EQ(early.wait(20s), std::optional<int>(0)) << early.output();
  auto view = startView({"--stopafter", "0.3"});
  ASSERT_TRUE(view->serving()) << view->output();
  EXPECT_EQ(view->process().wait(20s), std::optional<int>(0)) << view->output();
  EXPECT_NE(view->output().find("--stopafter"), std::string::npos) << view->output();
}

TEST_F(ViewIntegration, NonLoopbackAddressIsWarnedAboutAndAPortInUseRefused) {
  const auto open = startView({"--http-address", "0.0.0.0"});
  ASSERT_TRUE(open->serving());
  EXPECT_EQ(open->address(), "0.0.0.0");
  EXPECT_NE(open->output().find("serves without authentication on a non-loopback address"),
            std::string::npos)
      << open->output();
  EXPECT_EQ(open->state()["program"], "efu-view");

  const auto local = startView();
  ASSERT_TRUE(local->serving());
  EXPECT_EQ(local->address(), "127.0.0.1");
  EXPECT_EQ(local->output().find("without authentication"), std::string::npos) << local->output();

  const std::string port = std::to_string(local->port());
  Process second(
      {EFU_VIEW_BIN, "-b", broker_->bootstrap(), "-t", "t_detector", "--http-port", port});
  EXPECT_EQ(second.wait(20s), std::optional<int>(1)) << second.output();
  EXPECT_NE(second.output().find("--http-port " + port), std::string::npos) << second.output();
  EXPECT_NE(second.output().find("Address already in use"), std::string::npos) << second.output();
  EXPECT_EQ(second.output().find("efu-view: serving"), std::string::npos) << second.output();
}

// The broker goes away (efu-broker's SIGUSR1 cuts every connection and refuses new ones) and
// comes back (SIGUSR2): the page is told both, and messages flow again.
TEST_F(ViewIntegration, BrokerOutageIsShownAndReadingResumes) {
  const fs::path file = dir_ / "outage.bootstrap";
  Process broker({BROKER_BIN, "--log-level", "warn", "--topic", "t_detector", "--bootstrap-file",
                  file.string()});
  ASSERT_TRUE(eventually([&] { return fs::exists(file) || !broker.running(); })) << broker.output();
  std::string bootstrap = readFile(file);
  bootstrap.erase(bootstrap.find_last_not_of('\n') + 1);
  View view({"-b", bootstrap, "-t", "t_detector", "--http-port", "0"});
  ASSERT_TRUE(view.serving()) << view.output();
  ASSERT_TRUE(eventually([&] { return view.state()["broker"]["connected"] == true; }))
      << view.state()["broker"];

  broker.signal(SIGUSR1);
  ASSERT_TRUE(eventually([&] { return view.state()["broker"]["connected"] == false; }, 30s))
      << view.state()["broker"] << view.output();
  EXPECT_NE(view.state()["broker"]["error"], "");

  broker.signal(SIGUSR2);
  ASSERT_TRUE(eventually([&] { return view.state()["broker"]["connected"] == true; }, 30s))
      << view.state()["broker"] << view.output();
  {
    TestProducer producer(bootstrap);
    producer.produce("t_detector", test::makeEv44("tiny", 1, {1000}, {0}, {10, 20}, {1, 2}));
    ASSERT_TRUE(producer.flushAll());
  }
  EXPECT_TRUE(view.eventsReach("tiny", 2)) << view.state().dump(1);
  broker.signal(SIGTERM);
  EXPECT_EQ(broker.wait(20s), std::optional<int>(0));
}

} // namespace
} // namespace efu::testkit
