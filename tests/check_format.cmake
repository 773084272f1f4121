# Fails when a C or C++ source of the project is not formatted as .clang-format says.
# Run by ctest (label lint): cmake -DCLANG_FORMAT=... -DSOURCE_DIR=... -P check_format.cmake
set(folders bench codegen driver examples frontend ir reference runtime scheduler tests toolchain tune)
set(files "")
foreach(folder ${folders})
  file(GLOB_RECURSE found "${SOURCE_DIR}/${folder}/*.cc" "${SOURCE_DIR}/${folder}/*.h" "${SOURCE_DIR}/${folder}/*.c"
       "${SOURCE_DIR}/${folder}/*.cu" "${SOURCE_DIR}/${folder}/*.cuh")
  list(APPEND files ${found})
endforeach()
list(FILTER files EXCLUDE REGEX "/tests/codegen/golden/")
execute_process(COMMAND ${CLANG_FORMAT} --dry-run --Werror ${files}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "clang-format finds unformatted code (run clang-format -i on it):\n${err}")
endif()
list(LENGTH files count)
message(STATUS "${count} files formatted")
