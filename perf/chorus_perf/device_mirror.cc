#include "perf/chorus_perf/device_mirror.h"

#include <exception>

#include "device/device_api.h"

namespace chorus {
// Weak: against the shared library, whose internals are hidden, the symbol is absent and --device gpu says so;
// against chorus_internals it is the library's own (one device API per process, as the library must see the same
// emulated allocations).
DeviceApi& deviceApi() __attribute__((weak));
}  // namespace chorus

namespace chorus::perf {
namespace {

DeviceApi& api() { return chorus::deviceApi(); }

}  // namespace

std::unique_ptr<DeviceMirror> DeviceMirror::open(std::string* why) {
  if (&chorus::deviceApi == nullptr) {
    *why =
        "this chorus-perf was linked against the shared library, which keeps the device API internal; "
        "build it against chorus_internals for --device gpu";
    return nullptr;
  }
  try {
    if (!api().available()) {
      *why = std::string("no device: the ") + api().name() +
             " device API is unavailable (no CUDA in this build, no driver or no GPU); CHORUS_DEVICE_EMULATION=1 "
             "emulates one";
      return nullptr;
    }
    std::unique_ptr<DeviceMirror> m(new DeviceMirror());
    m->stream_ = api().createStream();
    return m;
  } catch (const std::exception& e) {
    *why = e.what();
    return nullptr;
  }
}

DeviceMirror::~DeviceMirror() {
  try {
    if (stream_ != nullptr) {
      api().synchronize(stream_);
      api().destroyStream(stream_);
    }
    api().deviceFree(send_);
    api().deviceFree(recv_);
  } catch (const std::exception&) {
    // The process is ending; the runtime reclaims the rest.
  }
}

bool DeviceMirror::allocate(const GuardedBuffer& hostSend, const GuardedBuffer& hostRecv, std::string* why) {
  sendBytes_ = hostSend.capacity() + 2 * GuardedBuffer::kGuardBytes;
  recvBytes_ = hostRecv.capacity() + 2 * GuardedBuffer::kGuardBytes;
  try {
    send_ = static_cast<std::byte*>(api().deviceAlloc(sendBytes_));
    recv_ = static_cast<std::byte*>(api().deviceAlloc(recvBytes_));
    return true;
  } catch (const std::exception& e) {
    *why = e.what();
    return false;
  }
}

void DeviceMirror::upload(const GuardedBuffer& hostSend, const GuardedBuffer& hostRecv) {
  api().copyAsync(send_, hostSend.data() - GuardedBuffer::kGuardBytes, sendBytes_, stream_);
  api().copyAsync(recv_, hostRecv.data() - GuardedBuffer::kGuardBytes, recvBytes_, stream_);
  api().synchronize(stream_);
}

void DeviceMirror::download(GuardedBuffer& hostSend, GuardedBuffer& hostRecv) {
  api().copyAsync(hostSend.data() - GuardedBuffer::kGuardBytes, send_, sendBytes_, stream_);
  api().copyAsync(hostRecv.data() - GuardedBuffer::kGuardBytes, recv_, recvBytes_, stream_);
  api().synchronize(stream_);
}

void DeviceMirror::synchronize() { api().synchronize(stream_); }

const char* DeviceMirror::apiName() const { return api().name(); }

}  // namespace chorus::perf
