// SPDX-License-Identifier: BSD-2-Clause
// efu-dump pictures: da00 signal summed per source, and its bar chart.
#include "efu/tools/dump/Da00Chart.h"

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace efu::tools {
namespace {

const nlohmann::json *variable(const nlohmann::json &vars, const std::string &name) {
  for (const auto &v : vars) {
    if (v.is_object() && v.value("name", nlohmann::json()) == name) {
      return &v;
    }
  }
  return nullptr;
}

std::string stringOr(const nlohmann::json &v, const char *key) {
  const auto it = v.find(key);
  return it != v.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// A label of the built-in font (digits and '.') for a non-negative value; "" otherwise.
std::string valueLabel(double value) {
  if (!(value >= 0) || value > 1e15) {
    return {};
  }
  char text[32];
  if (value == std::floor(value)) {
    std::snprintf(text, sizeof(text), "%.0f", value);
  } else {
    std::snprintf(text, sizeof(text), "%.3g", value);
  }
  const std::string out = text;
  return out.find_first_not_of("0123456789.") == std::string::npos ? out : std::string();
}

} // namespace

std::string Da00Histograms::add(const nlohmann::json &da00) {
  const std::string source = stringOr(da00, "source_name");
  const auto vars = da00.find("data");
  if (vars == da00.end() || !vars->is_array()) {
    return "no variables";
  }
  const nlohmann::json *signal = variable(*vars, "signal");
  if (signal == nullptr) {
    return "no variable 'signal'";
  }
  const auto &axes = signal->value("axes", nlohmann::json::array());
  const auto &values = signal->value("data", nlohmann::json::array());
  const auto &shape = signal->value("shape", nlohmann::json());
  if (!axes.is_array() || axes.size() != 1 || !axes[0].is_string() || !values.is_array() ||
      values.empty() || !shape.is_array() || shape.size() != 1 || !shape[0].is_number_integer() ||
      shape[0].get<int64_t>() != static_cast<int64_t>(values.size())) {
    return "'signal' is not a 1-D array with one named axis (shape " + shape.dump() + ")";
  }
  const std::string axisName = axes[0].get<std::string>();
  const nlohmann::json *axis = variable(*vars, axisName);
  const auto &coords = axis == nullptr ? nlohmann::json() : axis->value("data", nlohmann::json());
  if (!coords.is_array() ||
      (coords.size() != values.size() + 1 && coords.size() != values.size())) {
    return "no variable '" + axisName + "' of " + std::to_string(values.size() + 1) + " edges or " +
           std::to_string(values.size()) + " centres";
  }
  std::vector<double> edges;
  for (const auto &c : coords) {
    if (!c.is_number()) {
      return "'" + axisName + "' is not numeric";
    }
    edges.push_back(c.get<double>());
  }
  for (const auto &v : values) {
    if (!v.is_number_integer()) {
      return "'signal' is not integer (efu-dump sums integer histograms)";
    }
    if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t{INT64_MAX}) {
      return "'signal' holds " + v.dump() + ", beyond the 2^63 - 1 efu-dump sums to";
    }
  }
  auto [it, first] = series_.try_emplace(source);
  Da00Series &s = it->second;
  if (first) {
    s.source = source;
    s.axis = axisName;
    s.axisUnit = stringOr(*axis, "unit");
    s.signalUnit = stringOr(*signal, "unit");
    s.edges = edges;
    s.sums.assign(values.size(), 0);
  } else if (s.axis != axisName || s.edges != edges) {
    ++s.skipped;
    return "'" + axisName + "' differs from the first message of '" + source + "'";
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t v = values[i].is_number_unsigned()
                          ? static_cast<int64_t>(values[i].get<uint64_t>())
                          : values[i].get<int64_t>();
    if (__builtin_add_overflow(s.sums[i], v, &s.sums[i])) { // held at the end of the range
      s.sums[i] = v > 0 ? INT64_MAX : INT64_MIN;
    }
  }
  ++s.messages;
  return {};
}

size_t da00BinsPerBar(size_t bins) noexcept {
  return bins <= kMaxDa00Bars ? 1 : (bins + kMaxDa00Bars - 1) / kMaxDa00Bars;
}

RgbImage renderDa00Chart(const Da00Series &series, ChartLayout *layout) {
  if (series.sums.empty()) {
    throw ImageError("da00 source '" + series.source + "' has no bins");
  }
  // At most kMaxDa00Bars bars: neighbouring bins are merged (issue 37: 2 M bins made a chart
  // 2 M pixels wide, 2.3 GB of memory and a PNG no encoder takes).
  const size_t perBar = da00BinsPerBar(series.sums.size());
  std::vector<uint64_t> bars((series.sums.size() + perBar - 1) / perBar, 0);
  for (size_t i = 0; i < series.sums.size(); ++i) {
    const int64_t sum = series.sums[i];
    bars[i / perBar] += sum > 0 ? static_cast<uint64_t>(sum) : 0;
  }
  // Edges 0, w, 2w, ... in ns (the cbm module's frame_time): a time axis like --tof-histogram's,
  // when the merged bars are whole bins of it too.
  const auto &e = series.edges;
  bool uniformNs = series.axisUnit == "ns" && e.size() == series.sums.size() + 1 && e[0] == 0 &&
                   e.back() >= 1 && e.back() <= 1e15 && series.sums.size() % perBar == 0;
  for (size_t i = 1; uniformNs && i < e.size(); ++i) {
    uniformNs = e[i] == std::floor(e[i]) && e[i] - e[i - 1] == e[1] - e[0] && e[1] > 0;
  }
  if (uniformNs) {
    return renderTofChart(TofBins{bars, static_cast<uint64_t>(e.back())}, layout);
  }
  std::vector<XTick> ticks;
  for (const auto &[position, value] : {std::pair{0.0, e.front()}, std::pair{1.0, e.back()}}) {
    std::string label = valueLabel(value);
    if (!label.empty()) {
      ticks.push_back({position, std::move(label)});
    }
  }
  return renderBarChart(bars, ticks, "", layout);
}

std::string da00PngPath(const std::string &prefix, const std::string &source) {
  std::string name = source.empty() ? "_" : source;
  for (char &c : name) {
    const bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
    c = keep ? c : '_';
  }
  // A file name has at most 255 bytes: a longer source keeps its start and gets a hash of the
  // whole name (FNV-1a, 64 bits), so two long names stay two files.
  if (name.size() > kMaxDa00NameBytes) {
    uint64_t hash = 0xcbf29ce484222325ULL;
    for (const char c : source) {
      hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    }
    char suffix[24];
    std::snprintf(suffix, sizeof(suffix), "-%016llx", static_cast<unsigned long long>(hash));
    name = name.substr(0, kMaxDa00NameBytes - 17) + suffix;
  }
  return prefix + name + ".png";
}

} // namespace efu::tools
