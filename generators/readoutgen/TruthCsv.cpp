// SPDX-License-Identifier: BSD-2-Clause
#include "generators/readoutgen/TruthCsv.h"

#include <stdexcept>

namespace efu::readoutgen {

TruthCsvWriter::TruthCsvWriter(const std::string &path, bool namedSources)
    : path_(path), named_(namedSources), file_(std::fopen(path.c_str(), "w")) {
  if (file_ == nullptr) {
    throw std::runtime_error("cannot write --truth file '" + path_ + "'");
  }
  std::fputs(named_ ? "pulse_time_ns,tof_ns,pixel_id,source\n" : "pulse_time_ns,tof_ns,pixel_id\n",
             file_);
}

TruthCsvWriter::~TruthCsvWriter() {
  // Only on the way out of a failed run: what was written is kept, its errors no longer matter.
  if (file_ != nullptr) {
    std::fclose(file_);
  }
}

void TruthCsvWriter::write(const TruthEvent &e) {
  if (named_) {
    std::fprintf(file_, "%lld,%lld,%d,%.*s\n", static_cast<long long>(e.pulseTimeNs),
                 static_cast<long long>(e.tofNs), e.pixelId, static_cast<int>(e.source.size()),
                 e.source.data());
  } else {
    std::fprintf(file_, "%lld,%lld,%d\n", static_cast<long long>(e.pulseTimeNs),
                 static_cast<long long>(e.tofNs), e.pixelId);
  }
}

void TruthCsvWriter::close() {
  if (file_ == nullptr) {
    return;
  }
  std::FILE *file = file_;
  file_ = nullptr;
  if (std::fclose(file) != 0) {
    throw std::runtime_error("error writing --truth file '" + path_ + "'");
  }
}

} // namespace efu::readoutgen
