// The C ABI's non-blocking host calls: host streams and events (src/api/host_stream.h does the work).
#include <memory>
#include <string>

#include "chorus/chorus.h"
#include "src/api/api_errors.h"
#include "src/api/group.h"
#include "src/api/host_stream.h"

using chorus::Error;
using chorus::api::fail;
using chorus::api::guarded;

extern "C" {

chorusResult_t chorusHostStreamCreate(chorusStream_t* stream) {
  if (!stream) return fail(nullptr, chorusInvalidArgument, "chorusHostStreamCreate: stream is NULL");
  return guarded(nullptr, "chorusHostStreamCreate", [&] {
    *stream = chorus::api::registerHostStream(std::make_shared<chorus::api::HostStream>());
  });
}

chorusResult_t chorusHostStreamDestroy(chorusStream_t stream) {
  const char* call = "chorusHostStreamDestroy";
  std::shared_ptr<chorus::api::HostStream> host;
  chorusResult_t found = guarded(nullptr, call, [&] { host = chorus::api::hostStreamOf(stream, call); });
  if (found != chorusSuccess) return found;
  if (!host) return fail(nullptr, chorusInvalidArgument, std::string(call) + ": not a host stream");
  chorus::api::unregisterHostStream(stream);
  // Waits for what is queued (the last reference joins the stream's thread after running it).
  const chorus::api::StreamStatus status = host->waitFor(host->enqueued());
  if (status.code != chorusSuccess) return fail(nullptr, status.code, status.message);
  return chorusSuccess;
}

}  // extern "C"

namespace {

// The host stream a synchronize or query names (NULL: the blocking calls, always done); throws for a CUDA stream
// or a destroyed host stream, and refuses blocking waits inside a group.
std::shared_ptr<chorus::api::HostStream> streamToWaitOn(chorusStream_t stream, const char* call, bool blocks) {
  if (blocks && chorus::api::inGroup()) {
    throw Error(chorusInvalidUsage, std::string(call) + " inside a group: a group's calls run at chorusGroupEnd");
  }
  std::shared_ptr<chorus::api::HostStream> host = chorus::api::hostStreamOf(stream, call);
  if (!host && stream != nullptr) {
    chorus::throwInvalidArgument(std::string(call) + ": not a host stream (a CUDA stream is waited on with CUDA)");
  }
  return host;
}

chorusResult_t fromStatus(const chorus::api::StreamStatus& status) {
  if (status.code == chorusSuccess || status.code == chorusInProgress) return status.code;
  return fail(nullptr, status.code, status.message);
}

}  // namespace

extern "C" {

chorusResult_t chorusStreamSynchronize(chorusStream_t stream) {
  std::shared_ptr<chorus::api::HostStream> host;
  chorusResult_t r = guarded(nullptr, "chorusStreamSynchronize",
                             [&] { host = streamToWaitOn(stream, "chorusStreamSynchronize", true); });
  if (r != chorusSuccess || !host) return r;
  return fromStatus(host->waitFor(host->enqueued()));
}

chorusResult_t chorusStreamQuery(chorusStream_t stream) {
  std::shared_ptr<chorus::api::HostStream> host;
  chorusResult_t r =
      guarded(nullptr, "chorusStreamQuery", [&] { host = streamToWaitOn(stream, "chorusStreamQuery", false); });
  if (r != chorusSuccess || !host) return r;
  return fromStatus(host->query(host->enqueued()));
}

chorusResult_t chorusEventCreate(chorusEvent_t* event) {
  if (!event) return fail(nullptr, chorusInvalidArgument, "chorusEventCreate: event is NULL");
  return guarded(nullptr, "chorusEventCreate", [&] { *event = new chorusEvent(); });
}

chorusResult_t chorusEventRecord(chorusEvent_t event, chorusStream_t stream) {
  if (!event) return fail(nullptr, chorusInvalidArgument, "chorusEventRecord: event is NULL");
  return guarded(nullptr, "chorusEventRecord", [&] {
    std::shared_ptr<chorus::api::HostStream> host = streamToWaitOn(stream, "chorusEventRecord", false);
    event->stream = host;
    event->target = host ? host->enqueued() : 0;
  });
}

chorusResult_t chorusEventQuery(chorusEvent_t event) {
  if (!event) return fail(nullptr, chorusInvalidArgument, "chorusEventQuery: event is NULL");
  if (!event->stream) return chorusSuccess;
  return fromStatus(event->stream->query(event->target));
}

chorusResult_t chorusEventSynchronize(chorusEvent_t event) {
  if (!event) return fail(nullptr, chorusInvalidArgument, "chorusEventSynchronize: event is NULL");
  if (chorus::api::inGroup()) {
    return fail(nullptr, chorusInvalidUsage,
                "chorusEventSynchronize inside a group: a group's calls run at chorusGroupEnd");
  }
  if (!event->stream) return chorusSuccess;
  return fromStatus(event->stream->waitFor(event->target));
}

chorusResult_t chorusEventDestroy(chorusEvent_t event) {
  delete event;
  return chorusSuccess;
}

}  // extern "C"
