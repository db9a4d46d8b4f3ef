# Unity builds (JETAGENT_UNITY_BUILD): CMake concatenates each target's sources into batches of
# JETAGENT_UNITY_BATCH_SIZE and compiles one batch per compiler run. The switch is global
# (CMAKE_UNITY_BUILD initialises every target created after this file is included), so a new
# library or test program is batched without a line of its own.
#
# What a batch needs from its sources: names at file scope (anonymous namespaces, statics, `using`)
# distinct within the target, and no macro left defined for the next source. A source that cannot
# share a batch says so with SKIP_UNITY_BUILD_INCLUSION; one with its own COMPILE_OPTIONS or
# COMPILE_DEFINITIONS (bilinear_crop.cpp's -ffp-contract=off, the kernels' -O3) is compiled alone
# by CMake itself, with its own flags.
#
# compile_commands.json then names the batch files, not the sources: clang-tidy reads a database
# with one entry per source again, made by tools/compile_db.py.
set(JETAGENT_UNITY_BATCH_SIZE 8 CACHE STRING "Sources per compiler run in unity builds")
if(JETAGENT_UNITY_BUILD)
    set(CMAKE_UNITY_BUILD ON)
    set(CMAKE_UNITY_BUILD_BATCH_SIZE ${JETAGENT_UNITY_BATCH_SIZE})
    # GCC warns when a class of external linkage defined outside the main file has a member of a
    # type from an anonymous namespace (meant for headers); in a batch every source is outside the
    # main file, so each source's own Impl with its own helper types would be flagged. Batched
    # targets only: the others keep the warning, and their compile commands.
    add_compile_options(
        "$<$<AND:$<CXX_COMPILER_ID:GNU>,$<BOOL:$<TARGET_PROPERTY:UNITY_BUILD>>>:-Wno-subobject-linkage>")
endif()
