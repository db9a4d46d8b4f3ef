# CMake toolchain file: cross-compile jetagent for 64-bit Arm Linux (Jetson) against a sysroot.
#
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=cross/aarch64-linux-gnu.cmake \
#         -DJETAGENT_SYSROOT=/path/to/sysroot
#
# The sysroot is a Debian 12 arm64 tree (cross/make-debian-sysroot.sh) or a Jetson root filesystem
# (cross/README.md); both use the multiarch aarch64-linux-gnu layout. Libraries, headers, CMake
# packages and pkg-config files are looked up only inside it. Tests run under qemu-user with the
# sysroot as their library root, so ctest works as on the board.
#
# Settings (cache variables or environment variables of the same name):
#   JETAGENT_SYSROOT        the sysroot (required)
#   JETAGENT_CROSS_PREFIX   compiler prefix (default aarch64-linux-gnu-: Debian's g++-aarch64-linux-gnu)
#   JETAGENT_EMULATOR       program that runs aarch64 binaries (default qemu-aarch64-static)

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

# try_compile re-reads this file without the -D values of the first run; the environment carries them.
foreach(var JETAGENT_SYSROOT JETAGENT_CROSS_PREFIX JETAGENT_EMULATOR)
    if(DEFINED ${var})
        set(ENV{${var}} "${${var}}")
    elseif(DEFINED ENV{${var}})
        set(${var} "$ENV{${var}}")
    endif()
endforeach()

if(NOT JETAGENT_SYSROOT)
    message(FATAL_ERROR "aarch64-linux-gnu.cmake: set JETAGENT_SYSROOT to an arm64 sysroot "
                        "(cross/make-debian-sysroot.sh makes one; cross/README.md explains Jetson rootfs)")
endif()
if(NOT IS_DIRECTORY "${JETAGENT_SYSROOT}/usr/lib/aarch64-linux-gnu")
    message(FATAL_ERROR "aarch64-linux-gnu.cmake: ${JETAGENT_SYSROOT} has no usr/lib/aarch64-linux-gnu; "
                        "is it an arm64 root filesystem?")
endif()
if(NOT JETAGENT_CROSS_PREFIX)
    set(JETAGENT_CROSS_PREFIX aarch64-linux-gnu-)
endif()
if(NOT JETAGENT_EMULATOR)
    set(JETAGENT_EMULATOR qemu-aarch64-static)
endif()

set(CMAKE_C_COMPILER ${JETAGENT_CROSS_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${JETAGENT_CROSS_PREFIX}g++)
set(CMAKE_SYSROOT "${JETAGENT_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH "${JETAGENT_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

# Shared libraries' own dependencies (OpenCV -> TBB, BLAS, ...) are resolved inside the sysroot.
set(_jetagent_rpath_link
    "-Wl,-rpath-link,${JETAGENT_SYSROOT}/usr/lib/aarch64-linux-gnu -Wl,-rpath-link,${JETAGENT_SYSROOT}/lib/aarch64-linux-gnu")
if(IS_DIRECTORY "${JETAGENT_SYSROOT}/usr/local/cuda/lib64")
    string(APPEND _jetagent_rpath_link " -Wl,-rpath-link,${JETAGENT_SYSROOT}/usr/local/cuda/lib64")
endif()
set(CMAKE_EXE_LINKER_FLAGS_INIT "${_jetagent_rpath_link}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${_jetagent_rpath_link}")

set(ENV{PKG_CONFIG_SYSROOT_DIR} "${JETAGENT_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR}
    "${JETAGENT_SYSROOT}/usr/lib/aarch64-linux-gnu/pkgconfig:${JETAGENT_SYSROOT}/usr/share/pkgconfig")

# ctest (and gtest_discover_tests) run the aarch64 binaries through this.
set(CMAKE_CROSSCOMPILING_EMULATOR "${JETAGENT_EMULATOR};-L;${JETAGENT_SYSROOT}")
