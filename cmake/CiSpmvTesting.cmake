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
  add_executable(cispmv_test_${lower} ${generated} ${CMAKE_CURRENT_SOURCE_DIR}/test_main.cpp)
  target_link_libraries(cispmv_test_${lower} PRIVATE cispmv GTest::gtest)
  if(TARGET cispmv_kokkos_kernels)
    target_link_libraries(cispmv_test_${lower} PRIVATE cispmv_kokkos_kernels)
  endif()
  cispmv_warnings(cispmv_test_${lower})
  cispmv_sanitize(cispmv_test_${lower})
  target_include_directories(cispmv_test_${lower} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_definitions(cispmv_test_${lower} PRIVATE
    CISPMV_TEST_DATA_DIR="${CMAKE_CURRENT_SOURCE_DIR}/data")
  add_test(NAME ${lower} COMMAND cispmv_test_${lower})
endfunction()
