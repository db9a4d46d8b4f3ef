# Writes version.h from version.h.in with the git description of the source tree, at build time, so
# the version a binary reports matches the commit it was built from. configure_file leaves the file
# untouched (no rebuild) when nothing changed.
#   cmake -DSOURCE_DIR=... -DINPUT=... -DOUTPUT=... -DPROJECT_VERSION=... -DBUILD_TYPE=... -P version.cmake
set(JETAGENT_VERSION_STRING "${PROJECT_VERSION}")
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS "${SOURCE_DIR}/.git")
    execute_process(COMMAND "${GIT_EXECUTABLE}" describe --always --dirty --abbrev=10
        WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE describe
        OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(describe)
        set(JETAGENT_VERSION_STRING "${PROJECT_VERSION}+${describe}")
    endif()
endif()
set(CMAKE_BUILD_TYPE "${BUILD_TYPE}")
include("${CMAKE_CURRENT_LIST_DIR}/../cmake/configure_checked.cmake")
jetagent_configure_file("${INPUT}" "${OUTPUT}")
