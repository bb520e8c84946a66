# Warning flags for our own targets; third-party headers come in as SYSTEM includes.
add_library(c3_warnings INTERFACE)
target_compile_options(c3_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    -Wcast-align -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough>
  $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual>)
if(C3_WERROR)
  target_compile_options(c3_warnings INTERFACE $<$<COMPILE_LANGUAGE:C,CXX>:-Werror>)
endif()

if(C3_SANITIZE)
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=undefined>)
  add_link_options(-fsanitize=address,undefined)
  # libFuzzer's coverage feedback in everything the harnesses link; only the harnesses link
  # libFuzzer itself (fuzz/CMakeLists.txt).
  if(C3_BUILD_FUZZ)
    add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=fuzzer-no-link>)
  endif()
endif()
