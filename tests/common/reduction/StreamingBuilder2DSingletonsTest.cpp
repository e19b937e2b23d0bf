// SPDX-License-Identifier: BSD-2-Clause
// StreamingBuilder2D on streams shaped like TREX's and LET's (nearly every hit its own time
// cluster), against the builder as it was before issue 39's changes
// (StreamingBuilder2DReference.h): steps of exactly the clustering gap and one past it, runs of
// exactly maxOpenHits hits and one more, hits of both planes at one time (equal cluster starts),
// datagrams of a few hits whose clusters the walk partly leaves for the next flush, all
// singletons, mixes with pairs at one coordinate and at two. Every event, bound count and the
// state after each call must be the same.
#include "common/reduction/StreamingBuilder2D.h"
#include "tests/common/reduction/StreamingBuilder2DReference.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace efu::reduction {
namespace {

using reference::expectSameEvents;
using reference::expectSameState;

/// pairPercent: % of hits that follow the last within the gap (else more than it after);
/// edgePercent: % of steps of exactly the gap or one more; samePercent: % of hits at the last
/// hit's time (often the other plane's: equal starts across planes).
struct Mix {
  int pairPercent;
  int edgePercent;
  int samePercent;
  int maxHits; ///< hits per datagram: uniform in [0, maxHits]
};

/// A datagram's end as endDatagram() chooses it, the builder's events written into an
/// EventBuffer (what the trex module uses: one for all its builders, so `other` writes into it
/// too, between this builder's flushes) instead of appended to outB.
void endDatagramOwnEvents(StreamingBuilder2D &b, reference::ReferenceBuilder &r, unsigned what,
                          EventBuffer &buffer, StreamingBuilder2D &other, uint64_t &otherTime,
                          std::vector<Event2D> &outB, std::vector<Event2D> &outR) {
  outR.clear();
  if (what == 0) {
    b.restart(buffer);
    r.restart(outR);
  } else {
    b.flush(buffer, what < 3);
    r.flush(outR, what < 3);
  }
  outB.assign(buffer.events().begin(), buffer.events().end());
  for (int plane = 0; plane < 2; ++plane) { // an event of the other builder's in the storage
    other.insert(Hit{otherTime += 10'000, 1, 1, static_cast<uint8_t>(plane)});
  }
  other.flush(buffer, true);
}

void compareSingletons(uint64_t seed, const StreamingParams &params, const Mix &mix,
                       bool ownEvents = false) {
  std::mt19937_64 rng(seed);
  StreamingBuilder2D b(params);
  reference::ReferenceBuilder r(params);
  std::vector<Event2D> outB, outR;
  EventBuffer buffer;               // ownEvents: shared with `other`, as in the trex module
  StreamingBuilder2D other(params);
  uint64_t otherTime = 0;
  const uint64_t gap = params.clusterTimeGapNs;
  uint64_t t = 1'000'000;
  const auto percent = [&](int p) { return static_cast<int>(rng() % 100) < p; };
  for (int d = 0; d < 500; ++d) {
    const auto hits = static_cast<int>(rng() % static_cast<unsigned>(mix.maxHits + 1));
    for (int k = 0; k < hits; ++k) {
      if (percent(mix.samePercent)) {
        // t as it is
      } else if (percent(mix.edgePercent)) {
        t += gap + rng() % 2;
      } else if (percent(mix.pairPercent)) {
        t += rng() % (gap + 1);
      } else {
        t += gap + 1 + rng() % 3'000;
      }
      const Hit h{t, static_cast<uint16_t>(rng() % 4), static_cast<uint16_t>(rng() % 1024),
                  static_cast<uint8_t>(rng() % 2)};
      b.insert(h);
      r.insert(h);
    }
    const auto what = static_cast<unsigned>(rng() % 100);
    if (ownEvents) {
      endDatagramOwnEvents(b, r, what, buffer, other, otherTime, outB, outR);
    } else {
      reference::endDatagram(b, r, what, outB, outR);
    }
    SCOPED_TRACE("seed " + std::to_string(seed) + " datagram " + std::to_string(d));
    expectSameEvents(outB, outR);
    expectSameState(b, r);
    if (::testing::Test::HasFatalFailure()) {
      return;
    }
  }
  reference::expectSameFinalFlush(b, r, outB, outR);
  expectSameState(b, r);
}

TEST(StreamingBuilder2DSingletons, SameAsBefore) {
  const Mix mixes[] = {
      {0, 0, 0, 20},    // all singletons, well apart
      {0, 40, 0, 20},   // all singletons, many exactly at the gap or one past it
      {30, 20, 10, 20}, // singletons and pairs (one coordinate or two), some at one time
      {60, 10, 30, 40}, // longer runs, many equal starts across planes
      {10, 10, 20, 4},  // a few hits per datagram: the walk leaves clusters for the next flush
  };
  uint64_t seed = 7000;
  for (const size_t maxOpenHits : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{4096}}) {
    for (const uint32_t maxEventHits : {0U, 3U}) {
      for (const size_t maxWaiting : {size_t{0}, size_t{5}}) {
        StreamingParams p; // the ESS gaps and latency
        p.maxOpenHits = maxOpenHits;
        p.maxEventHits = maxEventHits;
        p.maxWaiting = maxWaiting;
        for (const Mix &m : mixes) {
          compareSingletons(seed++, p, m);
        }
      }
    }
  }
}

TEST(StreamingBuilder2DSingletons, SameAsBeforeRandomParams) {
  std::mt19937_64 rng(77);
  for (int run = 0; run < 80; ++run) {
    const StreamingParams p = reference::randomParams(rng, 5, 8);
    const Mix m{static_cast<int>(rng() % 70), static_cast<int>(rng() % 40),
                static_cast<int>(rng() % 30), 1 + static_cast<int>(rng() % 30)};
    compareSingletons(8000 + static_cast<uint64_t>(run), p, m);
  }
}

// The events written into an EventBuffer shared with another builder (the trex module's calls)
// equal the reference's: each flush's and restart's own, none of the last one's, none after a
// flush with nothing new.
TEST(StreamingBuilder2DSingletons, OwnEventsSameAsBefore) {
  std::mt19937_64 rng(91);
  for (int run = 0; run < 80; ++run) {
    const StreamingParams p = run % 2 == 0 ? StreamingParams{} : reference::randomParams(rng, 5, 8);
    const Mix m{static_cast<int>(rng() % 70), static_cast<int>(rng() % 40),
                static_cast<int>(rng() % 30), static_cast<int>(rng() % 30)};
    compareSingletons(9000 + static_cast<uint64_t>(run), p, m, true);
  }
}

} // namespace
} // namespace efu::reduction
