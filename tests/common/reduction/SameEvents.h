// SPDX-License-Identifier: BSD-2-Clause
// Events compared to the bit, for the tests of both two-plane builders.
#pragma once

#include "common/reduction/EventBuilder2D.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace efu::reduction::reference {

/// Two clusters alike to the bit (the sums compared as bytes: -0 and NaN patterns too).
inline bool sameCluster(const PlaneCluster &x, const PlaneCluster &y) {
  return x.timeStart == y.timeStart && x.timeEnd == y.timeEnd && x.coordStart == y.coordStart &&
         x.coordEnd == y.coordEnd && x.hits == y.hits && x.utpcCoord == y.utpcCoord &&
         std::memcmp(&x.weightSum, &y.weightSum, sizeof(double)) == 0 &&
         std::memcmp(&x.coordMass, &y.coordMass, sizeof(double)) == 0;
}

/// The builder's events equal the reference's, one for one, to the bit.
inline void expectSameEvents(const std::vector<Event2D> &got, const std::vector<Event2D> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(sameCluster(got[i].a, want[i].a) && sameCluster(got[i].b, want[i].b))
        << "event " << i;
  }
}

} // namespace efu::reduction::reference
