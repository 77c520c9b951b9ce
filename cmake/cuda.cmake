# CUDA support: device-buffer detection and the device runtime (device/) and reduction kernels (reduce/cuda).
#
# CHORUS_CUDA=AUTO (default) builds the kernels when nvcc is found, ON insists on them, OFF leaves them out.
# CHORUS_CUDA_ENABLED tells the rest of the build (tests/gpu, perf/gpu_bench) which it got. Either way the
# detection helpers and CudaReducer are compiled: without CUDA they are stubs that say "host memory".
#
# The CUDA runtime is linked statically (CUDA::cudart_static) so that libchorus.so loads on machines without the
# CUDA runtime library or a driver; its symbols stay hidden (--exclude-libs,ALL and cmake/chorus.map).
# Included from the top-level CMakeLists.txt right after the layer targets are created, before the subdirectories.

set(CHORUS_CUDA AUTO CACHE STRING "CUDA kernels and device buffers: AUTO (when nvcc is found), ON or OFF")
set_property(CACHE CHORUS_CUDA PROPERTY STRINGS AUTO ON OFF)

set(CHORUS_CUDA_ENABLED OFF)
set(chorus_cuda_off_reason "CHORUS_CUDA=${CHORUS_CUDA}")
string(TOUPPER "${CHORUS_CUDA}" chorus_cuda_mode)
if(chorus_cuda_mode STREQUAL "AUTO")
  set(chorus_cuda_required OFF)
  set(chorus_cuda_wanted ON)
elseif(CHORUS_CUDA)
  set(chorus_cuda_required ON)
  set(chorus_cuda_wanted ON)
else()
  set(chorus_cuda_wanted OFF)
endif()

# Sanitizer flags go to every language through add_compile_options, and nvcc rejects them: such builds test the
# host paths only.
if(chorus_cuda_wanted AND CHORUS_SANITIZE)
  if(chorus_cuda_required)
    message(FATAL_ERROR "CHORUS_CUDA=ON cannot be combined with CHORUS_SANITIZE=${CHORUS_SANITIZE}")
  endif()
  set(chorus_cuda_off_reason "CHORUS_SANITIZE=${CHORUS_SANITIZE}; nvcc does not take sanitizer flags")
  set(chorus_cuda_wanted OFF)
endif()

if(chorus_cuda_wanted)
  # Ampere and Hopper unless the user chose (-DCMAKE_CUDA_ARCHITECTURES=... or the CUDAARCHS environment variable).
  # Each architecture is a full device compile of the kernels, so the list is kept short.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
    set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures to compile the kernels for")
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit)
  endif()
  if(CMAKE_CUDA_COMPILER AND TARGET CUDA::cudart_static)
    set(CHORUS_CUDA_ENABLED ON)
  elseif(chorus_cuda_required)
    message(FATAL_ERROR "CHORUS_CUDA=ON but no usable CUDA compiler and static runtime were found "
                        "(set CMAKE_CUDA_COMPILER or CUDAToolkit_ROOT)")
  else()
    set(chorus_cuda_off_reason "no usable nvcc and static CUDA runtime found")
  endif()
endif()

if(CHORUS_CUDA_ENABLED)
  message(STATUS "CUDA: on (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
  target_compile_definitions(chorus_deps INTERFACE CHORUS_HAVE_CUDA=1)
  target_link_libraries(chorus_deps INTERFACE CUDA::cudart_static)
  # The layers with kernels (reduce, device) exist before CUDA is enabled, so they get their CUDA properties here
  # rather than from CMAKE_CUDA_*.
  # C++17 for the kernels: CMake 3.25 knows no C++20 flag for nvcc, and would otherwise borrow CXX_STANDARD.
  # Hidden like the C++ code; the runtime comes from the explicit link above, not from nvcc's own choice.
  set_target_properties(chorus_reduce_objs chorus_device_objs PROPERTIES CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}"
    CUDA_STANDARD 17 CUDA_STANDARD_REQUIRED ON CUDA_VISIBILITY_PRESET hidden CUDA_RUNTIME_LIBRARY None)
  # A compiler cache given for C++ (ccache) serves nvcc too, unless the user chose otherwise.
  if(CMAKE_CXX_COMPILER_LAUNCHER AND NOT DEFINED CMAKE_CUDA_COMPILER_LAUNCHER)
    set_target_properties(chorus_reduce_objs chorus_device_objs PROPERTIES CUDA_COMPILER_LAUNCHER "${CMAKE_CXX_COMPILER_LAUNCHER}")
  endif()
  set(CMAKE_CUDA_STANDARD 17)  # for targets made later (tests, benchmarks) that might hold CUDA sources
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
else()
  message(STATUS "CUDA: off (${chorus_cuda_off_reason})")
endif()

# Adds CUDA source `file` to layer target `target` with host-side warnings as for the C++ code (errors with
# CHORUS_WERROR) and any further nvcc options.
function(chorus_add_cuda_source target file)
  set(options -Xcompiler=-Wall,-Wextra,-Wno-unused-parameter ${ARGN})
  if(CHORUS_WERROR)
    list(APPEND options -Werror=all-warnings -Xcompiler=-Werror)
  endif()
  target_sources(${target} PRIVATE ${file})
  set_source_files_properties(${file} TARGET_DIRECTORY ${target} PROPERTIES COMPILE_OPTIONS "${options}")
endfunction()

include(${PROJECT_SOURCE_DIR}/device/sources.cmake)
include(${PROJECT_SOURCE_DIR}/reduce/cuda/sources.cmake)
