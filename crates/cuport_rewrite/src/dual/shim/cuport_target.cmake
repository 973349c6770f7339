# cuport_enable_language(): the kernel language of the backend (CUDA, HIP,
# or ASC for Ascend C SIMT); backends whose kernels need a port compile
# host code as C++.
macro(cuport_enable_language)
  if(NOT CUPORT_SOURCE_LANGUAGE STREQUAL "CXX")
    enable_language(${CUPORT_SOURCE_LANGUAGE})
  endif()
endmacro()

# cuport_target(<target>): builds <target> for the selected backend.
function(cuport_target target)
  target_compile_definitions(${target} PRIVATE ${CUPORT_DEFINITION})
  target_include_directories(${target} PRIVATE ${CUPORT_INCLUDE_DIRS})
  target_link_libraries(${target} PRIVATE ${CUPORT_LINK_LIBRARIES})
  get_target_property(cuport_sources ${target} SOURCES)
  foreach(source IN LISTS cuport_sources)
    if(source MATCHES "\\.cu$")
      set_source_files_properties(${source} TARGET_DIRECTORY ${target}
        PROPERTIES LANGUAGE ${CUPORT_SOURCE_LANGUAGE})
    endif()
  endforeach()
  if(CUPORT_BACKEND_ID STREQUAL "ASCEND")
    target_sources(${target} PRIVATE "${CUPORT_DIR}/ascend_helpers.cpp")
  endif()
endfunction()
