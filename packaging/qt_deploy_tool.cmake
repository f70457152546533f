# ember_find_qt_deploy_tool(VAR windeployqt|macdeployqt): the Qt deployment tool of the Qt the build
# uses (its imported target when Qt provides one, else found beside Qt's other tools).
function(ember_find_qt_deploy_tool var tool)
    if(TARGET Qt6::${tool})
        get_target_property(_path Qt6::${tool} IMPORTED_LOCATION)
    else()
        find_program(EMBER_${tool}_PATH ${tool} HINTS "${QT6_INSTALL_PREFIX}/bin" REQUIRED)
        set(_path "${EMBER_${tool}_PATH}")
    endif()
    set(${var} "${_path}" PARENT_SCOPE)
endfunction()
