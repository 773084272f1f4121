# tlmc_add_library(<name> MODEL <file> [TARGET <target>] [OPT -O<n>] [THREADS <n>]
#                  [PRECISION fp32|bf16] [OPTIONS <tlmc option>...])
#
# Compiles a model with tlmc at build time into a static library target <name> that a
# program links with target_link_libraries(app PRIVATE <name>) (docs/cmake.md):
#   - the outputs are ${CMAKE_CURRENT_BINARY_DIR}/tlmc/<name>/lib<name>.a and <name>.h;
#   - tlmc runs with --name <name>, so the header is <name>.h and the C API is
#     <name>_run(), <name>_workspace_size(), ... whatever name the model gives itself;
#   - the library is rebuilt when the model, a weight file it reads (through tlmc's
#     --depfile), the tlmc executable or the options change;
#   - linking it also links Threads::Threads and m (the archive is otherwise self-contained).
# A relative MODEL is relative to CMAKE_CURRENT_SOURCE_DIR.
#
# Included by tlmcConfig.cmake (installed package) and by cmake/CMakeLists.txt (tlmc's own
# build tree). Expects an executable target tlmc::tlmc.

if(CMAKE_VERSION VERSION_LESS 3.20)
  message(FATAL_ERROR "tlmc_add_library needs CMake 3.20 or newer (for DEPFILE with every generator); "
                      "this is CMake ${CMAKE_VERSION}")
endif()

# A function records the policies in force where it is defined: with CMP0116 NEW, Ninja
# reads tlmc's depfile (absolute paths) relative to the right folder whatever the calling
# project's cmake_minimum_required says.
cmake_policy(PUSH)
cmake_policy(VERSION 3.20)
if(POLICY CMP0116)
  cmake_policy(SET CMP0116 NEW)
endif()

function(tlmc_add_library name)
  string(CONCAT usage "write: tlmc_add_library(<name> MODEL <model.yaml> [TARGET <target>] [OPT -O0|-O1|-O2|-O3] "
                      "[THREADS <n>] [PRECISION fp32|bf16] [OPTIONS <tlmc option>...])")
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "MODEL;TARGET;OPT;THREADS;PRECISION" "OPTIONS")

  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "tlmc_add_library: the name '${name}' is not a C identifier; it becomes the "
                        "target name, the header <name>.h and the API prefix <name>_run, so use letters, "
                        "digits and '_' only, e.g. tlmc_add_library(mynet MODEL mynet.yaml)")
  endif()
  if(TARGET ${name})
    message(FATAL_ERROR "tlmc_add_library: a target named '${name}' already exists; choose another name")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tlmc_add_library(${name}): unexpected argument(s) '${ARG_UNPARSED_ARGUMENTS}'; ${usage}")
  endif()
  if(ARG_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "tlmc_add_library(${name}): ${ARG_KEYWORDS_MISSING_VALUES} given without a value; ${usage}")
  endif()
  if(NOT DEFINED ARG_MODEL)
    message(FATAL_ERROR "tlmc_add_library(${name}): no MODEL given; ${usage}")
  endif()
  if(NOT TARGET tlmc::tlmc)
    message(FATAL_ERROR "tlmc_add_library(${name}): there is no tlmc::tlmc executable target; "
                        "call find_package(tlmc REQUIRED) before tlmc_add_library")
  endif()

  get_filename_component(model "${ARG_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  get_source_file_property(model_generated "${model}" GENERATED)
  if(NOT EXISTS "${model}" AND NOT model_generated)
    message(FATAL_ERROR "tlmc_add_library(${name}): the model '${ARG_MODEL}' does not exist (looked for ${model}; "
                        "a relative MODEL is relative to ${CMAKE_CURRENT_SOURCE_DIR})")
  endif()

  set(options --name ${name})
  if(DEFINED ARG_TARGET)
    list(APPEND options --target ${ARG_TARGET})
  endif()
  if(DEFINED ARG_OPT)
    if(NOT ARG_OPT MATCHES "^-O[0-3]$")
      message(FATAL_ERROR "tlmc_add_library(${name}): OPT '${ARG_OPT}' is not an optimisation level; "
                          "write OPT -O0, OPT -O1, OPT -O2 or OPT -O3")
    endif()
    list(APPEND options ${ARG_OPT})
  endif()
  if(DEFINED ARG_THREADS)
    if(NOT ARG_THREADS MATCHES "^[0-9]+$")
      message(FATAL_ERROR "tlmc_add_library(${name}): THREADS '${ARG_THREADS}' is not a count; write THREADS <n> "
                          "with n >= 1, or THREADS 0 for all cores")
    endif()
    list(APPEND options --threads ${ARG_THREADS})
  endif()
  if(DEFINED ARG_PRECISION)
    if(NOT ARG_PRECISION MATCHES "^(fp32|bf16)$")
      message(FATAL_ERROR "tlmc_add_library(${name}): PRECISION '${ARG_PRECISION}' is not a precision; "
                          "write PRECISION fp32 or PRECISION bf16 (bf16 needs a target with AVX512_BF16 or AMX)")
    endif()
    list(APPEND options --precision ${ARG_PRECISION})
  endif()
  list(APPEND options ${ARG_OPTIONS})

  if(NOT TARGET Threads::Threads)
    find_package(Threads REQUIRED)
  endif()
  set(link_libraries Threads::Threads m)
  if(DEFINED ARG_TARGET AND ARG_TARGET MATCHES "^cuda")
    if(NOT TARGET CUDA::cudart)
      find_package(CUDAToolkit REQUIRED)
    endif()
    list(APPEND link_libraries CUDA::cudart)
  endif()

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/tlmc/${name}")
  set(lib "${dir}/lib${name}.a")
  set(header "${dir}/${name}.h")
  set(depfile "${dir}/${name}.d")
  # Made now: CMake rejects an INTERFACE_INCLUDE_DIRECTORIES folder that does not exist.
  file(MAKE_DIRECTORY "${dir}")

  file(RELATIVE_PATH model_shown "${CMAKE_SOURCE_DIR}" "${model}")
  add_custom_command(
    OUTPUT "${lib}" "${header}"
    COMMAND tlmc::tlmc "${model}" -o "${lib}" --emit=lib ${options} --depfile "${depfile}"
    DEPENDS "${model}" tlmc::tlmc "$<TARGET_FILE:tlmc::tlmc>"
    DEPFILE "${depfile}"
    COMMENT "tlmc: compiling ${model_shown} into lib${name}.a"
    VERBATIM)
  add_custom_target(tlmc_generate_${name} DEPENDS "${lib}" "${header}")

  add_library(${name} STATIC IMPORTED GLOBAL)
  set_target_properties(${name} PROPERTIES
    IMPORTED_LOCATION "${lib}"
    INTERFACE_INCLUDE_DIRECTORIES "${dir}"
    INTERFACE_LINK_LIBRARIES "${link_libraries}")
  add_dependencies(${name} tlmc_generate_${name})
endfunction()

cmake_policy(POP)
