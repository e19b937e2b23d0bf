// SPDX-License-Identifier: BSD-2-Clause
// efu-dump pictures: geometry from instrument configs, pixel mapping, PNGs read back with libpng.
#include "efu/tools/dump/Image.h"
#include "common/sdk/ModuleConfig.h"
#include "common/serialize/Da00.h"
#include "efu/tools/dump/Da00Chart.h"
#include "efu/tools/dump/Decode.h"
#include "efu/tools/dump/TofHistogram.h"
#include "modules/caen/CaenConfig.h"
#include "modules/vmm3/Vmm3Config.h"

#include <gtest/gtest.h>
#include <png.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using efu::tools::GeometryError;
using efu::tools::ImageGeometry;
using efu::tools::PixelCounts;
using efu::tools::PixelPosition;
using efu::tools::RgbImage;
using Json = nlohmann::json;

const fs::path kSourceDir = EFU_SOURCE_DIR;

/// A PNG read back with libpng's simplified API as 8-bit RGB.
struct DecodedPng {
  uint32_t width = 0;
  uint32_t height = 0;
  std::vector<uint8_t> rgb;
  [[nodiscard]] double luminance(uint32_t x, uint32_t y) const {
    const size_t i = (size_t{y} * width + x) * 3;
    return 0.2126 * rgb[i] + 0.7152 * rgb[i + 1] + 0.0722 * rgb[i + 2];
  }
};

DecodedPng readPng(const fs::path &path) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  DecodedPng out;
  if (png_image_begin_read_from_file(&png, path.c_str()) == 0) {
    ADD_FAILURE() << path << ": " << png.message;
    return out;
  }
  png.format = PNG_FORMAT_RGB;
  out.width = png.width;
  out.height = png.height;
  out.rgb.resize(PNG_IMAGE_SIZE(png));
  if (png_image_finish_read(&png, nullptr, out.rgb.data(), 0, nullptr) == 0) {
    ADD_FAILURE() << path << ": " << png.message;
  }
  png_image_free(&png);
  return out;
}

/// A scratch directory removed at the end of the test.
class ScratchDir {
public:
  ScratchDir() {
    char pattern[] = "/tmp/efu-image-test-XXXXXX";
    EXPECT_NE(mkdtemp(pattern), nullptr);
    path_ = pattern;
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;
  ~ScratchDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  [[nodiscard]] const fs::path &path() const { return path_; }

private:
  fs::path path_;
};

std::string geometryError(const Json &config, const std::string &module = "") {
  try {
    efu::tools::geometryFromModule(module, config, "inst.json");
  } catch (const GeometryError &e) {
    return e.what();
  }
  return "no error";
}

std::vector<fs::path> configsOf(const std::string &module) {
  std::vector<fs::path> out;
  for (const auto &entry : fs::directory_iterator(kSourceDir / "modules" / module / "configs")) {
    if (entry.path().extension() == ".json") {
      out.push_back(entry.path());
    }
  }
  return out;
}

TEST(ImageGeometry, CaenConfigsGiveStrawsByPositions) {
  const auto loki = efu::tools::loadGeometry(kSourceDir / "modules/caen/configs/LokiFull.json");
  EXPECT_EQ(loki.kind, "caen");
  EXPECT_EQ(loki.instrument, "loki"); // the ESS file's Detector
  EXPECT_EQ(loki.width, 512u);        // Resolution
  EXPECT_EQ(loki.height, 896u * 7u);  // groups x straws
}

TEST(ImageGeometry, Vmm3ConfigsGiveTheEssLogicalImages) {
  const auto freia = efu::tools::loadGeometry(kSourceDir / "modules/vmm3/configs/freia.json");
  EXPECT_EQ(freia.kind, "vmm3");
  EXPECT_EQ(freia.instrument, "Freia"); // the ESS file's InstrumentGeometry
  EXPECT_EQ(freia.width, 64u);
  EXPECT_EQ(freia.height, 1024u);
  const auto amor = efu::tools::loadGeometry(kSourceDir / "modules/vmm3/configs/amor.json");
  EXPECT_EQ(amor.instrument, "AMOR");
  EXPECT_EQ(amor.width, 64u);
  EXPECT_EQ(amor.height, 448u);
  const auto estia =
      efu::tools::loadGeometry(kSourceDir / "modules/vmm3/configs/estia_config.json");
  EXPECT_EQ(estia.width, 1536u);
  EXPECT_EQ(estia.height, 128u);
}

// Every shipped config (each ESS instrument): the same image and pixel rule as the module's own
// parser.
TEST(ImageGeometry, AgreesWithTheCaenModuleOnEveryShippedConfig) {
  for (const auto &path : configsOf("caen")) {
    std::ifstream in(path);
    const efu::caen::CaenConfig module(efu::validateModuleConfig("caen", efu::caen::kCaenKeys,
                                                                 efu::caen::kCaenKeyCount,
                                                                 Json::parse(in), path.string()),
                                       path.string());
    const auto geometry = efu::tools::loadGeometry(path);
    EXPECT_EQ(geometry.width, module.imageWidth()) << path;
    EXPECT_EQ(geometry.height, module.imageHeight()) << path;
    for (const uint32_t row : {0U, module.imageHeight() - 1}) {
      for (const uint32_t x : {0U, module.imageWidth() - 1}) {
        const auto at = geometry.locate(static_cast<int32_t>(module.pixel(x, row)));
        ASSERT_TRUE(at) << path;
        EXPECT_EQ(at->x, x) << path;
        EXPECT_EQ(at->y, row) << path;
      }
    }
  }
}

TEST(ImageGeometry, AgreesWithTheVmm3ModuleOnEveryShippedConfig) {
  for (const auto &path : configsOf("vmm3")) {
    const auto module = efu::vmm3::loadVmm3Config(path.string());
    const auto geometry = efu::tools::loadGeometry(path);
    EXPECT_EQ(geometry.width, module.width()) << path;
    EXPECT_EQ(geometry.height, module.height()) << path;
    const uint32_t last = module.width() * module.height();
    const auto at = geometry.locate(static_cast<int32_t>(last));
    ASSERT_TRUE(at) << path;
    EXPECT_EQ(module.pixel(at->x, at->y), last) << path;
  }
}

// The example module is only its own folder (modules/example): efu-dump knows nothing of it,
// yet draws it, because the module describes its geometry through the SDK.
TEST(ImageGeometry, AModuleDescribesItsOwnGeometry) {
  const auto g = efu::tools::geometryFromModule("", Json{{"width", 7}, {"height", 3}}, "grid.json");
  EXPECT_EQ(g.kind, "example");
  EXPECT_EQ(g.width, 7u);
  EXPECT_EQ(g.height, 3u);
  EXPECT_EQ(efu::tools::geometryFromModule("example", Json::object(), "d.json").width, 32u)
      << "the key table's defaults apply";
}

TEST(ImageGeometry, ErrorsNameTheFileTheModuleAndTheKey) {
  const std::string none = geometryError(Json{{"nx", 4}});
  EXPECT_NE(none.find("inst.json: no module accepts it; give --det NAME"), std::string::npos)
      << none;
  EXPECT_NE(none.find("\n  vmm3: "), std::string::npos) << "each module's reason: " << none;
  EXPECT_NE(none.find("\n  udp: module 'udp' describes no image geometry"), std::string::npos)
      << none;
  const std::string bad = geometryError(Json{{"width", 0}}, "example");
  EXPECT_NE(bad.find("inst.json"), std::string::npos) << bad;
  EXPECT_NE(bad.find("width"), std::string::npos) << bad;
  EXPECT_EQ(geometryError(Json::object(), "nosuch").rfind("--det: ", 0), 0U);
}

TEST(ImageGeometry, FileErrorsNameTheOptionAndPath) {
  ScratchDir dir;
  try {
    efu::tools::loadGeometry((dir.path() / "absent.json").string());
    FAIL() << "no error";
  } catch (const GeometryError &e) {
    EXPECT_NE(std::string(e.what()).find("--geometry " + (dir.path() / "absent.json").string() +
                                         ": cannot open"),
              std::string::npos)
        << e.what();
  }
  std::ofstream(dir.path() / "bad.json") << "{ not json";
  try {
    efu::tools::loadGeometry((dir.path() / "bad.json").string());
    FAIL() << "no error";
  } catch (const GeometryError &e) {
    EXPECT_NE(std::string(e.what()).find("bad.json: line 1, column 4: not valid JSON"),
              std::string::npos)
        << e.what();
  }
}

TEST(ImageGeometry, LocatesCornersAndRejectsOutside) {
  const ImageGeometry g{"vmm3", "", 5, 3};
  auto expectAt = [&](int64_t pixel, uint32_t x, uint32_t y) {
    const auto at = g.locate(pixel);
    ASSERT_TRUE(at) << pixel;
    EXPECT_EQ(at->x, x) << pixel;
    EXPECT_EQ(at->y, y) << pixel;
  };
  expectAt(1, 0, 0);  // top left
  expectAt(5, 4, 0);  // top right
  expectAt(11, 0, 2); // bottom left
  expectAt(15, 4, 2); // bottom right
  expectAt(7, 1, 1);  // y * nx + x + 1
  EXPECT_FALSE(g.locate(0));
  EXPECT_FALSE(g.locate(-1));
  EXPECT_FALSE(g.locate(16));
  EXPECT_FALSE(g.locate(INT64_MAX));
}

// A part whose ids start after another part's (module ABI 5): DREAM's backward endcap is
// 616 x 256 from id 71681.
TEST(ImageGeometry, APartStartsAtItsFirstPixel) {
  const ImageGeometry g{"dream", "DREAM", 616, 256, 71681};
  EXPECT_EQ(g.lastPixel(), 71680u + 616 * 256);
  EXPECT_FALSE(g.locate(71680));
  ASSERT_TRUE(g.locate(71681));
  EXPECT_EQ(g.locate(71681)->x, 0u);
  EXPECT_EQ(g.locate(71681)->y, 0u);
  ASSERT_TRUE(g.locate(71681 + 616 + 5));
  EXPECT_EQ(g.locate(71681 + 616 + 5)->x, 5u);
  EXPECT_EQ(g.locate(71681 + 616 + 5)->y, 1u);
  ASSERT_TRUE(g.locate(71680 + 616 * 256));
  EXPECT_EQ(g.locate(71680 + 616 * 256)->y, 255u);
  EXPECT_FALSE(g.locate(71681 + 616 * 256));
}

TEST(PixelCounts, CountsInsideAndOutside) {
  PixelCounts counts(ImageGeometry{"caen", "", 4, 2});
  for (const int64_t pixel : {1, 1, 1, 8, 0, 9, -5, 100}) {
    counts.add(pixel);
  }
  EXPECT_EQ(counts.at(0, 0), 3u);
  EXPECT_EQ(counts.at(3, 1), 1u);
  EXPECT_EQ(counts.at(1, 0), 0u);
  EXPECT_EQ(counts.inRange(), 4u);
  EXPECT_EQ(counts.outOfRange(), 4u);
  EXPECT_EQ(counts.maxCount(), 3u);
}

TEST(Viridis, BrightnessRisesAlongTheMap) {
  double previous = -1.0;
  for (int i = 0; i <= 100; ++i) {
    uint8_t c[3];
    efu::tools::viridis(i / 100.0, c);
    const double luminance = 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
    EXPECT_GT(luminance, previous) << i;
    previous = luminance;
  }
  uint8_t low[3];
  uint8_t high[3];
  efu::tools::viridis(-3.0, low);
  efu::tools::viridis(7.0, high);
  EXPECT_EQ(low[0], 68);
  EXPECT_EQ(high[2], 37);
}

TEST(RenderCounts, HotPixelIsBrighterAndScaleRepeatsPixels) {
  PixelCounts counts(ImageGeometry{"vmm3", "", 6, 4});
  for (int i = 0; i < 100; ++i) {
    counts.add(1); // (0, 0), hot
  }
  counts.add(6 * 3 + 5 + 1); // (5, 3), one count
  ScratchDir dir;
  const auto path = dir.path() / "image.png";
  for (const bool logScale : {false, true}) {
    efu::tools::writePng(efu::tools::renderCounts(counts, {3, logScale}), path.string());
    const auto png = readPng(path);
    ASSERT_EQ(png.width, 18u);
    ASSERT_EQ(png.height, 12u);
    // Every picture pixel of a detector pixel has its colour.
    EXPECT_EQ(png.luminance(0, 0), png.luminance(2, 2));
    EXPECT_EQ(png.luminance(15, 9), png.luminance(17, 11));
    EXPECT_GT(png.luminance(0, 0), png.luminance(15, 9)) << "log " << logScale;
    EXPECT_GT(png.luminance(15, 9), png.luminance(3, 0)) << "one count beats none";
    EXPECT_EQ(png.luminance(3, 0), 0.0) << "empty pixels are black";
  }
  EXPECT_FALSE(fs::exists(path.string() + ".tmp." + std::to_string(getpid())));
}

TEST(RenderCounts, RejectsScalesOutOfRange) {
  PixelCounts counts(ImageGeometry{"vmm3", "", 2048, 2048});
  EXPECT_THROW(efu::tools::renderCounts(counts, {0, false}), efu::tools::ImageError);
  EXPECT_THROW(efu::tools::renderCounts(counts, {efu::tools::kMaxImageScale + 1, false}),
               efu::tools::ImageError);
  EXPECT_NO_THROW(efu::tools::checkImageStyle(counts.geometry(), {4, false}));
  EXPECT_THROW(efu::tools::checkImageStyle(counts.geometry(), {5, false}), efu::tools::ImageError);
}

TEST(WritePng, ErrorNamesTheFile) {
  RgbImage image(2, 2, 1, 2, 3);
  try {
    efu::tools::writePng(image, "/nonexistent-dir/x.png");
    FAIL() << "no error";
  } catch (const efu::tools::ImageError &e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.png"), std::string::npos) << e.what();
  }
}

TEST(TofHistogram, FixedRangeBinsByIntegerEdges) {
  efu::tools::TofHistogram h(4, 100);
  for (const int64_t tof : {0, 24, 25, 99, 100, 5000, -1}) {
    h.add(tof);
  }
  const auto r = h.result();
  EXPECT_EQ(r.rangeNs, 100u);
  EXPECT_EQ(r.bins, (std::vector<uint64_t>{2, 1, 0, 1}));
  EXPECT_EQ(h.binned(), 4u);
  EXPECT_EQ(h.aboveRange(), 2u);
  EXPECT_EQ(h.negative(), 1u);
  EXPECT_EQ(h.maxSeenNs(), std::optional<int64_t>(5000));
}

TEST(TofHistogram, AutoRangeCoversTheMaximumWithExactBins) {
  // Many values forcing several doublings; compare with bins computed from the final range.
  efu::tools::TofHistogram h(10, std::nullopt);
  std::vector<int64_t> values;
  for (int64_t v = 0; v < 71'000'000; v += 9'973) {
    values.push_back(v);
  }
  values.push_back(71'428'571);
  for (const auto v : values) {
    h.add(v);
  }
  const auto r = h.result();
  ASSERT_EQ(r.bins.size(), 10u);
  EXPECT_GT(r.rangeNs, 71'428'571u);
  EXPECT_LT(r.rangeNs, 71'428'571u + 2 * 71'428'571u / efu::tools::TofHistogram::kFinePerBin);
  std::vector<uint64_t> expected(10, 0);
  for (const auto v : values) {
    ++expected[static_cast<uint64_t>(v) * 10 / r.rangeNs];
  }
  EXPECT_EQ(r.bins, expected);
  EXPECT_EQ(std::accumulate(r.bins.begin(), r.bins.end(), uint64_t{0}), values.size());
}

TEST(TofHistogram, SmallAndEmptyRanges) {
  efu::tools::TofHistogram empty(200, std::nullopt);
  EXPECT_EQ(empty.result().rangeNs, 200u);
  efu::tools::TofHistogram small(4, std::nullopt);
  small.add(3);
  small.add(0);
  EXPECT_EQ(small.result().rangeNs, 4u);
  EXPECT_EQ(small.result().bins, (std::vector<uint64_t>{1, 0, 0, 1}));
  EXPECT_THROW(efu::tools::TofHistogram(0, std::nullopt), std::invalid_argument);
  EXPECT_THROW(efu::tools::TofHistogram(4, 0), std::invalid_argument);
}

TEST(NiceTickStep, OneTwoFive) {
  EXPECT_EQ(efu::tools::niceTickStep(71'428'571, 8), 10'000'000u);
  EXPECT_EQ(efu::tools::niceTickStep(100, 5), 20u);
  EXPECT_EQ(efu::tools::niceTickStep(7, 5), 2u);
  EXPECT_EQ(efu::tools::niceTickStep(0, 5), 1u);
  EXPECT_EQ(efu::tools::niceTickStep(3000, 5), 1000u);
}

/// Height in rows of the bar of `bin` of a chart drawn with `layout`, measured up from the plot's
/// bottom in the middle of the bar until the first light pixel (background or grid).
uint32_t barHeight(const DecodedPng &png, const efu::tools::ChartLayout &layout, uint32_t bin) {
  const uint32_t x = layout.plotX0 + bin * layout.barWidth + layout.barWidth / 2;
  uint32_t rows = 0;
  for (uint32_t y = layout.plotY0 + layout.plotHeight; y-- > layout.plotY0;) {
    if (png.luminance(x, y) > 150.0) {
      break;
    }
    ++rows;
  }
  return rows;
}

TEST(RenderTofChart, BarsFollowTheCounts) {
  efu::tools::TofBins tof{{0, 10, 40, 20}, 4'000'000};
  efu::tools::ChartLayout layout;
  ScratchDir dir;
  const auto path = dir.path() / "tof.png";
  efu::tools::writePng(efu::tools::renderTofChart(tof, &layout), path.string());
  const auto png = readPng(path);
  ASSERT_EQ(png.width, layout.plotX0 + layout.plotWidth + 32);
  ASSERT_EQ(png.height, layout.plotY0 + layout.plotHeight + 44);
  EXPECT_EQ(layout.barWidth, 200u);
  EXPECT_EQ(layout.yMax, 40u);
  EXPECT_EQ(layout.xTickNs, 500'000u);
  EXPECT_EQ(barHeight(png, layout, 0), 0u);
  EXPECT_EQ(barHeight(png, layout, 2), layout.plotHeight);
  EXPECT_EQ(barHeight(png, layout, 1), layout.plotHeight / 4);
  EXPECT_EQ(barHeight(png, layout, 3), layout.plotHeight / 2);
}

// ---- --da00-png: the signal of da00 messages per source ------------------------------------

/// A cbm-style histogram message (frame_time edges in ns, signal, frame_total) through the da00
/// builder and efu-dump's decoder, as efu-dump sees it.
Json da00Message(const std::string &source, const std::vector<int32_t> &edges,
                 const std::vector<int32_t> &signal) {
  using efu::sdk::DataType;
  using efu::sdk::DataVariable;
  const auto bytes = [](const auto &v) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(v.data()),
                                    v.size() * sizeof(v[0]));
  };
  const std::vector<uint64_t> total{0};
  const std::string_view t[] = {"frame_time"};
  const std::string_view r[] = {"reference_time"};
  const int64_t edgeShape[] = {static_cast<int64_t>(edges.size())};
  const int64_t binShape[] = {static_cast<int64_t>(signal.size())};
  const int64_t one[] = {1};
  const DataVariable vars[] = {{"frame_time", "ns", t, edgeShape, DataType::Int32, bytes(edges)},
                               {"signal", "A", t, binShape, DataType::Int32, bytes(signal)},
                               {"frame_total", "counts", r, one, DataType::UInt64, bytes(total)}};
  flatbuffers::FlatBufferBuilder fbb;
  std::string error;
  auto j = efu::tools::decodeMessage(efu::serialize::buildDa00(fbb, source, 42, vars), error);
  EXPECT_TRUE(j.has_value()) << error;
  return j.value_or(Json());
}

TEST(Da00Histograms, SumsTheSignalPerSourceBinByBin) {
  efu::tools::Da00Histograms h;
  const std::vector<int32_t> edges{0, 100, 200, 300, 400};
  EXPECT_EQ(h.add(da00Message("cbm4", edges, {1, 0, 5, 2})), "");
  EXPECT_EQ(h.add(da00Message("cbm4", edges, {2, 0, 1, -7})), "");
  EXPECT_EQ(h.add(da00Message("cbm5", {0, 10, 20}, {9, 3})), "");
  // Another axis for the same source: not summed, counted.
  EXPECT_NE(h.add(da00Message("cbm4", {0, 10, 20}, {1, 1})).find("differs"), std::string::npos);
  ASSERT_EQ(h.series().size(), 2U);
  const auto &s = h.series().at("cbm4");
  EXPECT_EQ(s.sums, (std::vector<int64_t>{3, 0, 6, -5}));
  EXPECT_EQ(s.messages, 2U);
  EXPECT_EQ(s.skipped, 1U);
  EXPECT_EQ(s.axis, "frame_time");
  EXPECT_EQ(s.axisUnit, "ns");
  EXPECT_EQ(s.signalUnit, "A");
  EXPECT_EQ(s.edges, (std::vector<double>{0, 100, 200, 300, 400}));
  EXPECT_EQ(h.series().at("cbm5").sums, (std::vector<int64_t>{9, 3}));
  // What is not a histogram says why.
  Json noSignal = da00Message("x", edges, {1, 2, 3, 4});
  noSignal["data"][1]["name"] = "other";
  EXPECT_EQ(h.add(noSignal), "no variable 'signal'");
  Json noAxis = da00Message("x", edges, {1, 2, 3, 4});
  noAxis["data"][0]["name"] = "elsewhere";
  EXPECT_NE(h.add(noAxis).find("no variable 'frame_time'"), std::string::npos);
  Json floats = da00Message("x", edges, {1, 2, 3, 4});
  floats["data"][1]["data"][0] = 1.5;
  EXPECT_NE(h.add(floats).find("not integer"), std::string::npos);
  // Issue 37 item 14: a 2-D or 0-d signal was drawn as bars, a uint64 2^64 - 1 summed as -1.
  Json twoD = da00Message("x", edges, {1, 2, 3, 4});
  twoD["data"][1]["shape"] = Json::array({2, 2});
  EXPECT_NE(h.add(twoD).find("not a 1-D array"), std::string::npos);
  Json zeroD = da00Message("x", edges, {1, 2, 3, 4});
  zeroD["data"][1]["shape"] = Json::array();
  EXPECT_NE(h.add(zeroD).find("not a 1-D array"), std::string::npos);
  Json huge = da00Message("x", edges, {1, 2, 3, 4});
  huge["data"][1]["data"][2] = ~uint64_t{0};
  EXPECT_NE(h.add(huge).find("18446744073709551615, beyond the 2^63 - 1"), std::string::npos);
  EXPECT_EQ(h.series().size(), 2U);
}

// Issue 37 item 13: a 2 M-bin histogram took 2.3 GB and failed as a PNG; bins beyond
// kMaxDa00Bars are merged, da00BinsPerBar() neighbours per bar.
TEST(RenderDa00Chart, ManyBinsAreMergedIntoAtMostTheMostBars) {
  constexpr size_t kBins = 2'000'000;
  efu::tools::Da00Series series;
  series.source = "big";
  series.axisUnit = "ns";
  series.sums.assign(kBins, 1);
  series.sums[kBins - 1] = 1000;
  for (size_t i = 0; i <= kBins; ++i) {
    series.edges.push_back(static_cast<double>(i * 10));
  }
  const size_t perBar = efu::tools::da00BinsPerBar(kBins);
  EXPECT_EQ(perBar, 489U); // ceil(2e6 / 4096)
  efu::tools::ChartLayout layout;
  const auto image = efu::tools::renderDa00Chart(series, &layout);
  EXPECT_LT(image.width, 10'000u);
  // 4090 bars; the last holds the bins from 4089 * 489 on: 478 of 1 and one of 1000.
  EXPECT_EQ(layout.plotWidth / layout.barWidth, 4090U);
  EXPECT_GE(layout.yMax, 1478U);
  EXPECT_EQ(efu::tools::da00BinsPerBar(4096), 1U);
  EXPECT_EQ(efu::tools::da00BinsPerBar(4097), 2U);
}

// Issue 37 item 13: a source name of 250+ characters gave "File name too long".
TEST(Da00Histograms, ALongSourceNameGetsAShortFileNameOfItsOwn) {
  const std::string longA(300, 'a');
  const std::string longB = std::string(299, 'a') + "b";
  const std::string a = efu::tools::da00PngPath("/tmp/m-", longA);
  const std::string b = efu::tools::da00PngPath("/tmp/m-", longB);
  EXPECT_EQ(a.size(), std::string("/tmp/m-").size() + efu::tools::kMaxDa00NameBytes + 4);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.rfind("/tmp/m-" + std::string(183, 'a') + "-", 0), 0U) << a;
  EXPECT_EQ(efu::tools::da00PngPath("p", std::string(200, 'c')),
            "p" + std::string(200, 'c') + ".png");
}

TEST(Da00Histograms, FileNamesCannotLeaveThePrefix) {
  EXPECT_EQ(efu::tools::da00PngPath("/tmp/m-", "cbm4"), "/tmp/m-cbm4.png");
  EXPECT_EQ(efu::tools::da00PngPath("/tmp/m-", "../../etc/x"), "/tmp/m-.._.._etc_x.png");
  EXPECT_EQ(efu::tools::da00PngPath("p", ""), "p_.png");
  EXPECT_EQ(efu::tools::da00PngPath("p", "a b\n"), "p"
                                                   "a_b_.png");
}

TEST(RenderDa00Chart, BarsFollowTheSummedSignal) {
  efu::tools::Da00Histograms h;
  // 4 bins of 1 ms: like --tof-histogram, ticks every 0.5 ms; bin 0 empty, bin 3 negative.
  const std::vector<int32_t> edges{0, 1'000'000, 2'000'000, 3'000'000, 4'000'000};
  ASSERT_EQ(h.add(da00Message("cbm4", edges, {0, 4, 30, -2})), "");
  ASSERT_EQ(h.add(da00Message("cbm4", edges, {0, 6, 10, 0})), "");
  efu::tools::ChartLayout layout;
  ScratchDir dir;
  const auto path = dir.path() / "cbm4.png";
  efu::tools::writePng(efu::tools::renderDa00Chart(h.series().at("cbm4"), &layout), path.string());
  const auto png = readPng(path);
  ASSERT_EQ(png.width, layout.plotX0 + layout.plotWidth + 32);
  ASSERT_EQ(png.height, layout.plotY0 + layout.plotHeight + 44);
  EXPECT_GT(png.width, 800u);
  EXPECT_EQ(layout.barWidth * 4, layout.plotWidth);
  EXPECT_EQ(layout.yMax, 40u);
  EXPECT_EQ(layout.xTickNs, 500'000u);
  EXPECT_EQ(barHeight(png, layout, 0), 0u);
  EXPECT_EQ(barHeight(png, layout, 1), layout.plotHeight / 4); // 10 of 40
  EXPECT_EQ(barHeight(png, layout, 2), layout.plotHeight);     // 40
  EXPECT_EQ(barHeight(png, layout, 3), 0u);                    // -2: drawn as 0
  // An axis that is not 0, w, 2w ... ns still gets its bars.
  efu::tools::Da00Histograms other;
  Json m = da00Message("x", {5, 7, 20}, {3, 1});
  m["data"][0]["unit"] = "m";
  ASSERT_EQ(other.add(m), "");
  efu::tools::ChartLayout otherLayout;
  const auto image = efu::tools::renderDa00Chart(other.series().at("x"), &otherLayout);
  EXPECT_EQ(otherLayout.yMax, 3u);
  EXPECT_EQ(otherLayout.barWidth * 2, otherLayout.plotWidth);
  EXPECT_THROW(efu::tools::renderDa00Chart(efu::tools::Da00Series{}), efu::tools::ImageError);
}

} // namespace
