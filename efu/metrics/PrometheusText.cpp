// SPDX-License-Identifier: BSD-2-Clause
// The counter registry in the Prometheus text exposition format (version 0.0.4).
#include "efu/metrics/PrometheusText.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace efu::metrics {
namespace {

bool allDigits(std::string_view text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string withoutLeadingZeros(std::string_view digits) {
  const size_t first = digits.find_first_not_of('0');
  return first == std::string_view::npos ? std::string("0") : std::string(digits.substr(first));
}

/// One name segment with every character outside [a-zA-Z0-9_] as '_'.
std::string sanitized(std::string_view segment) {
  std::string out(segment);
  for (char &c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!ok) {
      c = '_';
    }
  }
  return out;
}

/// HELP text escaping: backslash and newline.
std::string escapeHelp(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

/// `value` units of 1/perSecond s in seconds, exact and shortest: 1500 us -> "0.0015".
std::string inSeconds(int64_t value, uint64_t perSecond) {
  const uint64_t magnitude =
      value < 0 ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  std::string out;
  if (value < 0) {
    out.push_back('-');
  }
  out.append(std::to_string(magnitude / perSecond));
  const uint64_t fraction = magnitude % perSecond;
  if (fraction != 0) {
    const std::string padded = std::to_string(fraction + perSecond); // "1" + zero-padded digits
    out.push_back('.');
    out.append(padded, 1, padded.find_last_not_of('0'));
  }
  return out;
}

struct Family {
  std::string metric;
  CounterKind kind;
  std::vector<std::string> patterns;
  std::string samples;
};

} // namespace

Series seriesOf(std::string_view counterName, CounterKind kind) {
  std::vector<std::string_view> segments;
  for (size_t start = 0;;) {
    const size_t dot = counterName.find('.', start);
    segments.push_back(counterName.substr(start, dot - start));
    if (dot == std::string_view::npos) {
      break;
    }
    start = dot + 1;
  }
  Series series;
  series.metric = "efu";
  for (size_t i = 0; i < segments.size(); ++i) {
    const std::string_view segment = segments[i];
    std::string part;
    if (series.queue.empty() && segment.size() > 1 && segment.front() == 'q' &&
        allDigits(segment.substr(1))) {
      series.queue = withoutLeadingZeros(segment.substr(1));
      part = "q<queue>";
    } else if (series.outputQueue.empty() && segment == "oq" && i + 1 < segments.size() &&
               allDigits(segments[i + 1])) {
      series.outputQueue = withoutLeadingZeros(segments[++i]);
      part = "oq.<output_queue>";
    } else {
      series.metric += '_';
      series.metric += sanitized(segment);
      part = segment;
    }
    if (!series.pattern.empty()) {
      series.pattern += '.';
    }
    series.pattern += part;
  }
  struct TimeUnit {
    std::string_view suffix;
    uint64_t perSecond;
  };
  for (const TimeUnit unit : {TimeUnit{"_us", 1000000}, TimeUnit{"_ms", 1000},
                              TimeUnit{"_ns", 1000000000}}) {
    if (series.metric.ends_with(unit.suffix)) {
      series.metric.resize(series.metric.size() - unit.suffix.size());
      series.metric += "_seconds";
      series.unitsPerSecond = unit.perSecond;
      break;
    }
  }
  if (kind == CounterKind::Counter) {
    series.metric += "_total";
  }
  return series;
}

std::string escapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string exposition(const std::vector<Stats::Entry> &entries, const CommonLabels &labels) {
  const std::string common = "instrument=\"" + escapeLabelValue(labels.instrument) +
                             "\",region=\"" + escapeLabelValue(labels.region) + "\"";
  std::vector<Family> families;
  std::unordered_map<std::string, size_t> familyIndex;
  std::set<std::string> seen;
  for (const Stats::Entry &entry : entries) {
    const Series series = seriesOf(entry.name, entry.kind);
    std::string sample = series.metric + '{' + common;
    if (!series.queue.empty()) {
      sample += ",queue=\"" + series.queue + '"';
    }
    if (!series.outputQueue.empty()) {
      sample += ",output_queue=\"" + series.outputQueue + '"';
    }
    sample += '}';
    const auto [found, added] = familyIndex.try_emplace(series.metric, families.size());
    if (added) {
      families.push_back({series.metric, entry.kind, {}, {}});
    }
    Family &family = families[found->second];
    if (family.kind != entry.kind || !seen.insert(sample).second) {
      continue;
    }
    if (std::find(family.patterns.begin(), family.patterns.end(), series.pattern) ==
        family.patterns.end()) {
      family.patterns.push_back(series.pattern);
    }
    family.samples += sample;
    family.samples += ' ';
    family.samples += series.unitsPerSecond == 0 ? std::to_string(entry.value)
                                                 : inSeconds(entry.value, series.unitsPerSecond);
    family.samples += '\n';
  }
  std::string out;
  for (const Family &family : families) {
    const bool gauge = family.kind == CounterKind::Gauge;
    std::string help = gauge ? "efu gauge " : "efu counter ";
    for (size_t i = 0; i < family.patterns.size(); ++i) {
      help += i == 0 ? "" : ", ";
      help += family.patterns[i];
    }
    out += "# HELP " + family.metric + ' ' + escapeHelp(help) + '\n';
    out += "# TYPE " + family.metric + (gauge ? " gauge\n" : " counter\n");
    out += family.samples;
  }
  return out;
}

} // namespace efu::metrics
