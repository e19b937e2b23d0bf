// SPDX-License-Identifier: BSD-2-Clause
// Files embedded in efu-view at build time (cmake/EmbedFiles.cmake writes the definitions): the
// page's files (efu/tools/view/web/) and docs/counters.md.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace efu::tools::view {

/// One embedded file: its name (relative to the directory embedded) and its bytes.
struct EmbeddedFile {
  std::string_view name;
  std::string_view bytes;
};

/// Every file of efu/tools/view/web/ as built, by name (served at /NAME).
std::span<const EmbeddedFile> webAssets();
/// docs/counters.md as built (the one file "counters.md").
std::span<const EmbeddedFile> counterDocsFile();

/// The Content-Type for a file name, by its extension; application/octet-stream when unknown.
std::string_view contentTypeFor(std::string_view name);

} // namespace efu::tools::view
