# ember_utf8_program(TARGET): on Windows, TARGET runs with UTF-8 as its ANSI code page
# (utf8.manifest). Without it, a narrow path such as std::filesystem::path::string() or argv
# is in the user's legacy code page and a model under a non-Latin user name cannot be opened.
set(_ember_windows_dir ${CMAKE_CURRENT_LIST_DIR})
function(ember_utf8_program target)
    if(NOT WIN32)
        return()
    endif()
    if(MSVC)
        target_sources(${target} PRIVATE ${_ember_windows_dir}/utf8.manifest)
    else()
        target_sources(${target} PRIVATE ${_ember_windows_dir}/utf8_manifest.rc)
    endif()
endfunction()
