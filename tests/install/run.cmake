# cmake -P: installs the built attn_core (component library) into WORK_DIR/prefix, then configures,
# builds and runs tests/install/consumer against it with find_package(attn). Builds only the
# consumer: the library is the one already built in ATTN_BUILD_DIR. docs/library.md's example
# (consumer/translate.cpp, quoted there whole) translates with a model the binary trains here, and
# must print what attn translate prints with the same options.
foreach(var ATTN_BUILD_DIR CONSUMER_DIR WORK_DIR ATTN_BINARY SHARED_DIR DOCS)
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

# The example is docs/library.md's, to the letter.
file(READ ${CONSUMER_DIR}/translate.cpp example)
file(READ ${DOCS} docs)
string(FIND "${docs}" "${example}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "docs/library.md does not quote tests/install/consumer/translate.cpp as it is")
endif()
# A tiny model of 30 steps on 400 pairs, and the example's output against the binary's.
set(model ${WORK_DIR}/model)
foreach(side en de)
  execute_process(COMMAND head -n 400 ${SHARED_DIR}/data/mt-ende/train.${side} OUTPUT_FILE ${WORK_DIR}/train.${side})
endforeach()
execute_process(COMMAND head -n 8 ${SHARED_DIR}/data/mt-ende/dev.en OUTPUT_FILE ${WORK_DIR}/dev.en)
run_step(${ATTN_BINARY} train --model-dir ${model} --set data.train_src=${WORK_DIR}/train.en
  --set data.train_tgt=${WORK_DIR}/train.de --set data.valid_src= --set data.valid_tgt= --set data.vocab_size=300
  --set model.d_model=32 --set model.heads=2 --set model.encoder_layers=1 --set model.decoder_layers=1
  --set model.d_ff=48 --set train.max_steps=30 --set train.max_tokens=600 --set train.lr=0.002
  --set train.schedule=constant --threads 2)
execute_process(COMMAND ${WORK_DIR}/build/translate_example ${model} INPUT_FILE ${WORK_DIR}/dev.en
  RESULT_VARIABLE code OUTPUT_VARIABLE got ERROR_VARIABLE err)
execute_process(COMMAND ${ATTN_BINARY} translate --model ${model} --beam 4 --n-best 2 --alignment
  INPUT_FILE ${WORK_DIR}/dev.en OUTPUT_VARIABLE want ERROR_VARIABLE err2)
if(NOT code EQUAL 0 OR NOT got STREQUAL want OR got STREQUAL "")
  message(FATAL_ERROR "the example (${code}: ${err}) printed\n${got}\nattn translate printed\n${want}")
endif()
message(STATUS "ok: the example prints what attn translate --beam 4 --n-best 2 --alignment prints")
file(REMOVE_RECURSE ${WORK_DIR})
