# SPDX-License-Identifier: BSD-2-Clause
# What `cmake --install` adds beyond the programs and modules (installed where they are built):
# the module SDK as the CMake package efu, the docs, the systemd template unit and its example,
# and the Debian package (cpack -G DEB). Layout: docs/deploy.md; checked by scripts/test-install.
include(CMakePackageConfigHelpers)
set(EFU_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/efu)

# SDK: headers under include/efu (their common/... paths kept), the static libraries modules use,
# and the targets efu::sdk, efu::module_config, efu::readout, efu::reduction. Nothing of the
# daemon.
install(TARGETS efu_sdk efu_module_config efu_readout efu_reduction EXPORT efuTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/efu)
install(EXPORT efuTargets NAMESPACE efu:: DESTINATION ${EFU_CMAKE_INSTALL_DIR})
string(REGEX MATCH "^[0-9]+\\.[0-9]+" EFU_CXX_COMPILER_MAJOR_MINOR "${CMAKE_CXX_COMPILER_VERSION}")
configure_package_config_file(cmake/efuConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/efuConfig.cmake
                              INSTALL_DESTINATION ${EFU_CMAKE_INSTALL_DIR}
                              PATH_VARS EFU_MODULE_INSTALL_DIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/efuConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/efuConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/efuConfigVersion.cmake cmake/efuAddModule.cmake
        DESTINATION ${EFU_CMAKE_INSTALL_DIR})

# Docs: README and docs/ (module READMEs: modules/CMakeLists.txt).
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR})

# systemd: efu@.service and the example instance file name absolute paths, which depend on the
# prefix given at install time (cmake --install --prefix, the .deb's /usr), so they are written
# then, into the build dir, and installed from there.
install(CODE "
  set(EFU_BIN_DIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  set(EFU_DOC_DIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}\")
  set(EFU_EXAMPLES_DIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/efu/examples\")
  set(EFU_CONFIGS_DIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/efu/configs\")
  configure_file(${PROJECT_SOURCE_DIR}/packaging/efu@.service.in
                 ${CMAKE_CURRENT_BINARY_DIR}/packaging/efu@.service @ONLY)
  configure_file(${PROJECT_SOURCE_DIR}/packaging/loki-a.conf.in
                 ${CMAKE_CURRENT_BINARY_DIR}/packaging/loki-a.conf @ONLY)
")
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/packaging/efu@.service DESTINATION lib/systemd/system)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/packaging/loki-a.conf
        DESTINATION ${CMAKE_INSTALL_DATADIR}/efu/examples)

# Debian package: cpack -G DEB in the build dir. Depends: Debian 12's packages of the libraries
# the programs and modules link (objdump -p: librdkafka.so.1, libspdlog.so.1.10, libfmt.so.9,
# libpcap.so.0.8, libpng16.so.16, libcpp-httplib.so.0.11 (efu-view), libstdc++, libgcc_s, libc),
# as dpkg-shlibdeps names them
# (spdlog's shlibs ask for the virtual libspdlog1.10-fmt9); scripts/test-install checks that
# dpkg-shlibdeps finds nothing missing from it.
set(EFU_PACKAGE_MAINTAINER "efu maintainers <maintainers@users.noreply.a-seed-9a9ecc78.example>"
    CACHE STRING "Maintainer field of the Debian package")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME efu)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "event formation unit: neutron-detector readout over UDP to Kafka events")
set(CPACK_PACKAGE_DESCRIPTION "efu receives detector readout datagrams over UDP, runs a \
detector module (caen, vmm3, trex, nmx, cbm, dream, timepix3, udp, example) that forms \
neutron events, or perfgen, which makes test events without input, and publishes them \
to Kafka as ev44 with counters as f144 and status as x5f2. Includes the systemd template \
unit efu@.service, the tools efu-dump, efu-view (a live page of the topics), efu-broker, \
udpgen and readoutgen, instrument configurations, and the module SDK (headers, static \
libraries, CMake package efu).")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${EFU_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34), libcpp-httplib0.11 (>= 0.11.4+ds), \
libfmt9 (>= 9.1.0+ds1), libgcc-s1 (>= 3.4), libpcap0.8 (>= 1.5.1), libpng16-16 (>= 1.6.2-1), \
librdkafka1 (>= 1.5.0), libspdlog1.10-fmt9, libstdc++6 (>= 12)")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "cmake, g++, libspdlog-dev, nlohmann-json3-dev")
set(CPACK_STRIP_FILES ON)
include(CPack)
