// SPDX-License-Identifier: BSD-2-Clause
// The one source of efu_test_pch, the target whose precompiled header every test reuses.
