# Installs the library, headers, tools, a CMake package (find_package(Chorus) -> Chorus::chorus) and chorus.pc.
include(CMakePackageConfigHelpers)

install(TARGETS chorus EXPORT ChorusTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/chorus DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT ChorusTargets NAMESPACE Chorus:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Chorus)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/ChorusConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ChorusConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Chorus)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/ChorusConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ChorusConfig.cmake ${PROJECT_BINARY_DIR}/ChorusConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Chorus)
configure_file(${PROJECT_SOURCE_DIR}/cmake/chorus.pc.in ${PROJECT_BINARY_DIR}/chorus.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/chorus.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
