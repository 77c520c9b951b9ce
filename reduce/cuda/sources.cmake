# The CUDA reducer. cuda_reducer.cc is in every build (a stub that refuses work without CUDA); the kernels are
# compiled only when CHORUS_CUDA_ENABLED, for CMAKE_CUDA_ARCHITECTURES.
target_sources(chorus_reduce_objs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cuda_reducer.cc)
if(CHORUS_CUDA_ENABLED)
  target_sources(chorus_reduce_objs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/reduce_kernels.cu)
  # Host-side warnings as for the C++ code. --fmad=false: no multiply-add contraction, so that every result is the
  # correctly rounded one the host reducer computes (the kernels have no a*b+c today; this keeps it so).
  set(chorus_cuda_options --fmad=false -Xcompiler=-Wall,-Wextra,-Wno-unused-parameter)
  if(CHORUS_WERROR)
    list(APPEND chorus_cuda_options -Werror=all-warnings -Xcompiler=-Werror)
  endif()
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/reduce_kernels.cu TARGET_DIRECTORY chorus_reduce_objs
    PROPERTIES COMPILE_OPTIONS "${chorus_cuda_options}")
endif()
