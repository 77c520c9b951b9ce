# The CUDA reducer. cuda_reducer.cc is in every build (a stub that refuses work without CUDA); the kernels are
# compiled only when CHORUS_CUDA_ENABLED, for CMAKE_CUDA_ARCHITECTURES.
target_sources(chorus_reduce_objs PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cuda_reducer.cc)
if(CHORUS_CUDA_ENABLED)
  # --fmad=false: no multiply-add contraction, so that every result is the correctly rounded one the host reducer
  # computes (the kernels have no a*b+c today; this keeps it so).
  chorus_add_cuda_source(chorus_reduce_objs ${CMAKE_CURRENT_LIST_DIR}/reduce_kernels.cu --fmad=false)
endif()
