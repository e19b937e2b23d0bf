// SPDX-License-Identifier: BSD-2-Clause
// VMM3 event formation: per-plane time/strip clustering across datagrams and x/y matching.
#include "modules/vmm3/Clustering.h"

#include <algorithm>

namespace efu::vmm3 {
namespace {

bool byStripThenTime(const Hit &a, const Hit &b) noexcept {
  return a.strip != b.strip ? a.strip < b.strip : a.timeNs < b.timeNs;
}

/// Insertion sort for the common small groups (2-10 hits), std::sort (no allocation) above.
void sortByStrip(Hit *first, size_t n) noexcept {
  if (n > 24) {
    std::sort(first, first + n, byStripThenTime);
    return;
  }
  for (size_t i = 1; i < n; ++i) {
    const Hit h = first[i];
    size_t j = i;
    while (j > 0 && byStripThenTime(h, first[j - 1])) {
      first[j] = first[j - 1];
      --j;
    }
    first[j] = h;
  }
}

Cluster startCluster(const Hit &h) noexcept {
  return Cluster{h.timeNs, h.timeNs,   static_cast<uint64_t>(h.adc) * h.strip, h.adc, 1, h.strip,
                 h.strip,  h.pulseSlot};
}

void grow(Cluster &c, const Hit &h) noexcept {
  if (h.timeNs < c.timeNs) {
    c.timeNs = h.timeNs;
    c.pulseSlot = h.pulseSlot;
  }
  c.endTimeNs = std::max(c.endTimeNs, h.timeNs);
  c.weightedStrips += static_cast<uint64_t>(h.adc) * h.strip;
  c.charge += h.adc;
  ++c.hits;
  c.stripMax = h.strip; // hits arrive in strip order
}

} // namespace

PlaneClusterer::PlaneClusterer(Plane plane, const ClusterParams &params, ClusterSink &sink)
    : plane_(plane), params_(params), sink_(sink),
      sort_(std::max<uint32_t>(params.sortCapacity, 2)),
      group_(std::max<uint32_t>(params.maxGroupHits, 1)) {}

bool PlaneClusterer::add(const Hit &hit) noexcept {
  if (sortSize_ == sort_.size()) {
    if (sortHead_ == 0) {
      // Full of hits inside the sort window: let the oldest go early.
      ++stats_.sortOverflows;
      release(sort_[sortHead_++]);
    }
    std::copy(sort_.begin() + static_cast<ptrdiff_t>(sortHead_),
              sort_.begin() + static_cast<ptrdiff_t>(sortSize_), sort_.begin());
    sortSize_ -= sortHead_;
    sortHead_ = 0;
  }
  if (hit.timeNs < releasedNs_) {
    ++stats_.late;
    return false;
  }
  size_t pos = sortSize_;
  while (pos > sortHead_ && sort_[pos - 1].timeNs > hit.timeNs) {
    sort_[pos] = sort_[pos - 1];
    --pos;
  }
  sort_[pos] = hit;
  ++sortSize_;
  newestNs_ = std::max(newestNs_, hit.timeNs);
  const int64_t releaseUpTo = newestNs_ - params_.sortWindowNs;
  while (sortHead_ < sortSize_ && sort_[sortHead_].timeNs <= releaseUpTo) {
    release(sort_[sortHead_++]);
  }
  if (sortHead_ == sortSize_) {
    sortHead_ = sortSize_ = 0;
  }
  return true;
}

void PlaneClusterer::release(const Hit &hit) noexcept {
  releasedNs_ = hit.timeNs;
  if (groupSize_ > 0 && hit.timeNs - group_[groupSize_ - 1].timeNs > params_.timeGapNs) {
    closeGroup();
  } else if (groupSize_ == group_.size()) {
    ++stats_.forcedCloses;
    closeGroup();
  }
  group_[groupSize_++] = hit;
}

void PlaneClusterer::closeGroup() noexcept {
  if (groupSize_ == 0) {
    return;
  }
  sortByStrip(group_.data(), groupSize_);
  const uint32_t maxStep = params_.stripGap + 1;
  Cluster c = startCluster(group_[0]);
  for (size_t i = 1; i < groupSize_; ++i) {
    const Hit &h = group_[i];
    if (static_cast<uint32_t>(h.strip - group_[i - 1].strip) > maxStep) {
      ++stats_.clusters;
      sink_.cluster(plane_, c);
      c = startCluster(h);
    } else {
      grow(c, h);
    }
  }
  ++stats_.clusters;
  sink_.cluster(plane_, c);
  groupSize_ = 0;
}

void PlaneClusterer::flush() noexcept {
  while (sortHead_ < sortSize_) {
    release(sort_[sortHead_++]);
  }
  sortHead_ = sortSize_ = 0;
  closeGroup();
}

void PlaneClusterer::restart() noexcept {
  flush();
  newestNs_ = std::numeric_limits<int64_t>::min();
  releasedNs_ = std::numeric_limits<int64_t>::min();
}

int64_t PlaneClusterer::watermarkNs() const noexcept {
  // The open group is in release (time) order; everything later is at least releasedNs_.
  return groupSize_ > 0 ? group_[0].timeNs : releasedNs_;
}

EventFormer::EventFormer(const Params &params, EventOutput &out)
    : params_(params),
      out_(out), planes_{{Plane::X, params.planes, *this}, {Plane::Y, params.planes, *this}} {
  for (Waiting &w : waiting_) {
    w.items.resize(std::max<uint32_t>(params.matchCapacity, 2));
  }
}

EventFormer::Params EventFormer::paramsFrom(const Vmm3Config &c) {
  Params p;
  p.planes.timeGapNs = c.timeGapNs;
  p.planes.stripGap = c.stripGap;
  p.planes.sortWindowNs = c.sortWindowNs;
  p.planes.maxGroupHits = c.maxClusterHits;
  p.matchWindowNs = c.matchWindowNs;
  p.nx = c.nx;
  p.ny = c.ny;
  return p;
}

void EventFormer::cluster(Plane plane, const Cluster &c) noexcept {
  Waiting &w = waiting_[static_cast<size_t>(plane)];
  while (w.size == w.items.size()) {
    if (w.head > 0) {
      std::copy(w.items.begin() + static_cast<ptrdiff_t>(w.head),
                w.items.begin() + static_cast<ptrdiff_t>(w.size), w.items.begin());
      w.size -= w.head;
      w.head = 0;
    } else {
      ++matchOverflows_;
      decideEarliest();
    }
  }
  size_t pos = w.size;
  while (pos > w.head && w.items[pos - 1].timeNs > c.timeNs) {
    w.items[pos] = w.items[pos - 1];
    --pos;
  }
  w.items[pos] = c;
  ++w.size;
}

void EventFormer::pop(size_t plane) noexcept {
  Waiting &w = waiting_[plane];
  if (++w.head == w.size) {
    w.head = w.size = 0;
  }
}

bool EventFormer::decideEarliest(bool force) noexcept {
  Waiting &x = waiting_[0];
  Waiting &y = waiting_[1];
  if (x.empty() && y.empty()) {
    return false;
  }
  const size_t p = (y.empty() || (!x.empty() && x.front().timeNs <= y.front().timeNs)) ? 0 : 1;
  const size_t q = 1 - p;
  const Cluster c = waiting_[p].front();
  // Nothing from the other plane that could still match c may be on its way.
  if (!force && planes_[q].watermarkNs() <= c.timeNs + params_.matchWindowNs) {
    return false;
  }
  pop(p);
  if (!waiting_[q].empty() && waiting_[q].front().timeNs - c.timeNs <= params_.matchWindowNs) {
    const Cluster other = waiting_[q].front();
    pop(q);
    if (p == 0) {
      emit(c, other);
    } else {
      emit(other, c);
    }
  } else {
    ++unmatched_[p];
    out_.unmatched(static_cast<Plane>(p), c);
  }
  return true;
}

void EventFormer::emit(const Cluster &x, const Cluster &y) noexcept {
  Event e;
  e.timeNs = std::min(x.timeNs, y.timeNs);
  e.pulseSlot = x.timeNs <= y.timeNs ? x.pulseSlot : y.pulseSlot;
  e.x = x.centreStrip();
  e.y = y.centreStrip();
  // Strips are < nx / ny by construction (the config checks every hybrid's range).
  e.pixelId = static_cast<int32_t>(e.y * params_.nx + e.x + 1);
  e.cx = x;
  e.cy = y;
  ++events_;
  out_.event(e);
}

void EventFormer::advance() noexcept {
  while (decideEarliest(false)) {
  }
}

void EventFormer::flush() noexcept {
  for (PlaneClusterer &p : planes_) {
    p.flush();
  }
  while (decideEarliest(true)) {
  }
}

void EventFormer::restart() noexcept {
  flush();
  for (PlaneClusterer &p : planes_) {
    p.restart();
  }
  ++restarts_;
}

bool EventFormer::idle() const noexcept {
  return planes_[0].idle() && planes_[1].idle() && waiting_[0].empty() && waiting_[1].empty();
}

FormerStats EventFormer::stats() const noexcept {
  FormerStats s;
  for (size_t i = 0; i < kPlanes; ++i) {
    s.planes[i] = planes_[i].stats();
    s.unmatched[i] = unmatched_[i];
  }
  s.events = events_;
  s.matchOverflows = matchOverflows_;
  s.restarts = restarts_;
  return s;
}

} // namespace efu::vmm3
