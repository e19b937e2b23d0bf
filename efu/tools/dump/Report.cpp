// SPDX-License-Identifier: BSD-2-Clause
// efu-dump --report: a module's report read from efu's control port (REPORT_GET), printed, and
// its log-binned histograms drawn as PNG bar charts.
#include "efu/tools/dump/Report.h"

#include "common/net/ControlClient.h"
#include "common/stats/LogHistogram.h"
#include "common/system/BoundedJson.h"
#include "common/system/Printable.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string_view>

namespace efu::tools {
namespace {

bool nonNegativeInteger(const nlohmann::json &value) {
  return value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0);
}

bool looksLikeHistogram(const nlohmann::json &value) {
  return value.is_object() && value.contains("bins") && value.contains("count");
}

/// The lower bound of the bin after `lower`'s (its exclusive upper end).
uint64_t upperBound(uint64_t lower) {
  const uint32_t bin = LogHistogram::binOf(lower);
  return bin + 1 < LogHistogram::kBins ? LogHistogram::lowerBound(bin + 1) : UINT64_MAX;
}

/// LogHistogram::percentile of the report's bins (lower bounds are LogHistogram's, checked).
uint64_t percentile(const ReportHistogram &h, double q) {
  LogHistogram histogram;
  for (const auto &[lower, n] : h.bins) {
    histogram.add(lower, n);
  }
  return histogram.percentile(q);
}

std::string valueText(uint64_t value, const std::string &unit) {
  if (unit != "ns") {
    return std::to_string(value);
  }
  if (value < 1000) {
    return fmt::format("{} ns", value);
  }
  return value < 1'000'000 ? fmt::format("{:.2f} us", static_cast<double>(value) / 1e3)
                           : fmt::format("{:.2f} ms", static_cast<double>(value) / 1e6);
}

} // namespace

std::vector<ReportHistogram> histogramsOf(const nlohmann::json &report) {
  std::vector<ReportHistogram> out;
  if (!report.is_object()) {
    return out;
  }
  for (const auto &item : report.items()) {
    // (Not a structured binding: clang before 16 cannot capture one in a lambda.)
    const std::string &key = item.key();
    const nlohmann::json &value = item.value();
    if (!looksLikeHistogram(value)) {
      continue;
    }
    const auto bad = [&key](const std::string &why) {
      return std::invalid_argument("report member '" + key + "': " + why);
    };
    ReportHistogram h;
    h.name = key;
    h.unit = value.value("unit", std::string());
    if (!nonNegativeInteger(value["count"]) ||
        (value.contains("max") && !nonNegativeInteger(value["max"]))) {
      throw bad("count and max must be non-negative integers");
    }
    h.count = value["count"].get<uint64_t>();
    h.max = value.value("max", uint64_t{0});
    if (!value["bins"].is_array()) {
      throw bad("bins is not an array");
    }
    uint64_t total = 0;
    for (const auto &bin : value["bins"]) {
      if (!bin.is_array() || bin.size() != 2 || !nonNegativeInteger(bin[0]) ||
          !nonNegativeInteger(bin[1])) {
        throw bad("a bin is not [lower bound, count]: " + bin.dump());
      }
      const auto lower = bin[0].get<uint64_t>();
      if (LogHistogram::lowerBound(LogHistogram::binOf(lower)) != lower) {
        throw bad(fmt::format("{} is not the lower bound of a log bin", lower));
      }
      if (!h.bins.empty() && lower <= h.bins.back().first) {
        throw bad("bins are not in ascending order");
      }
      h.bins.emplace_back(lower, bin[1].get<uint64_t>());
      total += h.bins.back().second;
    }
    if (total != h.count) {
      throw bad(fmt::format("the bins hold {}, count says {}", total, h.count));
    }
    out.push_back(std::move(h));
  }
  return out;
}

std::string histogramText(const ReportHistogram &h) {
  std::string out = fmt::format("{} ({}): count {}, max {}, p50 {}, p90 {}, p99 {}\n", h.name,
                                h.unit.empty() ? "values" : h.unit, h.count,
                                valueText(h.max, h.unit), valueText(percentile(h, 0.5), h.unit),
                                valueText(percentile(h, 0.9), h.unit),
                                valueText(percentile(h, 0.99), h.unit));
  uint64_t largest = 0;
  for (const auto &bin : h.bins) {
    largest = std::max(largest, bin.second);
  }
  for (const auto &[lower, n] : h.bins) {
    const uint64_t upper = upperBound(lower);
    const std::string range =
        upper == lower + 1 ? valueText(lower, h.unit)
                           : valueText(lower, h.unit) + " .. <" + valueText(upper, h.unit);
    const auto barLength = static_cast<size_t>(
        largest == 0 ? 0 : (n * 40 + largest - 1) / largest); // a non-empty bin shows a '#'
    out += fmt::format("  {:>26} {:>12} {:>6.2f} % {}\n", range, n,
                       100.0 * static_cast<double>(n) / static_cast<double>(h.count),
                       std::string(barLength, '#'));
  }
  return out;
}

RgbImage renderHistogramChart(const ReportHistogram &h) {
  if (h.bins.empty()) {
    throw ImageError("histogram " + h.name + " is empty: nothing to draw");
  }
  const uint32_t first = LogHistogram::binOf(h.bins.front().first);
  const uint32_t last = LogHistogram::binOf(h.bins.back().first);
  std::vector<uint64_t> bars(last - first + 1, 0);
  for (const auto &[lower, n] : h.bins) {
    bars[LogHistogram::binOf(lower) - first] = n;
  }
  // Ticks at the powers of two (a bin starting at 2^k), every step-th, at most about 10.
  std::vector<uint32_t> powers;
  for (uint32_t bin = first; bin <= last + 1 && bin < LogHistogram::kBins; ++bin) {
    const uint64_t lower = LogHistogram::lowerBound(bin);
    if (lower != 0 && (lower & (lower - 1)) == 0) {
      powers.push_back(bin);
    }
  }
  const size_t step = std::max<size_t>(1, (powers.size() + 9) / 10);
  const bool ns = h.unit == "ns";
  std::vector<XTick> ticks;
  for (size_t i = 0; i < powers.size(); i += step) {
    const uint64_t lower = LogHistogram::lowerBound(powers[i]);
    const double us = static_cast<double>(lower) / 1e3;
    const std::string label =
        ns ? fmt::format("{:.{}f}", us, us < 1 ? 3 : us < 10 ? 2 : us < 100 ? 1 : 0)
           : (lower >= 10'000 ? fmt::format("{}k", lower / 1000) : std::to_string(lower));
    ticks.push_back({static_cast<double>(powers[i] - first) / static_cast<double>(bars.size()),
                     label});
  }
  return renderBarChart(bars, ticks, ns ? "us" : "");
}

nlohmann::json fetchReport(const std::string &address, uint16_t port, const std::string &name) {
  const std::string reply = controlExchange(address, port, {"REPORT_GET " + name}).front();
  const std::string prefix = "REPORT_GET " + name + ' ';
  if (reply.rfind(prefix, 0) != 0) {
    // The reply is shown as far as a message should: control bytes escaped, at most 200 bytes.
    const std::string shown = printable(reply.size() <= 200 ? reply : reply.substr(0, 197) + "...");
    throw std::runtime_error("efu at " + address + ":" + std::to_string(port) + " has no report '" +
                             printable(name) + "' (it answered '" + shown +
                             "'); the reports of each module are listed in docs/control.md");
  }
  try {
    // Bounded like every JSON we read: a reply nested 500 000 levels deep is refused, not
    // recursed on (it crashed efu-dump).
    return parseJson(std::string_view(reply).substr(prefix.size()));
  } catch (const JsonError &e) {
    throw std::runtime_error("report '" + printable(name) + "' is not usable JSON: " + e.what());
  }
}

void showReport(const std::string &address, uint16_t port, const std::string &name,
                const std::string &pngPrefix) {
  const nlohmann::json report = fetchReport(address, port, name);
  const auto histograms = histogramsOf(report);
  for (const auto &histogram : histograms) {
    std::fputs(histogramText(histogram).c_str(), stdout);
  }
  if (report.is_object()) {
    for (const auto &item : report.items()) {
      const std::string &key = item.key();
      const nlohmann::json &value = item.value();
      if (std::none_of(histograms.begin(), histograms.end(),
                       [&key](const auto &h) { return h.name == key; })) {
        std::printf("%s: %s\n", key.c_str(), value.dump().c_str());
      }
    }
  } else {
    std::printf("%s\n", report.dump().c_str());
  }
  std::fflush(stdout);
  if (pngPrefix.empty()) {
    return;
  }
  if (histograms.empty()) {
    spdlog::warn("report {} holds no histograms: no --report-png charts", name);
  }
  for (const auto &histogram : histograms) {
    if (histogram.bins.empty()) {
      spdlog::info("{} is empty: no chart", histogram.name);
      continue;
    }
    const std::string path = pngPrefix + histogram.name + ".png";
    writePng(renderHistogramChart(histogram), path);
    spdlog::info("wrote {} ({} values)", path, histogram.count);
  }
}

} // namespace efu::tools
