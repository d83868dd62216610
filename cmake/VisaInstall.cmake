# Installation: headers, the static libraries as exported targets (visa::dsl, visa::runtime,
# visa::interp, visa::jit, visa::samples, visa::random_programs, visa::mpi, visa::cli and visa::visa for all of them), the `visa`
# command line, and a CMake package so that `find_package(visa CONFIG REQUIRED)` works from the
# installed tree (cmake/visaConfig.cmake.in finds the Debian dependencies the targets carry).
include(CMakePackageConfigHelpers)

set(VISA_LIBRARY_TARGETS visa_dsl visa_runtime visa_interp visa_jit visa_samples visa_random_programs visa_mpi visa_cli_lib)
foreach(target ${VISA_LIBRARY_TARGETS})
  string(REGEX REPLACE "^visa_" "" export_name ${target})
  string(REGEX REPLACE "_lib$" "" export_name ${export_name})
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
endforeach()

# Everything a kernel program needs, in one name.
add_library(visa_all INTERFACE)
set_target_properties(visa_all PROPERTIES EXPORT_NAME visa)
target_link_libraries(visa_all INTERFACE ${VISA_LIBRARY_TARGETS})
add_library(visa::visa ALIAS visa_all)

install(TARGETS ${VISA_LIBRARY_TARGETS} visa_all EXPORT visaTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS visa RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(dir dsl runtime interp jit samples random_programs mpi tools)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${VISA_INSTALL_INCLUDEDIR}/${dir}
          FILES_MATCHING PATTERN "*.h")
endforeach()
install(FILES ${PROJECT_SOURCE_DIR}/visa.h DESTINATION ${VISA_INSTALL_INCLUDEDIR})

# An installed visa_jit links the shared libLLVM (jit/CMakeLists.txt); the package names that one file instead of loading LLVM's own
# package, whose configuration needs a C compiler and a dozen optional libraries a consumer lacks.
get_target_property(llvm_configurations LLVM IMPORTED_CONFIGURATIONS)
list(GET llvm_configurations 0 llvm_configuration)
get_target_property(VISA_LLVM_LIBRARY LLVM IMPORTED_LOCATION_${llvm_configuration})

set(VISA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/visa)
install(EXPORT visaTargets NAMESPACE visa:: DESTINATION ${VISA_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/visaConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/visaConfig.cmake INSTALL_DESTINATION ${VISA_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/visaConfigVersion.cmake VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/visaConfig.cmake ${PROJECT_BINARY_DIR}/visaConfigVersion.cmake
        DESTINATION ${VISA_CMAKE_DIR})
