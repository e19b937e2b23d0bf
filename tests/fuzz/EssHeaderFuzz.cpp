// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: the ESS readout header check every module runs first, and the per-queue
// sequence accounting behind it. Any byte string must give one HeaderError; an accepted header
// must describe a payload inside the input.
#include "common/readout/EssReadout.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static efu::readout::QueueSequences sequences;
  efu::readout::DetectorTypes all;
  for (unsigned type = 0; type < 256; ++type) {
    all.add(static_cast<uint8_t>(type));
  }
  efu::readout::EssHeader header;
  const auto error = efu::readout::validateHeader(data, size, all, header);
  if (error != efu::readout::HeaderError::Ok) {
    return 0;
  }
  const uint8_t *end = data + size;
  if (header.payloadBytes > size ||
      (header.payloadBytes > 0 &&
       (header.payload < data || header.payload + header.payloadBytes != end))) {
    std::abort(); // an accepted header must describe a payload inside the datagram
  }
  (void)sequences.add(header.outputQueue, header.seqNum);
  return 0;
}
