# cispmv_test_optimization(TARGET): CISPMV_TEST_OPTIMIZATION (-Og by default) on a test executable's own code in
# host builds. The tests instantiate every format's kernels for every backend and scalar type: at -O3 the largest
# unit took 244 s to compile, at -Og 72 s, and the backend and host tests run in 116 s against 69 s (2 cores). The
# library and the `cispmv` program keep the build type's optimization, and ctest runs the program too. GPU builds
# (nvcc_wrapper) and sanitized builds (CISPMV_SANITIZE_OPTIMIZATION) keep their own.
function(cispmv_test_optimization target)
  if(CISPMV_TEST_OPTIMIZATION AND NOT CISPMV_SANITIZE AND NOT CUDA IN_LIST CISPMV_BACKENDS
     AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE ${CISPMV_TEST_OPTIMIZATION})
  endif()
endfunction()

# cispmv_test_executable(TARGET LIBRARY SOURCE...): a test executable of SOURCEs linking LIBRARY and GoogleTest, with
# the tests' include directory and data folder (CISPMV_TEST_DATA_DIR), cispmv's warnings, the sanitizers and the
# tests' optimization.
function(cispmv_test_executable target library)
  add_executable(${target} ${ARGN})
  target_link_libraries(${target} PRIVATE ${library} GTest::gtest)
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_definitions(${target} PRIVATE CISPMV_TEST_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data")
  cispmv_warnings(${target})
  cispmv_sanitize(${target})
  cispmv_test_optimization(${target})
endfunction()

# cispmv_add_backend_test(BACKEND SOURCES): one executable cispmv_test_<backend> whose translation
# units are generated as  #include "backend_<backend>.hpp"  +  #include "<feature>/tst_<topic>.hpp".
function(cispmv_add_backend_test backend bodies)
  string(TOLOWER ${backend} lower)
  set(generated "")
  foreach(body ${bodies})
    get_filename_component(topic ${body} NAME_WE)
    set(tu ${CMAKE_CURRENT_BINARY_DIR}/${lower}/${topic}_${lower}.cpp)
    file(CONFIGURE OUTPUT ${tu} CONTENT
         "#include \"backend_${lower}.hpp\"\n#include \"${body}\"\n" @ONLY)
    list(APPEND generated ${tu})
  endforeach()
  cispmv_test_executable(cispmv_test_${lower} cispmv ${generated} ${CMAKE_CURRENT_SOURCE_DIR}/test_main.cpp)
  if(TARGET cispmv_kokkos_kernels)
    target_link_libraries(cispmv_test_${lower} PRIVATE cispmv_kokkos_kernels)
  endif()
  add_test(NAME ${lower} COMMAND cispmv_test_${lower})
  cispmv_test_processors(${lower} ${backend})
endfunction()

# cispmv_test_processors(TEST BACKEND): what `ctest -j N` reserves for a test. The Serial tests run on one thread
# (their host-side helpers too: OMP_NUM_THREADS=1, the same time on 2 cores), so they run beside a consumer's build or
# a one-rank MPI test; a test on the OpenMP host space (the OpenMP and host tests; the CUDA ones' host oracles)
# takes every core, and runs alone.
function(cispmv_test_processors name backend)
  if(backend STREQUAL "SERIAL")
    set_tests_properties(${name} PROPERTIES PROCESSORS 1 ENVIRONMENT OMP_NUM_THREADS=1)
  else()
    include(ProcessorCount)
    ProcessorCount(cores)
    if(cores GREATER 1)
      set_tests_properties(${name} PROPERTIES PROCESSORS ${cores})
    endif()
  endif()
endfunction()
