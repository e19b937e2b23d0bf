// SPDX-License-Identifier: BSD-2-Clause
#include <gtest/gtest.h>
