# SPDX-License-Identifier: BSD-2-Clause
# cmake -DROOT=<source tree> -P CheckIncludes.cmake
# Fails, naming file, line and include, where a quoted #include leaves what its folder may see:
#   common/            common/, schemas/ (generated)
#   modules/<name>/    common/, schemas/, modules/<name>/
#   efu/ (but tools/)  common/, schemas/, efu/ (not efu/tools/)
#   efu/tools/         common/, schemas/, efu/tools/
#   generators/        common/, schemas/, generators/
if(NOT ROOT)
  message(FATAL_ERROR "usage: cmake -DROOT=<source tree> -P CheckIncludes.cmake")
endif()

set(violations "")
set(checked 0)
foreach(top common modules efu generators)
  file(GLOB_RECURSE sources RELATIVE ${ROOT} ${ROOT}/${top}/*.h ${ROOT}/${top}/*.cpp)
  foreach(source ${sources})
    if(source MATCHES "^efu/tools/")
      set(allowed "common/|schemas/|efu/tools/")
    elseif(source MATCHES "^efu/")
      set(allowed "common/|schemas/|efu/")
    elseif(source MATCHES "^modules/([^/]+)/")
      set(allowed "common/|schemas/|modules/${CMAKE_MATCH_1}/")
    else()
      set(allowed "common/|schemas/|${top}/")
    endif()
    file(STRINGS ${ROOT}/${source} includes REGEX "^#include \"")
    math(EXPR checked "${checked} + 1")
    foreach(line ${includes})
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
      if(NOT header MATCHES "^(${allowed})" OR (source MATCHES "^efu/" AND NOT source MATCHES
                                                 "^efu/tools/" AND header MATCHES "^efu/tools/"))
        string(APPEND violations "  ${source}: #include \"${header}\" (may include: ${allowed})\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations)
  message(FATAL_ERROR "includes that break the source tree's rule (docs/architecture.md):\n"
                      "${violations}")
endif()
if(checked LESS 100)
  message(FATAL_ERROR "only ${checked} files found under ${ROOT}: wrong ROOT?")
endif()
message(STATUS "${checked} files keep the source tree's include rule")
