// SPDX-License-Identifier: BSD-2-Clause
// The reduction library's sort for data that mostly arrives ordered (private: used by its .cpp
// files, not installed).
#pragma once

#include <algorithm>
#include <cstddef>

namespace efu::reduction {

/// Sorts a[0, n): insertion sort while the input proves nearly ordered (datagrams mostly are;
/// stable so far), std::sort over everything once the moves exceed a budget linear in n. Never
/// allocates. Short inputs (a time cluster's few hits) skip std::sort's set-up.
template <typename T, typename Less> void adaptiveSort(T *a, size_t n, Less less) noexcept {
  const size_t budget = 4 * n + 32;
  size_t moves = 0;
  for (size_t i = 1; i < n; ++i) {
    if (!less(a[i], a[i - 1])) {
      continue;
    }
    const T x = a[i];
    size_t j = i;
    do {
      a[j] = a[j - 1];
      --j;
    } while (j > 0 && less(x, a[j - 1]));
    a[j] = x;
    moves += i - j;
    if (moves > budget) [[unlikely]] {
      std::sort(a, a + n, less);
      return;
    }
  }
}

} // namespace efu::reduction
