# cmake -P: installs the built attn_core (component library) into WORK_DIR/prefix, then configures,
# builds and runs tests/install/consumer against it with find_package(attn). Builds only the
# consumer: the library is the one already built in ATTN_BUILD_DIR.
foreach(var ATTN_BUILD_DIR CONSUMER_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run.cmake needs -D${var}=...")
  endif()
endforeach()

# Runs the command; on failure stops with its output.
function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "failed (${code}): ${ARGN}\n${out}")
  endif()
  message(STATUS "ok: ${ARGN}")
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run_step(${CMAKE_COMMAND} --install ${ATTN_BUILD_DIR} --prefix ${prefix} --component library)
if(EXISTS ${prefix}/bin/attn OR EXISTS ${prefix}/include/attn/cli)
  message(FATAL_ERROR "the library component installed command-line code")
endif()
run_step(${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_PREFIX_PATH=${prefix})
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step(${WORK_DIR}/build/consumer)
file(REMOVE_RECURSE ${WORK_DIR})
