// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: efu-dump's decoders and output forms. One input = one Kafka message payload
// from any topic: flatbuffers verification, decoding to JSON (x5f2 status_json parsed with a
// depth bound) and both output forms. Nothing may crash, and the text and JSON lines must stay
// single lines free of raw control characters.
#include "efu/tools/dump/Decode.h"
#include "efu/tools/dump/Format.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>

namespace {

void expectTerminalSafe(const std::string &line) {
  for (const char c : line) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      std::abort();
    }
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  const auto message = efu::tools::decodeMessage(std::span<const uint8_t>(data, size), error);
  if (!message) {
    return 0;
  }
  expectTerminalSafe(efu::tools::formatText(*message));
  expectTerminalSafe(efu::tools::formatJsonLine(*message));
  return 0;
}
