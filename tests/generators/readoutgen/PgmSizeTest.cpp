// SPDX-License-Identifier: BSD-2-Clause
// readoutgen --mask: a PGM header's claimed size is checked against the bytes the file has
// before anything is allocated. This test program refuses any allocation over 64 MiB (its own
// operator new), so a parser that allocates what a header claims fails here with bad_alloc.
#include "generators/readoutgen/Pattern.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <new>
#include <string>

namespace {
constexpr size_t kLargestAllocation = size_t{64} << 20;
} // namespace

void *operator new(size_t size) {
  if (size <= kLargestAllocation) {
    if (void *p = std::malloc(size == 0 ? 1 : size)) {
      return p;
    }
  }
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }

namespace efu::readoutgen {
namespace {

/// The message of the runtime_error parsePgm throws ("" when it throws nothing or else).
std::string parseError(const std::string &bytes, const std::string &name) {
  try {
    (void)parsePgm(bytes, name);
  } catch (const std::runtime_error &e) {
    return e.what();
  }
  return {};
}

TEST(PgmSize, AHeaderClaimingMoreThanTheFileHasIsRefusedBeforeAllocating) {
  // 20000 x 20000 8-bit: 400 MB claimed (the old parser allocated 800 MB first); one byte given.
  const std::string p5 = std::string("P5\n20000 20000\n255\n") + '\x01';
  const std::string error = parseError(p5, "claims-400MB.pgm");
  EXPECT_NE(error.find("claims-400MB.pgm"), std::string::npos) << error;
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
  EXPECT_NE(error.find("20000 x 20000"), std::string::npos) << error;
  // 65536 x 65536 16-bit (8 GiB): the same message, never std::bad_alloc without the name.
  const std::string huge = std::string("P5 65536 65536 65535\n") + '\x00' + '\x01';
  const std::string hugeError = parseError(huge, "claims-8GiB.pgm");
  EXPECT_NE(hugeError.find("claims-8GiB.pgm"), std::string::npos) << hugeError;
  EXPECT_NE(hugeError.find("65536 x 65536"), std::string::npos) << hugeError;
  // P2 (text): at least a digit and a space per pixel.
  const std::string text = parseError("P2 30000 30000 255\n1 2 3\n", "text.pgm");
  EXPECT_NE(text.find("text.pgm"), std::string::npos) << text;
  EXPECT_NE(text.find("truncated"), std::string::npos) << text;
}

TEST(PgmSize, ReadPgmNamesTheFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("readoutgen-huge-" + std::to_string(::getpid()) + ".pgm");
  {
    std::ofstream out(path, std::ios::binary);
    out << "P5 65536 65536 255\n" << '\x07';
  }
  try {
    (void)readPgm(path.string());
    ADD_FAILURE() << "a 1-byte mask claiming 65536 x 65536 was accepted";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
}

TEST(PgmSize, AWholeImageStillParses) {
  // Exactly as many bytes as claimed: accepted (the check is not off by one).
  const std::string p5 = std::string("P5 2 2 255\n") + '\x00' + '\xff' + '\x10' + '\x20';
  EXPECT_EQ(parsePgm(p5, "ok.pgm").pixels, (std::vector<uint16_t>{0, 255, 16, 32}));
  EXPECT_EQ(parsePgm("P2 3 1 9\n1 2 3", "ok.pgm").pixels, (std::vector<uint16_t>{1, 2, 3}));
}

} // namespace
} // namespace efu::readoutgen
