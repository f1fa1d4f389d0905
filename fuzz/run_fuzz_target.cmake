# cmake -DSOURCE_DIR=<fuzz project> -DBUILD_DIR=<dir> -DCLANGXX=<clang++> -DRUNS=<n> -P run_fuzz_target.cmake
# Configures and builds the fuzz project, then runs it over its seed corpus for RUNS inputs with a
# fixed seed, so a failure in CI replays. New inputs go to a scratch corpus, never to the sources.
foreach(var SOURCE_DIR BUILD_DIR CLANGXX RUNS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzz_target.cmake: ${var} is not set")
  endif()
endforeach()

execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BUILD_DIR} -DCMAKE_CXX_COMPILER=${CLANGXX}
                RESULT_VARIABLE result)
if(result)
  message(FATAL_ERROR "configuring the fuzz target failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} -j2 RESULT_VARIABLE result)
if(result)
  message(FATAL_ERROR "building the fuzz target failed")
endif()

get_filename_component(target_name ${SOURCE_DIR} NAME)
set(scratch ${BUILD_DIR}/scratch-corpus)
file(REMOVE_RECURSE ${scratch})
file(MAKE_DIRECTORY ${scratch})
execute_process(
  COMMAND ${BUILD_DIR}/fuzz_${target_name} -runs=${RUNS} -seed=1 -max_len=65536 -rss_limit_mb=2048
          -artifact_prefix=${BUILD_DIR}/ ${scratch} ${SOURCE_DIR}/corpus
  RESULT_VARIABLE result)
if(result)
  message(FATAL_ERROR "fuzz_${target_name} found a failing input (saved under ${BUILD_DIR}/); replay it with "
                      "${BUILD_DIR}/fuzz_${target_name} <that file>")
endif()
