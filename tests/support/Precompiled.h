// SPDX-License-Identifier: BSD-2-Clause
// The heavy headers of the test code, compiled once per build for every test executable
// (efu_add_test in cmake/EfuHelpers.cmake). Nothing of efu: a change to efu rebuilds no header.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
