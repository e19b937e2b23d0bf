// SPDX-License-Identifier: BSD-2-Clause
// --truth: the ground truth of every event sent, as CSV.
#pragma once

#include "generators/readoutgen/Generator.h"

#include <cstdio>
#include <string>

namespace efu::readoutgen {

/// Writes "pulse_time_ns,tof_ns,pixel_id" lines, with a fourth column "source" when the source
/// names its outputs (cbm: one per monitor). Throws std::runtime_error naming the file when it
/// cannot be created or written.
class TruthCsvWriter {
public:
  TruthCsvWriter(const std::string &path, bool namedSources);
  ~TruthCsvWriter();
  TruthCsvWriter(const TruthCsvWriter &) = delete;
  TruthCsvWriter &operator=(const TruthCsvWriter &) = delete;

  void write(const TruthEvent &e);
  /// Closes the file; a write that failed on the way is reported here.
  void close();

private:
  std::string path_;
  bool named_;
  std::FILE *file_;
};

} // namespace efu::readoutgen
