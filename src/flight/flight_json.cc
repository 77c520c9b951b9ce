#include "src/flight/flight_json.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "core/collective.h"
#include "core/datatype.h"

namespace chorus {
namespace {

FlightProcess makeProcess() {
  FlightProcess p;
  if (gethostname(p.host, sizeof(p.host) - 1) != 0) strcpy(p.host, "unknown");
  p.pid = getpid();
  return p;
}

void field(FlightJsonOut& out, const char* name, int64_t v) {
  out.raw(",\"");
  out.raw(name);
  out.raw("\":");
  out.number(v);
}

void field(FlightJsonOut& out, const char* name, const char* v) {
  out.raw(",\"");
  out.raw(name);
  out.raw("\":");
  out.quoted(v);
}

void writeCall(const FlightCall& c, FlightJsonOut& out) {
  out.raw("{\"n\":");
  out.number(static_cast<int64_t>(c.ordinal));
  field(out, "seq", static_cast<int64_t>(c.seq));
  field(out, "op", collectiveName(static_cast<Collective>(c.collective)));
  field(out, "bytes", static_cast<int64_t>(c.bytes));
  field(out, "type", typeName(static_cast<chorusDataType_t>(c.type)));
  if (reducesValues(static_cast<Collective>(c.collective))) {
    field(out, "reduction", opName(static_cast<chorusRedOp_t>(c.reduction)));
  }
  field(out, "peer", c.rootOrPeer);
  field(out, "algorithm", c.algorithm != nullptr ? c.algorithm : "");
  field(out, "state", flightStateName(c.state));
  field(out, "waitingOn", c.waitingOn);
  field(out, "waitingCount", c.waitingCount);
  field(out, "queuedMs", c.queuedMs);
  field(out, "waitingMs", c.waitingMs);
  field(out, "endMs", c.endMs);
  out.raw("}");
}

}  // namespace

const FlightProcess& flightProcess() {
  static const FlightProcess process = makeProcess();
  return process;
}

void FlightJsonOut::raw(const char* s) { raw(s, strlen(s)); }

void FlightJsonOut::raw(const char* s, size_t n) {
  if (text_ != nullptr) {
    text_->append(s, n);
    return;
  }
  while (n > 0) {
    if (used_ == sizeof(buf_)) flush();
    const size_t take = n < sizeof(buf_) - used_ ? n : sizeof(buf_) - used_;
    memcpy(buf_ + used_, s, take);
    used_ += take;
    s += take;
    n -= take;
  }
}

void FlightJsonOut::quoted(const char* s) {
  raw("\"", 1);
  for (; *s != '\0'; ++s) {
    const unsigned char ch = static_cast<unsigned char>(*s);
    if (ch == '"' || ch == '\\') {
      const char escaped[2] = {'\\', static_cast<char>(ch)};
      raw(escaped, 2);
    } else if (ch < 0x20) {
      static const char kHex[] = "0123456789abcdef";
      const char escaped[6] = {'\\', 'u', '0', '0', kHex[ch >> 4], kHex[ch & 15]};
      raw(escaped, 6);
    } else {
      raw(s, 1);
    }
  }
  raw("\"", 1);
}

void FlightJsonOut::number(int64_t v) {
  char digits[24];
  int n = 0;
  const bool negative = v < 0;
  uint64_t u = negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  do {
    digits[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  if (negative) digits[n++] = '-';
  char ordered[24];
  for (int i = 0; i < n; ++i) ordered[i] = digits[n - 1 - i];
  raw(ordered, static_cast<size_t>(n));
}

void FlightJsonOut::flush() {
  if (text_ != nullptr || fd_ < 0) return;
  size_t done = 0;
  while (done < used_ && !failed_) {
    const ssize_t w = write(fd_, buf_ + done, used_ - done);
    if (w > 0) {
      done += static_cast<size_t>(w);
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else {
      failed_ = true;
    }
  }
  used_ = 0;
}

void writeFlightJson(const FlightRecorder& recorder, FlightJsonOut& out, size_t newest) {
  const FlightIdentity& id = recorder.identity();
  out.raw("{\"format\":\"chorus-flight/1\"");
  field(out, "comm", id.commName.c_str());
  field(out, "identity", id.identity.c_str());
  field(out, "rank", id.rank);
  field(out, "size", id.size);
  field(out, "host", flightProcess().host);
  field(out, "pid", flightProcess().pid);
  field(out, "capacity", static_cast<int64_t>(recorder.capacity()));
  field(out, "recorded", static_cast<int64_t>(recorder.recorded()));
  field(out, "nowMs", recorder.nowMs());
  field(out, "wallStartNs", recorder.wallStartNs());
  out.raw(",\"calls\":[");
  bool first = true;
  recorder.forEach(
      [&](const FlightCall& c) {
        if (!first) out.raw(",");
        first = false;
        writeCall(c, out);
      },
      newest);
  out.raw("]}");
}

}  // namespace chorus
