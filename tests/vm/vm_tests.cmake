# jetagent against the kernel's vivid V4L2 test driver in a small qemu VM (tests/vm/vivid-test.sh).
# Native x86-64 builds only: the VM runs the host's own binary and libraries. Not in sanitizer
# builds (the runtime and its slowdown do not belong in the VM). Labels slow;vm: other scripts
# exclude it.
# The script exits 77 (skipped) when it cannot install qemu or fetch the kernel, unless
# JETAGENT_REQUIRE_VM=1 (CI), where that is a failure.
if(NOT CMAKE_CROSSCOMPILING AND NOT JETAGENT_SANITIZE
    AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64)$")
    find_package(nlohmann_json 3 REQUIRED)
    add_executable(jetagent_vivid_check ${CMAKE_CURRENT_LIST_DIR}/vivid_check.cpp)
    target_link_libraries(jetagent_vivid_check PRIVATE nlohmann_json::nlohmann_json onnx_proto
        protobuf::libprotobuf jetagent_warnings)
    find_program(JETAGENT_VM_BASH bash)
    if(JETAGENT_VM_BASH)
        add_test(NAME VividCheckRejectsBadLogs
            COMMAND ${JETAGENT_VM_BASH} ${CMAKE_CURRENT_LIST_DIR}/vivid_check_test.sh
                $<TARGET_FILE:jetagent_vivid_check>)
        set_tests_properties(VividCheckRejectsBadLogs PROPERTIES LABELS unit)
        add_test(NAME VividVMCapture
            COMMAND ${JETAGENT_VM_BASH} ${CMAKE_CURRENT_LIST_DIR}/vivid-test.sh
                --checker $<TARGET_FILE:jetagent_vivid_check>
                $<TARGET_FILE:jetagent> ${CMAKE_CURRENT_BINARY_DIR}/vm-cache)
        # Beside other tests, not alone: the guest's two CPUs are 7-14% busy in its scenarios
        # (capture at 15 fps in real time), and the scenarios' limits come from the guest's
        # measured speed. Alone, its 77 s left the second core to clang-tidy.
        set_tests_properties(VividVMCapture PROPERTIES
            LABELS "slow;vm" TIMEOUT 1200 SKIP_RETURN_CODE 77)
    else()
        message(WARNING "bash is missing: the vivid VM test is left out")
    endif()
endif()
