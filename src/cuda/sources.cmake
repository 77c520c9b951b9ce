# Runtime CUDA helpers (availability, where a buffer lives, checked calls). Compiled in every build: without
# CHORUS_HAVE_CUDA they are host-only stubs, so callers need no #ifdef.
target_sources(chorus_objs PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/cuda_error.cc
  ${CMAKE_CURRENT_LIST_DIR}/device_runtime.cc
  ${CMAKE_CURRENT_LIST_DIR}/memory_location.cc
  ${CMAKE_CURRENT_LIST_DIR}/scoped_device.cc)
