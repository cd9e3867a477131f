# cispmv_warnings(TARGET): -Wall -Wextra on cispmv's own code (Kokkos, Kokkos Kernels and the system
# libraries come in as system headers and are not checked), -Werror with CISPMV_WARNINGS_AS_ERRORS.
# nvcc_wrapper forwards these to the host compiler.
function(cispmv_warnings target)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    return()
  endif()
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra)
    if(CISPMV_WARNINGS_AS_ERRORS)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()

# cispmv_sanitize(TARGET): with CISPMV_SANITIZE (e.g. "address,undefined"), the target is compiled with
# those sanitizers (undefined behaviour aborts instead of only printing) and links them PUBLIC, so
# that the tests, the program and every consumer of the installed package link the runtime too.
# Kokkos itself is not instrumented (its allocations are still checked: they go through malloc).
function(cispmv_sanitize target)
  if(NOT CISPMV_SANITIZE)
    return()
  endif()
  get_target_property(type ${target} TYPE)
  # CISPMV_SANITIZE_OPTIMIZATION (-O1 by default): instrumented code at -O3 compiles several times
  # slower for little more coverage, at -O0 it runs several times slower (CI's tests: 4-5x)
  set(flags -fsanitize=${CISPMV_SANITIZE} -fno-omit-frame-pointer ${CISPMV_SANITIZE_OPTIMIZATION})
  if(CISPMV_SANITIZE MATCHES "undefined")
    list(APPEND flags -fno-sanitize-recover=undefined)
  endif()
  if(CISPMV_NO_SANITIZE)  # checks left out (-fno-sanitize=...)
    list(APPEND flags -fno-sanitize=${CISPMV_NO_SANITIZE})
  endif()
  if(type STREQUAL "INTERFACE_LIBRARY")
    return()
  elseif(type STREQUAL "EXECUTABLE")
    target_compile_options(${target} PRIVATE ${flags})
    target_link_options(${target} PRIVATE ${flags})
  else()
    target_compile_options(${target} PRIVATE ${flags})
    target_link_options(${target} PUBLIC -fsanitize=${CISPMV_SANITIZE})
  endif()
endfunction()
