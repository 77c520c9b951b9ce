// NCCL's groups for the C API: between chorusGroupStart and chorusGroupEnd a thread's calls are only recorded;
// the outermost chorusGroupEnd runs them together (group_runner.h says how).
#pragma once

#include <string>

#include "chorus/chorus.h"
#include "core/collective.h"
#include "src/comm/window_op.h"

namespace chorus::api {

// True between this thread's chorusGroupStart and its matching chorusGroupEnd.
bool inGroup();
// Records a call whose arguments were checked; it runs at the outermost chorusGroupEnd. The CallArgs's alltoallv arrays
// must be owned by op.keepAlive.
void recordInGroup(chorusComm_t comm, const CallArgs& op, bool device, int gpu, chorusStream_t stream);
// Records a window call (put, signal, wait). At chorusGroupEnd a communicator's puts and signals are made first,
// then its other calls, then its waits: a wait never holds up a put of the same group.
void recordWindowInGroup(chorusComm_t comm, WindowOp op, chorusStream_t stream);
// Notes that a call inside the group failed (its own return code said so): chorusGroupEnd then drops the group.
void recordGroupFailure(const std::string& message);
// chorusGroupStart and chorusGroupEnd.
chorusResult_t groupStart();
chorusResult_t groupEnd();

}  // namespace chorus::api
