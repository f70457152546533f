# macOS: Ember.app (Info.plist, icon, the demo model in Contents/Resources, the command-line tools
# beside the app in Contents/MacOS), the Qt frameworks and QML modules copied in by macdeployqt at
# install time, and a drag-to-Applications .dmg (`cpack -G DragNDrop`). CPU only: no Metal backend.
set_target_properties(ember PROPERTIES
    MACOSX_BUNDLE_GUI_IDENTIFIER ${EMBER_APP_ID}
    MACOSX_BUNDLE_BUNDLE_NAME Ember
    MACOSX_BUNDLE_ICON_FILE ember.icns
    MACOSX_BUNDLE_SHORT_VERSION_STRING ${PROJECT_VERSION}
    MACOSX_BUNDLE_BUNDLE_VERSION ${PROJECT_VERSION})
set(_ember_icns ${CMAKE_CURRENT_SOURCE_DIR}/icons/ember.icns)
set_source_files_properties(${_ember_icns} PROPERTIES MACOSX_PACKAGE_LOCATION Resources)
target_sources(ember PRIVATE ${_ember_icns})

include(${CMAKE_CURRENT_LIST_DIR}/../qt_deploy_tool.cmake)
ember_find_qt_deploy_tool(EMBER_MACDEPLOYQT macdeployqt)
install(CODE "
    execute_process(COMMAND \"${EMBER_MACDEPLOYQT}\" \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/Ember.app\"
                            -qmldir=${PROJECT_SOURCE_DIR}/qml -always-overwrite
                    RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
        message(FATAL_ERROR \"macdeployqt failed (\${_rc})\")
    endif()")

set(CPACK_DMG_VOLUME_NAME Ember)
set(CPACK_DMG_FORMAT UDZO)
set(CPACK_DMG_SLA_USE_RESOURCE_FILE_LICENSE OFF)
set(CPACK_PACKAGE_FILE_NAME "Ember-${PROJECT_VERSION}-macos")
