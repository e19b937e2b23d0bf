# SPDX-License-Identifier: BSD-2-Clause
# Helper functions shared by every efu target: warnings, sanitizers, modules, tests, schemas.

# Warnings and sanitizers, applied per target (never as global flags). efu_target_defaults(target
# TEST_CODE) is for test programs: they leave out libFuzzer's coverage instrumentation
# (fuzzer-no-link), which only the code the fuzz targets reach needs. The sanitizer tree of
# scripts/test compiles a test file up to a quarter faster without it; the libraries the tests link
# keep it (the sanitizer runtime defines the hooks it calls).
function(efu_target_defaults target)
  cmake_parse_arguments(ARG "TEST_CODE" "" "" ${ARGN})
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           -Wcast-align -Wunused -Woverloaded-virtual)
  if(EFU_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  set(sanitize "${EFU_SANITIZE}")
  if(ARG_TEST_CODE)
    string(REPLACE "," ";" sanitize "${sanitize}")
    list(REMOVE_ITEM sanitize fuzzer-no-link)
    string(REPLACE ";" "," sanitize "${sanitize}")
  endif()
  if(sanitize)
    target_compile_options(${target} PRIVATE -fsanitize=${sanitize} -fno-omit-frame-pointer -fno-sanitize-recover=all)
    target_link_options(${target} PRIVATE -fsanitize=${sanitize})
  endif()
endfunction()

# efu_add_module(NAME SOURCES src... [LIBRARIES lib...]): cmake/efuAddModule.cmake, the function
# the installed SDK gives out-of-tree projects. In the tree it also calls efu_module_in_tree():
# the library goes to ${EFU_MODULE_BUILD_DIR}, where the daemon finds it in the build tree, gets
# the tree's warnings and is installed to <prefix>/${EFU_MODULE_INSTALL_DIR}.
include(${CMAKE_CURRENT_LIST_DIR}/efuAddModule.cmake)
function(efu_module_in_tree target)
  set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${EFU_MODULE_BUILD_DIR})
  efu_target_defaults(${target})
  install(TARGETS ${target} LIBRARY DESTINATION ${EFU_MODULE_INSTALL_DIR})
endfunction()

# efu_add_test(NAME SOURCES src... [LIBRARIES lib...] [LABELS label...] [TIMEOUT seconds])
# One GoogleTest executable; its tests are discovered and carry the given ctest labels.
# Test code is compiled for the build's speed, not its own: -Og (the code under test keeps the
# build type's flags, in its libraries) and the heavy headers from one precompiled header shared
# by every test executable (efu_test_pch). Not -O0 in the sanitizer tree: measured there, it
# saved ~3 s of clang a test file (~140 s on two cores) and cost ~160 s more in the unit tests.
function(efu_test_code_defaults target)
  efu_target_defaults(${target} TEST_CODE)
  target_compile_options(${target} PRIVATE $<$<NOT:$<CONFIG:Debug>>:-Og>)
endfunction()

function(efu_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBRARIES;LABELS" ${ARGN})
  if(NOT TARGET efu_test_pch)
    add_library(efu_test_pch OBJECT ${PROJECT_SOURCE_DIR}/tests/support/Precompiled.cpp)
    target_link_libraries(efu_test_pch PRIVATE GTest::gtest nlohmann_json::nlohmann_json
                                               spdlog::spdlog)
    target_precompile_headers(efu_test_pch PRIVATE ${PROJECT_SOURCE_DIR}/tests/support/Precompiled.h)
    efu_test_code_defaults(efu_test_pch)
    # Compiled as the executables that reuse it are (-fPIE, not an object library's -fPIC): a
    # header precompiled with other code-generation settings is refused.
    set_target_properties(efu_test_pch PROPERTIES POSITION_INDEPENDENT_CODE OFF)
    target_compile_options(efu_test_pch PRIVATE ${CMAKE_CXX_COMPILE_OPTIONS_PIE})
  endif()
  add_executable(${name} ${ARG_SOURCES})
  # The precompiled header's libraries too: their definitions (SPDLOG_FMT_EXTERNAL, ...) must be
  # those the header was compiled with, or the compiler refuses it.
  target_link_libraries(${name} PRIVATE ${ARG_LIBRARIES} GTest::gtest GTest::gtest_main
                                        nlohmann_json::nlohmann_json spdlog::spdlog)
  target_precompile_headers(${name} REUSE_FROM efu_test_pch)
  efu_test_code_defaults(${name})
  if(NOT ARG_LABELS)
    set(ARG_LABELS unit)
  endif()
  # A hung test (a lost wake-up, a stuck process) fails after 5 minutes instead of blocking CI.
  # A shorter TIMEOUT is part of what some tests check (work that must stay linear).
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  gtest_discover_tests(${name} PROPERTIES LABELS "${ARG_LABELS}" TIMEOUT ${ARG_TIMEOUT}
                       DISCOVERY_TIMEOUT 30)
  # `cmake --build DIR --target efu_unit_tests` builds the unit tests and what they need only
  # (the sanitizer builds of scripts/test run nothing else).
  if("unit" IN_LIST ARG_LABELS)
    if(NOT TARGET efu_unit_tests)
      add_custom_target(efu_unit_tests)
    endif()
    add_dependencies(efu_unit_tests ${name})
  endif()
endfunction()

# efu_add_benchmark(NAME SOURCES src... [LIBRARIES lib...] [DEFINITIONS def...])
# One Google Benchmark program, built with EFU_BUILD_BENCHMARKS when Google Benchmark is found
# (tests/CMakeLists.txt looks for it once); never registered with ctest. EFU_SOURCE_DIR is the
# source tree, for benchmarks that read the shipped configs.
function(efu_add_benchmark name)
  if(NOT EFU_BUILD_BENCHMARKS OR NOT TARGET benchmark::benchmark)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES;DEFINITIONS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBRARIES} benchmark::benchmark)
  target_compile_definitions(${name} PRIVATE EFU_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
                                             ${ARG_DEFINITIONS})
  efu_target_defaults(${name})
endfunction()

# efu_flatbuffers(TARGET name SCHEMAS a.fbs b.fbs)
# Compiles schemas with flatc into an INTERFACE library exposing "<schema>_generated.h".
function(efu_flatbuffers)
  cmake_parse_arguments(ARG "" "TARGET" "SCHEMAS" ${ARGN})
  set(outdir ${CMAKE_CURRENT_BINARY_DIR}/generated/schemas)
  set(headers)
  foreach(schema ${ARG_SCHEMAS})
    get_filename_component(base ${schema} NAME_WE)
    set(header ${outdir}/${base}_generated.h)
    add_custom_command(OUTPUT ${header}
      COMMAND ${EFU_FLATC} --cpp --scoped-enums -o ${outdir} ${CMAKE_CURRENT_SOURCE_DIR}/${schema}
      DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${schema}
      COMMENT "flatc ${schema}")
    list(APPEND headers ${header})
  endforeach()
  add_custom_target(${ARG_TARGET}_gen DEPENDS ${headers})
  add_library(${ARG_TARGET} INTERFACE)
  add_dependencies(${ARG_TARGET} ${ARG_TARGET}_gen)
  target_include_directories(${ARG_TARGET} INTERFACE ${CMAKE_CURRENT_BINARY_DIR}/generated)
  target_link_libraries(${ARG_TARGET} INTERFACE flatbuffers::flatbuffers_shared)
endfunction()
