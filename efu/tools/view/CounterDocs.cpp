// SPDX-License-Identifier: BSD-2-Clause
// efu-view's knowledge of efu's counters: docs/counters.md's rows (embedded at build time) and
// which counters count a loss.
#include "efu/tools/view/ViewState.h"

#include "efu/tools/view/EmbeddedFiles.h"

#include <algorithm>
#include <array>

namespace efu::tools::view {

namespace {

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

/// True when `name` matches `pattern` from their starts; `<...>` in the pattern stands for one or
/// more characters of one dotted segment.
bool matches(std::string_view pattern, std::string_view name) {
  while (!pattern.empty()) {
    if (pattern.front() == '<') {
      const auto close = pattern.find('>');
      if (close == std::string_view::npos) {
        return false;
      }
      const std::string_view rest = pattern.substr(close + 1);
      // The placeholder takes 1..k characters before the next '.', shortest first.
      for (size_t taken = 1; taken <= name.size() && name[taken - 1] != '.'; ++taken) {
        if (matches(rest, name.substr(taken))) {
          return true;
        }
      }
      return false;
    }
    if (name.empty() || pattern.front() != name.front()) {
      return false;
    }
    pattern.remove_prefix(1);
    name.remove_prefix(1);
  }
  return name.empty();
}

} // namespace

CounterDocs CounterDocs::parse(std::string_view markdown) {
  CounterDocs docs;
  while (!markdown.empty()) {
    const auto end = markdown.find('\n');
    const std::string_view line = trim(markdown.substr(0, end));
    markdown.remove_prefix(end == std::string_view::npos ? markdown.size() : end + 1);
    if (line.size() < 2 || line.front() != '|' || line.back() != '|') {
      continue;
    }
    std::vector<std::string_view> cells;
    std::string_view rest = line.substr(1, line.size() - 2);
    while (true) {
      const auto bar = rest.find('|');
      cells.push_back(trim(rest.substr(0, bar)));
      if (bar == std::string_view::npos) {
        break;
      }
      rest.remove_prefix(bar + 1);
    }
    const std::string_view name = cells.front();
    // A counter's row: `name` alone in the first cell (no spaces), then kind, unit, meaning.
    if (cells.size() < 4 || name.size() < 3 || name.front() != '`' || name.back() != '`' ||
        name.find_first_of(" `", 1) != name.size() - 1) {
      continue;
    }
    std::string meaning(cells[3]);
    for (size_t i = 4; i < cells.size(); ++i) { // a '|' inside the meaning
      meaning += " | ";
      meaning += cells[i];
    }
    docs.rows_.push_back(CounterDoc{std::string(name.substr(1, name.size() - 2)),
                                    std::string(cells[1]), std::string(cells[2]),
                                    std::move(meaning)});
  }
  return docs;
}

const CounterDocs &CounterDocs::embedded() {
  static const CounterDocs docs = [] {
    const auto files = counterDocsFile();
    return parse(files.empty() ? std::string_view() : files.front().bytes);
  }();
  return docs;
}

const CounterDoc *CounterDocs::find(std::string_view name) const {
  // A row without placeholders first: `geometry.pixel_errors` never falls to a pattern.
  for (const auto &row : rows_) {
    if (row.pattern == name) {
      return &row;
    }
  }
  for (const auto &row : rows_) {
    if (row.pattern.find('<') != std::string::npos && matches(row.pattern, name)) {
      return &row;
    }
  }
  return nullptr;
}

bool isLossCounter(std::string_view name) {
  // The control and metrics servers' counters describe their clients (bad requests, wrong
  // secrets, slow readers), not efu's data: never red.
  if (name.starts_with("control.") || name.starts_with("metrics.")) {
    return false;
  }
  // Named like a loss but not one (docs/counters.md): heartbeats, an ADC threshold cut, an event
  // the split could not save (an event-formation cut like the spans).
  static constexpr std::array<std::string_view, 3> kNotLosses = {
      "parser.readout.errors.no_data", "geometry.adc_errors", "cluster.split_discarded"};
  if (std::find(kNotLosses.begin(), kNotLosses.end(), name) != kNotLosses.end()) {
    return false;
  }
  // Losses whose names say only which check refused: a time of flight beyond the maximum or
  // before the previous pulse, amplitudes and positions outside what the geometry takes, a
  // readout too far from its pulse, and the trex builders' bounds that damage events (not their
  // restarts, time_back and pulse_back: what waited is formed).
  static constexpr std::array<std::string_view, 12> kLosses = {"events.timestamp.tof.high",
                                                               "events.timestamp.prevtof.negative",
                                                               "events.timestamp.prevtof.high",
                                                               "geometry.ampl_low",
                                                               "geometry.ampl_zero",
                                                               "geometry.ampl_high",
                                                               "geometry.outside_tube",
                                                               "readouts.time_far",
                                                               "cluster.bound.stale",
                                                               "cluster.bound.full",
                                                               "cluster.bound.open_hits",
                                                               "cluster.bound.event_hits"};
  if (std::find(kLosses.begin(), kLosses.end(), name) != kLosses.end()) {
    return true;
  }
  // Otherwise a word of the name says it: dropped, refused, failed, lost, invalid, errors, ...
  // (words are separated by '.' and '_'; "miss" is timepix3's skipped trigger counters).
  static constexpr std::array<std::string_view, 15> kLossWords = {
      "dropped", "unread", "truncated", "error",     "errors",  "failed", "failures", "refused",
      "lost",    "loss",   "invalid",   "discarded", "skipped", "miss",   "rejected"};
  size_t start = 0;
  while (start <= name.size()) {
    auto end = name.find_first_of("._", start);
    if (end == std::string_view::npos) {
      end = name.size();
    }
    const std::string_view word = name.substr(start, end - start);
    if (std::find(kLossWords.begin(), kLossWords.end(), word) != kLossWords.end()) {
      return true;
    }
    start = end + 1;
  }
  return false;
}

} // namespace efu::tools::view
