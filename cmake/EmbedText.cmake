# SPDX-License-Identifier: BSD-2-Clause
# Embeds a text file in a program: writes OUTPUT, a .cpp defining `std::string_view
# NAMESPACE::FUNCTION() noexcept` that returns the whole of INPUT, byte for byte, as a raw string
# literal. Run as a build step (cmake -DINPUT=... -DOUTPUT=... -DNAMESPACE=... -DFUNCTION=... -P
# EmbedText.cmake) so that the program is rebuilt when INPUT changes.
foreach(var INPUT OUTPUT NAMESPACE FUNCTION)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "EmbedText.cmake: -D${var}=... is required")
  endif()
endforeach()
file(READ "${INPUT}" text)
# A raw string ends at )delimiter": the text must not contain it.
set(delimiter "efu_embed") # at most 16 characters
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "EmbedText.cmake: ${INPUT} contains the raw string's end ')${delimiter}\"'")
endif()
set(content "// Generated from ${INPUT} by cmake/EmbedText.cmake at build time: do not edit.
#include <string_view>

namespace ${NAMESPACE} {

std::string_view ${FUNCTION}() noexcept {
  static constexpr char kText[] = R\"${delimiter}(${text})${delimiter}\";
  return {kText, sizeof(kText) - 1};
}

} // namespace ${NAMESPACE}
")
# Replaced only when different, so that an unchanged text recompiles nothing.
file(WRITE "${OUTPUT}.tmp" "${content}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
