# Linux: the desktop entry, icons and AppStream metadata, and the .deb/.rpm settings.
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/linux/${EMBER_APP_ID}.desktop
        DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/linux/${EMBER_APP_ID}.metainfo.xml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/icons/${EMBER_APP_ID}.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
foreach(size 16 24 32 48 64 128 256 512)
    install(FILES ${CMAKE_CURRENT_SOURCE_DIR}/icons/${EMBER_APP_ID}-${size}.png
            DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps
            RENAME ${EMBER_APP_ID}.png)
endforeach()

# Debian: library dependencies are computed by dpkg-shlibdeps; what it cannot see are the QML
# modules and plugins Qt loads at run time, the usual cause of "installed but won't start".
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "qml6-module-qtquick, qml6-module-qtquick-controls, qml6-module-qtquick-layouts, qml6-module-qtquick-window, \
qml6-module-qtquick-templates, qml6-module-qtqml-workerscript, qml6-module-qtqml, libqt6svg6")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qt6-wayland")

# RPM: rpmbuild's automatic requirements cover the libraries; the QML modules are Fedora's names.
set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_GROUP "Applications/Productivity")
set(CPACK_RPM_PACKAGE_REQUIRES "qt6-qtdeclarative, qt6-qtsvg")
set(CPACK_RPM_PACKAGE_AUTOREQ ON)
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
    /usr/share/applications /usr/share/metainfo /usr/share/icons /usr/share/icons/hicolor)
# No /usr/lib/.build-id links: they would clash with other packages' and serve no debuginfo package.
set(CPACK_RPM_SPEC_MORE_DEFINE "%define _build_id_links none")
