// SPDX-License-Identifier: BSD-2-Clause
// End to end: readoutgen --pattern letters --truth → efu -d caen (LokiFull.json) → efu-broker →
// efu-view --geometry LokiFull.json. The image efu-view serves holds exactly the truth's counts
// per pixel, and its time-of-flight spectrum the truth's times binned. Real binaries on
// loopback; every wait polls with a deadline.
#include "tests/generators/readoutgen/EndToEndKit.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <map>
#include <regex>
#include <string>
#include <vector>

namespace efu::testkit {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

/// GET `path` from efu-view as JSON (null when it did not answer 200).
json getJson(uint16_t port, const std::string &path) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(30, 0);
  const auto res = client.Get(path);
  if (!res || res->status != 200) {
    return nullptr;
  }
  return json::parse(res->body, nullptr, false);
}

/// The events of source `name` in efu-view's accumulation, -1 while it has none.
int64_t events(uint16_t port, const std::string &name) {
  const json state = getJson(port, "/api/state");
  if (state.is_object()) {
    for (const auto &s : state["sources"]) {
      if (s.value("name", "") == name) {
        return s.value("events", int64_t{0});
      }
    }
  }
  return -1;
}

TEST(ViewEndToEnd, LokiImageAndSpectrumEqualTheTruth) {
  const std::string config = EFU_SOURCE_DIR "/modules/caen/configs/LokiFull.json";
  EndToEnd e2e("view");
  EndToEnd::Run run;
  // 4000 events of the letters pattern, 8 pulses of 500: a few seconds in all.
  ASSERT_NO_FATAL_FAILURE(e2e.start(run, "loki",
                                    {"-d", "caen", "-f", config, "--instrument", "loki"},
                                    {"-d", "caen", "-f", config, "-n", "4000", "--eps", "100000",
                                     "--events-per-pulse", "500", "--pattern", "letters"}));
  ASSERT_EQ(run.truthEvents, 4000);

  Process view({EFU_VIEW_BIN, "-b", e2e.bootstrap(), "-t", "loki_detector", "--from", "beginning",
                "--geometry", config, "-d", "caen", "--http-port", "0"});
  static const std::regex kServing(R"(efu-view: serving http://127\.0\.0\.1:(\d+)/)");
  std::smatch match;
  ASSERT_TRUE(eventually([&] {
    const std::string out = view.output();
    return std::regex_search(out, match, kServing) || !view.running();
  })) << view.output();
  const std::string out = view.output();
  ASSERT_TRUE(std::regex_search(out, match, kServing)) << out;
  const auto port = static_cast<uint16_t>(std::stoi(match[1]));
  // efu publishes in batches: wait until every event reached efu-view under the ESS name.
  ASSERT_TRUE(eventually([&] { return events(port, "caen") == run.truthEvents; }, 60s))
      << events(port, "caen") << " of " << run.truthEvents << " events\n"
      << getJson(port, "/api/state").dump(1) << "\n"
      << view.output();

  std::map<int64_t, uint64_t> truthPerPixel;
  std::vector<uint64_t> truthTof(1000, 0); // efu-view's default: 1000 bins over [0, 100 ms)
  for (const auto &[event, n] : run.truth) {
    const auto [pulse, tof, pixel] = event;
    truthPerPixel[pixel] += static_cast<uint64_t>(n);
    ASSERT_GE(tof, 0);
    ASSERT_LT(tof, 100'000'000);
    truthTof[static_cast<size_t>(tof / 100'000)] += static_cast<uint64_t>(n);
  }
  ASSERT_GT(truthPerPixel.size(), 100U) << "the letters light many pixels";

  const json image = getJson(port, "/api/image?source=caen&format=json");
  ASSERT_TRUE(image.is_object());
  EXPECT_EQ(image["width"], 512);
  EXPECT_EQ(image["height"], 6272);
  const auto counts = image["counts"].get<std::vector<uint64_t>>();
  ASSERT_EQ(counts.size(), 512U * 6272U);
  const auto firstPixel = image["first_pixel"].get<int64_t>();
  std::map<int64_t, uint64_t> served;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] != 0) {
      served[firstPixel + static_cast<int64_t>(i)] = counts[i];
    }
  }
  EXPECT_EQ(served, truthPerPixel);
  uint64_t max = 0;
  for (const auto &[pixel, n] : truthPerPixel) {
    max = std::max(max, n);
  }
  EXPECT_EQ(image["max"], max);

  const json tof = getJson(port, "/api/tof?source=caen");
  ASSERT_TRUE(tof.is_object());
  EXPECT_EQ(tof["bin_ns"], 100'000);
  EXPECT_EQ(tof["negative"], 0);
  EXPECT_EQ(tof["above_range"], 0);
  EXPECT_EQ(tof["bins"].get<std::vector<uint64_t>>(), truthTof);

  view.signal(SIGTERM);
  EXPECT_EQ(view.wait(20s), std::optional<int>(0)) << view.output();
  run.efu->signal(SIGTERM);
  EXPECT_EQ(run.efu->wait(20s), std::optional<int>(0)) << run.efu->output();
}

} // namespace
} // namespace efu::testkit
