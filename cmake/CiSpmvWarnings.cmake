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
