// SPDX-License-Identifier: BSD-2-Clause
// libFuzzer target: the control protocol's parser. One input = request lines of one connection
// (split at '\n', as the server does); every reply must be one line, and no request may stop the
// daemon unless it is exactly "EXIT" after a good "AUTH".
#include "efu/control/ControlProtocol.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static efu::Stats &stats = []() -> efu::Stats & {
    auto *s = new efu::Stats;
    s->add("receive.packets").set(1);
    s->add("parser.essheader.ok").set(-2);
    return *s;
  }();
  static bool exitRequested = false;
  static efu::ControlProtocol protocol(stats, [] {
    efu::ControlInfo info;
    info.version = "0.1.0";
    info.detectorInfo = "fuzz";
    info.runtimeStats = [] { return std::string("{\"rx\":{}}"); };
    info.requestExit = [] { exitRequested = true; };
    info.secret = "fuzz-secret";
    return info;
  }());
  efu::ControlSession session;
  std::string_view input(reinterpret_cast<const char *>(data), size);
  while (!input.empty() && !session.closeAfterReply) {
    const size_t newline = input.find('\n');
    const std::string_view line = input.substr(0, newline);
    input = newline == std::string_view::npos ? std::string_view{} : input.substr(newline + 1);
    exitRequested = false;
    const std::string reply = protocol.handle(line, session);
    if (reply.find_first_of("\r\n") != std::string::npos) {
      std::abort(); // a reply is exactly one line
    }
    if (exitRequested && !session.authenticated) {
      std::abort(); // EXIT without the secret
    }
  }
  return 0;
}
