# Fails when clang-tidy (.clang-tidy at the root) finds a problem in the compiler's sources.
# Run by ctest (label lint): cmake -DCLANG_TIDY=... -DSOURCE_DIR=... -DBUILD_DIR=... -P check_tidy.cmake
set(folders codegen driver frontend ir reference scheduler toolchain tune)
set(files "")
foreach(folder ${folders})
  file(GLOB found "${SOURCE_DIR}/${folder}/*.cc")
  list(APPEND files ${found})
endforeach()
execute_process(COMMAND ${CLANG_TIDY} -p ${BUILD_DIR} --quiet ${files}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "clang-tidy finds problems:\n${out}")
endif()
list(LENGTH files count)
message(STATUS "${count} files clean")
