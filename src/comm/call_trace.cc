#include "src/comm/call_trace.h"

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <set>

#include "core/datatype.h"
#include "core/error.h"

namespace chorus {
namespace {

// JSON text of a string (the names here are plain, but a communicator's name is the user's).
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

// Paths already taken by a communicator of this process: a second one with the same name gets ".2", ".3", ...
std::string claim(const std::string& path) {
  static std::mutex mutex;
  static std::set<std::string> taken;
  std::lock_guard<std::mutex> lock(mutex);
  std::string candidate = path;
  for (int n = 2; !taken.insert(candidate).second; ++n) {
    candidate = path.substr(0, path.size() - 5) + "." + std::to_string(n) + ".json";
  }
  return candidate;
}

}  // namespace

CallTrace::CallTrace(std::string path, TraceLevel level, int rank, int size, std::string commName)
    : path_(claim(path)), level_(level), rank_(rank), size_(size), commName_(std::move(commName)) {
  blocks_.emplace_back();
  blocks_.back().reserve(kBlockEvents);
}

double CallTrace::nowUs() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

CallTrace::Event* CallTrace::next() {
  if (count_ >= kMaxEvents) {
    ++dropped_;
    return nullptr;
  }
  if (blocks_.back().size() == kBlockEvents) {
    blocks_.emplace_back();
    blocks_.back().reserve(kBlockEvents);
  }
  ++count_;
  return &blocks_.back().emplace_back();
}

void CallTrace::recordCall(const CallArgs& op, const char* algorithm, size_t chunkBytes, double startUs, double endUs,
                           const TransferTimes* times, int fused) {
  Event* slot = next();
  if (slot == nullptr) return;
  Event& e = *slot;
  e.startUs = startUs;
  e.endUs = endUs;
  e.name = collectiveName(op.collective);
  e.algorithm = algorithm;
  e.seq = op.seq;
  e.count = op.count;
  e.bytes = op.count * typeSize(op.type);
  e.chunk = chunkBytes;
  e.peer = op.peer;
  e.root = op.root;
  e.fused = fused;
  e.type = op.type;
  e.reduction = op.reduction;
  e.reduces = reducesValues(op.collective);
  if (times != nullptr) {
    e.timed = true;
    e.waitUs = times->waitUs;
    e.moveUs = times->moveUs;
    e.reduceUs = times->reduceUs;
  }
}

void CallTrace::recordTransfer(const TransferStep& step) {
  Event* slot = next();
  if (slot == nullptr) return;
  Event& e = *slot;
  e.transfer = true;
  e.startUs = step.startUs;
  e.endUs = step.endUs;
  e.name = step.what;
  e.algorithm = step.transport;
  e.peer = step.peer;
  e.bytes = step.bytes;
  e.waitUs = step.waitUs;
  e.moveUs = step.moveUs;
  e.rounds = step.rounds;
  e.movingRounds = step.movingRounds;
  e.sleeps = step.sleeps;
}

void CallTrace::flush() const {
  const std::string pid = std::to_string(rank_);
  std::string out = "{\"traceEvents\":[\n";
  out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"args\":{\"name\":" +
         quoted("rank " + pid + (commName_.empty() ? "" : " (" + commName_ + ")")) + "}},\n";
  out += "{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":" + pid + ",\"args\":{\"sort_index\":" + pid + "}},\n";
  out += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":0,\"args\":{\"name\":\"calls\"}},\n";
  out += "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid + ",\"tid\":1,\"args\":{\"name\":\"transfers\"}}";
  for (const std::vector<Event>& block : blocks_) {
    for (const Event& e : block) {
      out += ",\n{\"name\":" + quoted(e.name) + ",\"cat\":\"" + (e.transfer ? "transfer" : "call") +
             "\",\"ph\":\"X\",\"pid\":" + pid + ",\"tid\":" + (e.transfer ? "1" : "0") +
             ",\"ts\":" + number(e.startUs + offsetUs_) + ",\"dur\":" + number(e.endUs - e.startUs) + ",\"args\":{";
      if (e.transfer) {
        out += "\"peer\":" + std::to_string(e.peer) + ",\"bytes\":" + std::to_string(e.bytes) +
               ",\"transport\":" + quoted(e.algorithm ? e.algorithm : "") + ",\"wait_us\":" + number(e.waitUs) +
               ",\"move_us\":" + number(e.moveUs) + ",\"rounds\":" + std::to_string(e.rounds) +
               ",\"moving_rounds\":" + std::to_string(e.movingRounds) +
               ",\"sleeps\":" + std::to_string(e.sleeps) + "}}";
        continue;
      }
      out += "\"seq\":" + std::to_string(e.seq) + ",\"bytes\":" + std::to_string(e.bytes) +
             ",\"count\":" + std::to_string(e.count) + ",\"datatype\":" + quoted(typeName(e.type));
      if (e.reduces) out += ",\"op\":" + quoted(opName(e.reduction));
      if (e.algorithm != nullptr) out += ",\"algorithm\":" + quoted(e.algorithm);
      out += ",\"chunk\":" + std::to_string(e.chunk);
      if (e.root >= 0) out += ",\"root\":" + std::to_string(e.root);
      if (e.peer != -1) out += ",\"peer\":" + std::to_string(e.peer);
      if (e.fused > 1) out += ",\"fused\":" + std::to_string(e.fused);
      if (e.timed) {
        out += ",\"wait_us\":" + number(e.waitUs) + ",\"move_us\":" + number(e.moveUs) +
               ",\"reduce_us\":" + number(e.reduceUs);
      }
      out += "}}";
    }
  }
  out += "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"chorus\":{\"rank\":" + pid +
         ",\"size\":" + std::to_string(size_) + ",\"comm\":" + quoted(commName_) +
         ",\"level\":" + quoted(level_ == TraceLevel::kTransfer ? "transfer" : "call") +
         ",\"clock_offset_us\":" + number(offsetUs_) + ",\"dropped\":" + std::to_string(dropped_) + "}}}\n";
  const std::string temporary = path_ + ".tmp";
  std::FILE* f = std::fopen(temporary.c_str(), "w");
  if (f == nullptr) throwSystemError(errorContext(rank_, "trace " + temporary), "fopen", errno);
  const bool written = std::fwrite(out.data(), 1, out.size(), f) == out.size();
  const int writeErr = errno;
  if (std::fclose(f) != 0 || !written) {
    std::remove(temporary.c_str());
    throwSystemError(errorContext(rank_, "trace " + temporary), "fwrite", written ? errno : writeErr);
  }
  if (std::rename(temporary.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    std::remove(temporary.c_str());
    throwSystemError(errorContext(rank_, "trace " + path_), "rename", err);
  }
}

std::string traceFilePath(const std::string& dir, int rank, const std::string& keyPrefix) {
  std::string name = "chorus-trace-" + std::to_string(rank);
  const size_t split = keyPrefix.find("split");
  if (split != std::string::npos) {
    std::string part = keyPrefix.substr(split);
    while (!part.empty() && part.back() == '/') part.pop_back();
    for (char& c : part) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-')) c = '-';
    }
    name += "." + part;
  }
  return (dir.empty() || dir.back() == '/' ? dir : dir + "/") + name + ".json";
}

}  // namespace chorus
