// SPDX-License-Identifier: BSD-2-Clause
// Exact packet-level accounting of a sequence-numbered datagram stream.
#include "modules/udp/SequenceTracker.h"

namespace efu::udp {

void SequenceTracker::startRun(uint64_t seq) noexcept {
  clearAll();
  first_ = seq;
  highest_ = seq;
  set(seq);
  started_ = true;
}

void SequenceTracker::add(uint64_t seq) noexcept {
  if (!started_) {
    startRun(seq);
    return;
  }
  if (restartPending_) {
    restartPending_ = false;
    // A restart is confirmed when the next number continues from the candidate rather than
    // from the old run (it is nearer the candidate than the old highest); otherwise the
    // candidate was a single stale datagram.
    const bool followsCandidate = seq > restartCandidate_ && seq < highest_ &&
                                  seq - restartCandidate_ < highest_ - seq;
    if (followsCandidate) {
      ++restarts_;
      previousRunsExpected_ += highest_ - first_ + 1;
      startRun(restartCandidate_);
    } else {
      ++stale_;
    }
  }
  if (seq > highest_) {
    const uint64_t gap = seq - highest_ - 1;
    lost_ += gap;
    if (gap >= kWindow) {
      clearAll();
    } else {
      for (uint64_t n = highest_ + 1; n < seq; ++n) {
        clear(n);
      }
    }
    set(seq);
    highest_ = seq;
    return;
  }
  const uint64_t behind = highest_ - seq;
  if (behind >= kWindow) {
    // Beyond the window: a generator restart if the next number follows this one (see above).
    restartPending_ = true;
    restartCandidate_ = seq;
    return;
  }
  if (seq < first_) {
    // Arrived before the first one we saw: the run starts earlier than we thought.
    lost_ += first_ - seq - 1;
    for (uint64_t n = seq + 1; n < first_; ++n) {
      clear(n);
    }
    first_ = seq;
    set(seq);
    ++reordered_;
    return;
  }
  if (test(seq)) {
    ++duplicates_;
    return;
  }
  set(seq);
  ++reordered_;
  --lost_; // it was counted lost when the gap opened
}

} // namespace efu::udp
