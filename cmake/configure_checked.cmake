# jetagent_configure_file(INPUT OUTPUT): configure_file(... @ONLY) that stops configuring when the
# template names a variable nobody set. configure_file writes an undefined @VAR@ as an empty
# string, which is how a postinst once ran `systemd-sysusers /jetagent.conf`. A variable set to
# an empty string on purpose passes; one never set does not. Usable in script mode (cmake -P).
function(jetagent_configure_file input output)
    get_filename_component(_input "${input}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    file(READ "${_input}" _template)
    string(REGEX MATCHALL "@[A-Za-z_][A-Za-z0-9_]*@" _references "${_template}")
    list(REMOVE_DUPLICATES _references)
    set(_undefined "")
    foreach(_reference IN LISTS _references)
        string(REGEX REPLACE "^@(.*)@$" "\\1" _name "${_reference}")
        if(NOT DEFINED ${_name})
            list(APPEND _undefined "${_name}")
        endif()
    endforeach()
    if(_undefined)
        string(REPLACE ";" ", " _undefined "${_undefined}")
        message(FATAL_ERROR "jetagent: ${_input} names variables that are not set here: "
            "${_undefined}. configure_file would write them as empty strings; set them first.")
    endif()
    configure_file("${_input}" "${output}" @ONLY)
endfunction()
