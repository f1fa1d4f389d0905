# cmake -DSOURCE_DIR=<fuzz/project> -DBUILD_DIR=<dir> -DCLANGXX=<clang++> -P build_fuzz_project.cmake
# Configures and builds every fuzz target once, for the <name>_fuzz tests that run them.
foreach(var SOURCE_DIR BUILD_DIR CLANGXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "build_fuzz_project.cmake: ${var} is not set")
  endif()
endforeach()

execute_process(COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${BUILD_DIR} -DCMAKE_CXX_COMPILER=${CLANGXX}
                RESULT_VARIABLE result)
if(result)
  message(FATAL_ERROR "configuring the fuzz project failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} -j2 RESULT_VARIABLE result)
if(result)
  message(FATAL_ERROR "building the fuzz project failed")
endif()
