// SPDX-License-Identifier: BSD-2-Clause
// The page's files (efu/tools/view/web/), embedded in efu-view at build time.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace efu::tools::view {

/// One file of web/: its name (served at /NAME) and its bytes.
struct WebAsset {
  std::string_view name;
  std::string_view bytes;
};

/// Every file of efu/tools/view/web/ as built (EmbedWeb.cmake writes the definition), by name.
std::span<const WebAsset> webAssets();

/// The Content-Type for a file name, by its extension; application/octet-stream when unknown.
std::string_view contentTypeFor(std::string_view name);

} // namespace efu::tools::view
