# Windows: the Qt runtime beside ember.exe (windeployqt, run at install time so `cpack -G NSIS`
# packages it), the CUDA runtime when the CUDA backend is built, and the NSIS installer settings.
include(${CMAKE_CURRENT_LIST_DIR}/nsis.cmake)

include(${CMAKE_CURRENT_LIST_DIR}/../qt_deploy_tool.cmake)
ember_find_qt_deploy_tool(EMBER_WINDEPLOYQT windeployqt)
# --qmldir makes windeployqt scan the QML sources for imports (QtQuick.Controls, Layouts, …): the
# QML modules an installer most often forgets.
install(CODE "
    set(_bin \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${EMBER_BIN_INSTALL_DIR}\")
    execute_process(COMMAND \"${EMBER_WINDEPLOYQT}\" --release --no-translations --no-system-d3d-compiler
                            --qmldir \"${PROJECT_SOURCE_DIR}/qml\" --dir \"\${_bin}\" \"\${_bin}/ember.exe\"
                    RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
        message(FATAL_ERROR \"windeployqt failed (\${_rc})\")
    endif()")

if(EMBER_CUDA)
    find_package(CUDAToolkit REQUIRED)
    file(GLOB _ember_cuda_dlls "${CUDAToolkit_BIN_DIR}/cudart64_*.dll" "${CUDAToolkit_BIN_DIR}/cublas64_*.dll"
                               "${CUDAToolkit_BIN_DIR}/cublasLt64_*.dll")
    install(FILES ${_ember_cuda_dlls} DESTINATION ${EMBER_BIN_INSTALL_DIR})
endif()

# The non-Qt DLLs ember.exe loads (curl, OpenSSL, SQLite from vcpkg), found the way the loader
# would find them; Windows' own DLLs stay out.
set(_ember_dll_dirs)
foreach(_prefix IN LISTS CMAKE_PREFIX_PATH)
    list(APPEND _ember_dll_dirs "${_prefix}/bin")
endforeach()
if(DEFINED VCPKG_INSTALLED_DIR AND DEFINED VCPKG_TARGET_TRIPLET)
    list(APPEND _ember_dll_dirs "${VCPKG_INSTALLED_DIR}/${VCPKG_TARGET_TRIPLET}/bin")
endif()
install(CODE "
    set(_bin \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${EMBER_BIN_INSTALL_DIR}\")
    file(GET_RUNTIME_DEPENDENCIES
         EXECUTABLES \"\${_bin}/ember.exe\" \"\${_bin}/ember-hub.exe\"
         RESOLVED_DEPENDENCIES_VAR _deps
         DIRECTORIES ${_ember_dll_dirs}
         PRE_EXCLUDE_REGEXES \"^api-ms-\" \"^ext-ms-\"
         POST_EXCLUDE_REGEXES \".*[Ss]ystem32.*\")
    file(INSTALL \${_deps} DESTINATION \"\${_bin}\")")
