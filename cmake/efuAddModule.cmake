# SPDX-License-Identifier: BSD-2-Clause
# efu_add_module(NAME SOURCES src... [LIBRARIES lib...])
# Builds the detector module efu-module-NAME.so (target efu-module-NAME): a MODULE library linked
# against efu::sdk (C++20, as the toolchain tag of Module.h requires) with hidden visibility, so
# that the module exports only the entry point EFU_MODULE() defines. The same function serves
# the efu tree (cmake/EfuHelpers.cmake adds the tree's warnings, output dir and install rule) and
# out-of-tree projects, which get it from find_package(efu) (docs/modules.md).
function(efu_add_module name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  set(target efu-module-${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES PREFIX "" SUFFIX ".so" OUTPUT_NAME efu-module-${name}
                        CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON
                        POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(${target} PRIVATE efu::sdk ${ARG_LIBRARIES})
  if(COMMAND efu_module_in_tree)
    efu_module_in_tree(${target})
  endif()
endfunction()
