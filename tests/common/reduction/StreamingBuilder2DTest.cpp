// SPDX-License-Identifier: BSD-2-Clause
// StreamingBuilder2D against a plain reading of the ESS rules (a list of clusters that keep
// their hits, matched again after every datagram, a builder flushed even without new hits), on
// random inputs over many datagrams, and hand-computed cases: clusters that wait for both
// planes, events that span datagrams, the requeue order, LatestA/LatestB, the full flush.
#include "common/reduction/StreamingBuilder2D.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <random>
#include <vector>

namespace efu::reduction {
namespace {

/// The reference: the ESS behaviour written as directly as possible, with no shortcut.
class Reference {
public:
  explicit Reference(StreamingParams p) : p_(p) {}
  void insert(const Hit &h) {
    if (h.plane < 2) {
      in_[h.plane].push_back(h);
    }
  }
  void flush(std::vector<Event2D> &out, bool full) {
    std::vector<Cl> closed[2];
    for (int plane = 0; plane < 2; ++plane) {
      std::stable_sort(in_[plane].begin(), in_[plane].end(),
                       [](const Hit &x, const Hit &y) { return x.timeNs < y.timeNs; });
      for (const Hit &h : in_[plane]) {
        if (!open_[plane].empty() && h.timeNs - open_[plane].back().timeNs > p_.clusterTimeGapNs) {
          close(plane, closed[plane]);
        }
        open_[plane].push_back(h);
      }
      in_[plane].clear();
    }
    if (full) {
      close(0, closed[0]);
      close(1, closed[1]);
    }
    for (int plane = 0; plane < 2; ++plane) {
      if (!closed[plane].empty()) {
        latest_[plane] = std::max(latest_[plane], start(closed[plane].back()));
        list_.insert(list_.end(), closed[plane].begin(), closed[plane].end());
      }
    }
    list_.sort([](const Cl &x, const Cl &y) { return start(x) < start(y); });
    Cl evA, evB; // the open event: all hits of each plane
    while (!list_.empty()) {
      Cl &c = list_.front();
      const uint64_t latest = std::min(latest_[0], latest_[1]);
      if (!full && !(latest > end(c) && latest - end(c) > p_.latencyNs)) {
        break;
      }
      if (!evA.hits.empty() || !evB.hits.empty()) {
        uint64_t es = UINT64_MAX, ee = 0;
        for (const Cl *x : {&evA, &evB}) {
          if (!x->hits.empty()) {
            es = std::min(es, start(*x));
            ee = std::max(ee, end(*x));
          }
        }
        const uint64_t ls = std::max(start(c), es), eend = std::min(end(c), ee);
        if (ls > eend && ls - eend > p_.matchTimeGapNs) {
          out.push_back(Event2D{aggregate(evA), aggregate(evB)});
          evA.hits.clear();
          evB.hits.clear();
        }
      }
      Cl &into = c.plane == 0 ? evA : evB;
      into.plane = c.plane;
      into.hits.insert(into.hits.end(), c.hits.begin(), c.hits.end());
      list_.pop_front();
    }
    if (!evA.hits.empty() || !evB.hits.empty()) {
      if (full) {
        out.push_back(Event2D{aggregate(evA), aggregate(evB)});
      } else {
        if (!evA.hits.empty()) {
          list_.push_front(evA);
        }
        if (!evB.hits.empty()) {
          list_.push_front(evB);
        }
      }
    }
  }
  [[nodiscard]] uint64_t latest(int plane) const { return latest_[plane]; }

private:
  struct Cl {
    int plane = 0;
    std::vector<Hit> hits;
  };
  static uint64_t start(const Cl &c) {
    uint64_t t = UINT64_MAX;
    for (const Hit &h : c.hits) {
      t = std::min(t, h.timeNs);
    }
    return t;
  }
  static uint64_t end(const Cl &c) {
    uint64_t t = 0;
    for (const Hit &h : c.hits) {
      t = std::max(t, h.timeNs);
    }
    return t;
  }
  static PlaneCluster aggregate(const Cl &c) {
    PlaneCluster p;
    for (const Hit &h : c.hits) {
      p.timeStart = std::min(p.timeStart, h.timeNs);
      p.timeEnd = std::max(p.timeEnd, h.timeNs);
      p.coordStart = std::min(p.coordStart, h.coord);
      p.coordEnd = std::max(p.coordEnd, h.coord);
      ++p.hits;
      p.weightSum += h.weight;
      p.coordMass += double(h.weight) * h.coord;
    }
    return p;
  }
  void close(int plane, std::vector<Cl> &closed) {
    std::vector<Hit> &open = open_[plane];
    std::stable_sort(open.begin(), open.end(),
                     [](const Hit &x, const Hit &y) { return x.coord < y.coord; });
    for (size_t i = 0; i < open.size();) {
      Cl c;
      c.plane = plane;
      size_t j = i;
      for (; j < open.size() && open[j].coord == open[i].coord; ++j) {
        c.hits.push_back(open[j]);
      }
      closed.push_back(c);
      i = j;
    }
    open.clear();
  }

  StreamingParams p_;
  std::vector<Hit> in_[2], open_[2];
  std::list<Cl> list_;
  uint64_t latest_[2] = {0, 0};
};

void expectSame(const std::vector<Event2D> &got, const std::vector<Event2D> &want,
                const std::string &where) {
  ASSERT_EQ(got.size(), want.size()) << where;
  for (size_t i = 0; i < got.size(); ++i) {
    for (int plane = 0; plane < 2; ++plane) {
      const PlaneCluster &g = plane == 0 ? got[i].a : got[i].b;
      const PlaneCluster &w = plane == 0 ? want[i].a : want[i].b;
      ASSERT_EQ(g.hits, w.hits) << where << " event " << i << " plane " << plane;
      if (w.hits == 0) {
        continue;
      }
      EXPECT_EQ(g.timeStart, w.timeStart) << where << " event " << i;
      EXPECT_EQ(g.timeEnd, w.timeEnd) << where << " event " << i;
      EXPECT_EQ(g.coordStart, w.coordStart) << where << " event " << i;
      EXPECT_EQ(g.coordEnd, w.coordEnd) << where << " event " << i;
      EXPECT_EQ(g.weightSum, w.weightSum) << where << " event " << i;
      EXPECT_EQ(g.coordMass, w.coordMass) << where << " event " << i;
    }
  }
}

Hit hit(uint64_t t, uint16_t coord, uint8_t plane, uint16_t w = 100) {
  return Hit{t, coord, w, plane};
}

TEST(StreamingBuilder2D, MatchesTheReferenceOnRandomDatagrams) {
  size_t streamed = 0, flushed = 0;
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    StreamingParams p;
    p.clusterTimeGapNs = std::uniform_int_distribution<uint64_t>(0, 600)(rng);
    p.matchTimeGapNs = std::uniform_int_distribution<uint64_t>(0, 600)(rng);
    p.latencyNs = rng() % 4 == 0 ? 2010 : rng() % 3000;
    if (seed % 2 == 0) { // efu's bounds, far beyond anything here: they change nothing
      p.staleNs = 1'000'000'000;
      p.maxWaiting = 100'000;
      p.maxOpenHits = 100'000;
      p.stepBackNs = 1'000'000'000;
    }
    StreamingBuilder2D b(p);
    Reference ref(p);
    uint64_t t = 1'000'000;
    const int datagrams = std::uniform_int_distribution<int>(1, 60)(rng);
    const int spread = std::uniform_int_distribution<int>(1, 4000)(rng);
    for (int d = 0; d < datagrams; ++d) {
      const int n = std::uniform_int_distribution<int>(0, 3)(rng) == 0
                        ? 0
                        : std::uniform_int_distribution<int>(1, 40)(rng);
      for (int k = 0; k < n; ++k) {
        // Mostly increasing time, sometimes a step back (out of order across datagrams too).
        if (rng() % 10 == 0) {
          t -= std::min<uint64_t>(t - 1, rng() % 3000);
        } else {
          t += rng() % static_cast<uint64_t>(spread);
        }
        const Hit h = hit(t, static_cast<uint16_t>(rng() % 12), static_cast<uint8_t>(rng() % 2),
                          static_cast<uint16_t>(rng() % 1024));
        b.insert(h);
        ref.insert(h);
      }
      const bool full = rng() % 25 == 0;
      std::vector<Event2D> got, want;
      b.flush(got, full);
      ref.flush(want, full);
      expectSame(got, want, "seed " + std::to_string(seed) + " datagram " + std::to_string(d));
      streamed += full ? 0 : got.size();
      ASSERT_EQ(b.latest(0), ref.latest(0));
      ASSERT_EQ(b.latest(1), ref.latest(1));
    }
    std::vector<Event2D> got, want;
    b.flush(got, true);
    ref.flush(want, true);
    expectSame(got, want, "seed " + std::to_string(seed) + " final");
    flushed += got.size();
    EXPECT_TRUE(b.idle());
  }
  // Both paths were exercised: events formed while streaming and at the final full flush.
  EXPECT_GT(streamed, 1000u);
  EXPECT_GT(flushed, 100u);
}

// A capture replayed in a loop (udpgen --pcap --loop): time goes back to the start of the
// capture every few datagrams. Clusters near the end of a pass stay unready for good (the
// latest starts never grow again), so the queue keeps clusters that are later than everything
// that arrives; the fresh ones must still merge in the ESS order, on coarse times (many equal
// starts) and fine ones.
TEST(StreamingBuilder2D, MatchesTheReferenceOnAReplayedCapture) {
  size_t streamed = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 rng(seed * 7919);
    StreamingParams p;
    p.clusterTimeGapNs = std::uniform_int_distribution<uint64_t>(0, 600)(rng);
    p.matchTimeGapNs = std::uniform_int_distribution<uint64_t>(0, 600)(rng);
    p.latencyNs = rng() % 2 == 0 ? 2010 : rng() % 3000;
    const uint64_t step = seed % 3 == 0 ? 1 : 1 + rng() % 2000; // seed % 3 == 0: equal starts
    StreamingBuilder2D b(p);
    Reference ref(p);
    const int passLength = std::uniform_int_distribution<int>(2, 8)(rng);
    uint64_t t = 1'000'000;
    for (int d = 0; d < 80; ++d) {
      if (d % passLength == 0) {
        t = 1'000'000; // the next pass
      }
      for (int k = std::uniform_int_distribution<int>(1, 30)(rng); k > 0; --k) {
        t += (rng() % 4) * step;
        const Hit h = hit(t, static_cast<uint16_t>(rng() % 6), static_cast<uint8_t>(rng() % 2),
                          static_cast<uint16_t>(rng() % 1024));
        b.insert(h);
        ref.insert(h);
      }
      std::vector<Event2D> got, want;
      b.flush(got, false);
      ref.flush(want, false);
      expectSame(got, want, "seed " + std::to_string(seed) + " datagram " + std::to_string(d));
      streamed += got.size();
    }
    std::vector<Event2D> got, want;
    b.flush(got, true);
    ref.flush(want, true);
    expectSame(got, want, "seed " + std::to_string(seed) + " final");
  }
  EXPECT_GT(streamed, 1000u);
}

// One neutron (wire and grid at t) needs later data on both planes before it is published:
// its hits leave the open time cluster when a hit comes more than 500 ns later; its clusters
// are ready when both planes' latest closed cluster starts more than 2010 ns after their end;
// the event closes when a ready cluster more than 500 ns later is matched.
TEST(StreamingBuilder2D, AnEventWaitsForThreeLaterNeutrons) {
  StreamingBuilder2D b;
  std::vector<Event2D> out;
  const uint64_t t[] = {10'000, 13'000, 16'000, 19'000, 22'000};
  for (int k = 0; k < 5; ++k) {
    b.insert(hit(t[k], 7, 0));
    b.insert(hit(t[k], 3, 1));
    b.flush(out);
    if (k < 3) {
      EXPECT_TRUE(out.empty()) << k;
    }
    if (k == 1) {
      EXPECT_EQ(b.latest(0), 10'000u); // neutron 0's clusters closed, not yet ready
      EXPECT_EQ(b.waitingClusters(), 2u);
    }
  }
  // Neutron 3 closed neutron 2's time clusters: latest 16000 > 13000 + 2010, so neutron 1's
  // clusters are ready and close neutron 0's event; neutron 4 does the same for neutron 1.
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].timeStart(), 10'000u);
  EXPECT_EQ(out[1].timeStart(), 13'000u);
  // The rest waits; the full flush forms it.
  out.clear();
  b.flush(out, true);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].timeStart(), 22'000u);
  EXPECT_TRUE(b.idle());
}

// Clusters of one event that arrive in different datagrams form one event: the open event is
// requeued as one cluster per plane (B first) and matched again with the later clusters.
TEST(StreamingBuilder2D, AnEventSpansDatagrams) {
  StreamingBuilder2D b;
  std::vector<Event2D> out;
  b.insert(hit(1000, 5, 0, 10));
  b.insert(hit(1000, 9, 1, 30));
  b.flush(out);
  b.insert(hit(1400, 6, 0, 30)); // 400 ns later: same time cluster of plane A
  b.insert(hit(5000, 1, 0));
  b.insert(hit(5000, 1, 1));
  b.flush(out);
  b.insert(hit(9000, 2, 0));
  b.insert(hit(9000, 2, 1));
  b.insert(hit(12000, 3, 0));
  b.insert(hit(12000, 3, 1));
  b.flush(out);
  ASSERT_EQ(out.size(), 1u);
  const Event2D &e = out[0];
  EXPECT_EQ(e.a.hits, 2u);
  EXPECT_EQ(e.a.coordStart, 5);
  EXPECT_EQ(e.a.coordEnd, 6);
  EXPECT_EQ(e.a.timeEnd, 1400u);
  EXPECT_EQ(e.a.weightSum, 40.0);
  EXPECT_EQ(e.a.coordMass, 5 * 10 + 6 * 30.0);
  EXPECT_EQ(e.b.hits, 1u);
  EXPECT_EQ(e.b.coordStart, 9);
}

// The ESS LatestA/LatestB take the start of the LAST cluster closed (the highest coordinate of
// the last time cluster), not the latest start: here plane A's last closed cluster (coord 9)
// starts at 1000 although coord 1 of the same time cluster starts at 1400.
TEST(StreamingBuilder2D, LatestIsTheStartOfTheLastClosedCluster) {
  StreamingBuilder2D b;
  std::vector<Event2D> out;
  b.insert(hit(1000, 9, 0));
  b.insert(hit(1400, 1, 0));
  b.insert(hit(1000, 4, 1));
  b.insert(hit(5000, 2, 0));
  b.insert(hit(5000, 2, 1));
  b.flush(out);
  EXPECT_EQ(b.latest(0), 1000u);
  EXPECT_EQ(b.latest(1), 1000u);
  // An earlier hit (a step back in time) closes the open time cluster too.
  b.insert(hit(4000, 3, 0));
  b.flush(out);
  EXPECT_EQ(b.latest(0), 5000u);
  EXPECT_TRUE(out.empty());
}

// A cluster that is not ready stops matching even when later ones are: readiness is checked in
// start order and the first one that fails ends the pass.
TEST(StreamingBuilder2D, TheFirstClusterNotReadyStopsMatching) {
  StreamingParams p;
  StreamingBuilder2D b(p);
  Reference ref(p);
  std::vector<Event2D> got, want;
  const Hit hits[] = {hit(1000, 1, 0),  hit(1000, 1, 1),  hit(1000, 2, 0),  hit(9000, 1, 0),
                      hit(1100, 5, 1),  hit(20000, 1, 0), hit(20000, 1, 1), hit(30000, 1, 1),
                      hit(30000, 1, 0), hit(41000, 2, 0), hit(41000, 2, 1)};
  for (const Hit &h : hits) {
    b.insert(h);
    ref.insert(h);
    b.flush(got);
    ref.flush(want, false);
  }
  expectSame(got, want, "stepwise");
  EXPECT_EQ(got.size(), 2u);
}

TEST(StreamingBuilder2D, OtherPlanesAreCountedAndDropped) {
  StreamingBuilder2D b;
  b.insert(hit(1, 1, 2));
  EXPECT_EQ(b.invalidPlane(), 1);
  EXPECT_TRUE(b.idle());
}

// ---- efu's bounds (README.md, "Bounds"; issue 37 items 1 and 2) ----

/// What the ESS builder forms from `hits` in one full flush (the events a dead plane's clusters
/// give at the end in the ESS EFU, where they wait until then).
std::vector<Event2D> essFullFlush(const std::vector<Hit> &hits) {
  Reference ref(StreamingParams{});
  for (const Hit &h : hits) {
    ref.insert(h);
  }
  std::vector<Event2D> out;
  ref.flush(out, true);
  return out;
}

/// A stuck clock: 1000 datagrams of 20 hits, all at one time, over 8 coordinates and both
/// planes, each datagram flushed; `after` is called after each flush.
template <class After> void feedStuckClock(StreamingBuilder2D &b, std::vector<Event2D> &got,
                                           After after) {
  for (int d = 0; d < 1000; ++d) {
    for (int k = 0; k < 20; ++k) {
      b.insert(hit(5'000'000, static_cast<uint16_t>(k % 8), k % 2 == 0 ? 0 : 1));
    }
    b.flush(got);
    after();
  }
}

// With maxEventHits the stuck clock's open event is formed once it holds that many hits, so
// events come out while the clock stays stuck (each then refused downstream by its span).
TEST(StreamingBuilder2DBounds, AStuckClocksOpenEventIsFormedAtItsLimit) {
  StreamingParams p;
  p.maxOpenHits = 100;
  p.maxWaiting = 64;
  p.maxEventHits = 1000;
  StreamingBuilder2D b(p);
  std::vector<Event2D> got;
  feedStuckClock(b, got, [] {});
  ASSERT_GE(got.size(), 15U); // 20 000 hits, about 1000 each
  for (const Event2D &e : got) {
    EXPECT_LE(e.a.hits + e.b.hits, 1000U + 50U); // the limit and at most one cluster more
  }
  EXPECT_EQ(b.bounds().eventHits, static_cast<int64_t>(got.size()));
  b.flush(got, true);
  uint64_t all = 0;
  for (const Event2D &e : got) {
    all += e.a.hits + e.b.hits;
  }
  EXPECT_EQ(all, 20'000U); // every hit in exactly one event
}

/// Neutrons every 3 us from t0, 10 a datagram: a hit of plane A, and 40 ns later one of plane B
/// unless B is dead.
std::vector<std::vector<Hit>> neutrons(int datagrams, uint64_t t0, bool deadB = false) {
  std::vector<std::vector<Hit>> out;
  uint64_t t = t0;
  for (int d = 0; d < datagrams; ++d) {
    out.emplace_back();
    for (int k = 0; k < 10; ++k, t += 3000) {
      out.back().push_back(hit(t, static_cast<uint16_t>(k % 7), 0));
      if (!deadB) {
        out.back().push_back(hit(t + 40, static_cast<uint16_t>(k % 5), 1));
      }
    }
  }
  return out;
}
/// Plane A only (a dead grid hybrid).
std::vector<std::vector<Hit>> onePlaneOnly(int datagrams) {
  return neutrons(datagrams, 1'000'000, true);
}

// Without bounds (the ESS builder) every cluster of a plane whose partner never comes waits
// for good; with staleNs, a cluster the builder's latest hit has passed by more than the window
// is matched as if ready, so at most the window's clusters wait, and the events that come out
// are those the ESS full flush forms from the same hits.
TEST(StreamingBuilder2DBounds, ADeadPlaneHoldsOnlyTheStaleWindow) {
  const auto stream = onePlaneOnly(2000); // 60 ms of data, 20 000 clusters
  StreamingBuilder2D ess;
  StreamingParams p;
  p.staleNs = 300'000; // 100 neutrons
  StreamingBuilder2D bounded(p);
  std::vector<Event2D> got, none;
  std::vector<Hit> all;
  size_t most = 0;
  for (const auto &d : stream) {
    for (const Hit &h : d) {
      ess.insert(h);
      bounded.insert(h);
      all.push_back(h);
    }
    ess.flush(none);
    bounded.flush(got);
    most = std::max(most, bounded.waitingClusters() + bounded.pendingHits());
  }
  EXPECT_TRUE(none.empty());
  EXPECT_GE(ess.waitingClusters(), 19'990U);
  EXPECT_LE(most, 125U); // the window's 100 clusters, the open time cluster, one datagram
  EXPECT_GT(got.size(), 19'000U);
  // Each cluster matched early is counted once: the events formed and the one held open.
  EXPECT_EQ(bounded.bounds().stale, static_cast<int64_t>(got.size()) + 1);
  EXPECT_TRUE(bounded.silent(1));
  EXPECT_FALSE(bounded.silent(0));
  EXPECT_FALSE(ess.silent(1)); // no window, no silence
  bounded.flush(got, true);
  expectSame(got, essFullFlush(all), "dead plane");
}

TEST(StreamingBuilder2DBounds, AtMostMaxWaitingClustersWait) {
  const auto stream = onePlaneOnly(500);
  StreamingParams p;
  p.maxWaiting = 64;
  StreamingBuilder2D b(p);
  std::vector<Event2D> got;
  std::vector<Hit> all;
  for (const auto &d : stream) {
    for (const Hit &h : d) {
      b.insert(h);
      all.push_back(h);
    }
    b.flush(got);
    ASSERT_LE(b.waitingClusters(), 64U);
  }
  // Of the 4999 closed clusters (the last hit's time cluster is open), all but about maxWaiting.
  EXPECT_GT(b.bounds().full, 4999 - 64 - 2);
  EXPECT_LE(b.bounds().full, 4999 - 64 + 2);
  EXPECT_EQ(b.bounds().stale, 0);
  b.flush(got, true);
  expectSame(got, essFullFlush(all), "count bound");
}

// A stuck clock: every hit at one time never closes the open time cluster in the ESS builder
// (16 bytes a hit without end). maxOpenHits closes it; with maxWaiting the clusters it makes
// are matched too, into one event that grows as aggregates only.
TEST(StreamingBuilder2DBounds, AStuckClockClosesTheOpenTimeClusterAtItsLimit) {
  StreamingParams p;
  p.maxOpenHits = 100;
  p.maxWaiting = 64;
  StreamingBuilder2D b(p);
  std::vector<Event2D> got;
  feedStuckClock(b, got, [&] {
    ASSERT_LE(b.pendingHits(), 200U); // two planes' open time clusters
    ASSERT_LE(b.waitingClusters(), 64U);
  });
  EXPECT_EQ(b.bounds().openHits, 2 * (10'000 / 100 - 1)); // per plane, the last stays open
  EXPECT_GT(b.bounds().full, 0);
  b.flush(got, true);
  ASSERT_EQ(got.size(), 1U); // one time: one event of every hit
  EXPECT_EQ(got[0].a.hits + got[0].b.hits, 20'000U);
}

std::vector<Event2D> streamThrough(StreamingBuilder2D &b,
                                   const std::vector<std::vector<Hit>> &datagrams) {
  std::vector<Event2D> out;
  for (const auto &d : datagrams) {
    for (const Hit &h : d) {
      b.insert(h);
    }
    b.flush(out);
  }
  return out;
}

// Time steps back (a timing reset, a replayed capture): the ESS builder's latest times stay
// ahead, so every later cluster is ready at once and most neutrons lose their partner plane.
// With stepBackNs the builder forms what waits and starts anew: before the step, the events of
// the ESS full flush; after it, exactly a fresh builder's.
TEST(StreamingBuilder2DBounds, ATimeStepBackRestartsTheBuilder) {
  const auto before = neutrons(30, 2'000'000'000);
  const auto after = neutrons(30, 1'000'000'000); // 1 s earlier
  StreamingParams p;
  p.stepBackNs = 100'000'000;
  StreamingBuilder2D b(p);
  std::vector<Event2D> got = streamThrough(b, before);
  const std::vector<Event2D> more = streamThrough(b, after);
  got.insert(got.end(), more.begin(), more.end());
  EXPECT_EQ(b.bounds().stepBack, 1);

  StreamingBuilder2D first(p);
  std::vector<Event2D> want = streamThrough(first, before);
  first.flush(want, true);
  StreamingBuilder2D second(p);
  const std::vector<Event2D> want2 = streamThrough(second, after);
  want.insert(want.end(), want2.begin(), want2.end());
  expectSame(got, want, "step back");
  EXPECT_GT(got.size(), 590U); // all 300 before, all after but the last few (not yet ready)
}

// One far-future hit moves the builder's latest time ahead: its next datagram restarts it once,
// and the neutrons after it are formed as by a fresh builder.
TEST(StreamingBuilder2DBounds, AFarFutureHitCostsOneRestart) {
  StreamingParams p;
  p.stepBackNs = 100'000'000;
  p.staleNs = 1'000'000'000;
  StreamingBuilder2D b(p);
  std::vector<Event2D> got = streamThrough(b, neutrons(10, 1'000'000'000));
  b.insert(hit(uint64_t{0xFFFF0000} * 1'000'000'000, 3, 0));
  b.flush(got);
  EXPECT_GE(got.size(), 95U);
  const auto later = neutrons(30, 1'001'000'000);
  const std::vector<Event2D> more = streamThrough(b, later);
  EXPECT_EQ(b.bounds().stepBack, 1);
  StreamingBuilder2D fresh(p);
  const std::vector<Event2D> want = streamThrough(fresh, later);
  ASSERT_GE(more.size(), want.size()); // first what the restart formed, then the fresh events
  expectSame(std::vector<Event2D>(more.end() - static_cast<std::ptrdiff_t>(want.size()), more.end()),
             want, "after the restart");
  EXPECT_GT(want.size(), 290U);
}

TEST(StreamingBuilder2DBounds, RestartFormsEverythingAndForgetsTheLatestTimes) {
  StreamingBuilder2D b;
  std::vector<Event2D> out = streamThrough(b, neutrons(2, 5'000'000));
  EXPECT_GT(b.waitingClusters() + b.pendingHits(), 0U);
  b.restart(out);
  EXPECT_TRUE(b.idle());
  EXPECT_EQ(out.size(), 20U);
  EXPECT_EQ(b.latest(0), 0U);
  EXPECT_EQ(b.bounds().restarts, 1);
}

} // namespace
} // namespace efu::reduction
