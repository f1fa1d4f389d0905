# cmake -DFUZZER=<binary> -DCORPUS=<seed dir> -DWORK_DIR=<dir> -DRUNS=<n> -DSECONDS=<s> -DMAX_LEN=<bytes>
#       -P run_fuzz_target.cmake
# Runs a built fuzz target over its seed corpus for RUNS inputs or SECONDS, whichever ends first, with
# a fixed seed, so that a run repeats the same inputs as far as it gets. New inputs go to a scratch
# corpus in WORK_DIR, never to the sources; a failing input is saved in WORK_DIR and the command that
# replays it is printed.
foreach(var FUZZER CORPUS WORK_DIR RUNS SECONDS MAX_LEN)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzz_target.cmake: ${var} is not set")
  endif()
endforeach()

set(scratch ${WORK_DIR}/scratch-corpus)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${scratch})
# -timeout: an input that hangs fails the test instead of its CTest timeout.
execute_process(
  COMMAND ${FUZZER} -runs=${RUNS} -max_total_time=${SECONDS} -seed=1 -max_len=${MAX_LEN} -timeout=30 -rss_limit_mb=2048
          -artifact_prefix=${WORK_DIR}/ ${scratch} ${CORPUS}
  RESULT_VARIABLE result)
if(result)
  file(GLOB failing_inputs ${WORK_DIR}/crash-* ${WORK_DIR}/leak-* ${WORK_DIR}/timeout-* ${WORK_DIR}/oom-*)
  if(NOT failing_inputs)
    message(FATAL_ERROR "${FUZZER} failed (exit status ${result}) without saving an input; see its output above")
  endif()
  list(JOIN failing_inputs "\n  " listed)
  list(GET failing_inputs 0 first)
  message(FATAL_ERROR "${FUZZER} found a failing input, saved as\n  ${listed}\nReplay it with\n  ${FUZZER} ${first}")
endif()
