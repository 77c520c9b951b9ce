# The device runtime: where a buffer lives, the DeviceApi (CUDA; the emulated one is in emulation/device/), streams,
# the device call queue. Compiled in every build: without CHORUS_HAVE_CUDA the CUDA parts are stubs, so callers need
# no #ifdef.
target_sources(chorus_device_objs PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/memory_location.cc
  ${CMAKE_CURRENT_LIST_DIR}/scoped_device.cc
  ${CMAKE_CURRENT_LIST_DIR}/device_api.cc
  ${CMAKE_CURRENT_LIST_DIR}/cuda_device_api.cc
  ${CMAKE_CURRENT_LIST_DIR}/stream_hold_hazard.cc
  ${CMAKE_CURRENT_LIST_DIR}/device_call_queue.cc)
if(CHORUS_CUDA_ENABLED)
  # The polling kernel behind streamWaitFlag where cuStreamWaitValue32 is unavailable.
  chorus_add_cuda_source(chorus_device_objs ${CMAKE_CURRENT_LIST_DIR}/wait_flag_kernel.cu)
endif()
