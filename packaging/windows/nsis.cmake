# The NSIS installer's CPack settings, shared by the real build (windows.cmake) and the stand-in
# payload that lints the script on Linux (lint/CMakeLists.txt). Our own template (NSIS.template.in)
# replaces CPack's, which always asks for administrator rights.
list(PREPEND CMAKE_MODULE_PATH ${CMAKE_CURRENT_LIST_DIR})
set(CPACK_MODULE_PATH ${CMAKE_MODULE_PATH})
set(CPACK_NSIS_PACKAGE_NAME Ember)
set(CPACK_NSIS_DISPLAY_NAME Ember)
set(CPACK_NSIS_MUI_ICON ${CMAKE_CURRENT_LIST_DIR}/../icons/ember.ico)
set(CPACK_NSIS_MUI_UNIICON ${CMAKE_CURRENT_LIST_DIR}/../icons/ember.ico)
set(CPACK_NSIS_COMPRESSOR "/SOLID lzma")
set(CPACK_EMBER_APP_EXE ember.exe)  # in bin/, as install_layout.cmake puts it
set(CPACK_PACKAGE_FILE_NAME "Ember-${PROJECT_VERSION}-win64-setup")
