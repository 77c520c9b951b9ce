// Stands in for the header torch generates when built with CUDA (Debian's CPU-only torch ships the rest of
// c10/cuda without it), so that python/csrc/cuda_calls.cc can be compile-checked here. Never linked.
#pragma once
#define C10_CUDA_BUILD_SHARED_LIBS
