// chorus-perf's command line: nccl-tests' flags (-b -e -f -i -n -w -c -d -o -r -h) plus --csv, --json, --plot,
// --device, --algos and --rounds.
// Header-only and free of library calls, so that tests/unit/perf_args_test.cc can exercise it.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chorus/chorus.h"
#include "perf/chorus_perf/collective_layout.h"

namespace chorus::perf {

struct PerfOptions {
  Collective collective = Collective::kAllReduce;
  size_t minBytes = 32u << 20;  // nccl-tests' defaults: a single 32 MiB point
  size_t maxBytes = 32u << 20;
  size_t stepBytes = 1u << 20;  // additive step, used unless stepFactor is set
  uint64_t stepFactor = 0;      // multiplicative step; 0 when -f was not given
  int iters = 20;
  int warmupIters = 5;
  int check = 1;  // 0: no verification; otherwise every size and mode is verified once
  chorusDataType_t datatype = chorusFloat32;
  chorusRedOp_t op = chorusSum;
  int root = 0;
  std::string csvPath;   // empty: no CSV file
  std::string jsonPath;  // empty: no JSON file
  std::string plotPath;  // empty: no SVG plot
  bool deviceBuffers = false;  // --device gpu: buffers in device memory, calls on a stream
  // --algos: the algorithms compared side by side, "default" (the selection, or CHORUS_ALGO as set) first; empty:
  // the usual sweep. Each gets its own communicator; their calls alternate in `rounds` rounds of `iters` each.
  std::vector<std::string> algos;
  int rounds = 10;
  // --min-ms: each timed run (with --algos, each algorithm's) lasts at least this long: more than `iters` calls where
  // calls are short, at most `maxIters` (the count from runs after the warm-up, the same on every rank), as the
  // peers' benchmarks time each size for 300 ms. 0: `iters`.
  int minMs = 0;
  int maxIters = 1000000;  // --max-iters: the most calls --min-ms makes a run
  int group = 1;  // --group N: calls per group (1: no group)
  // --stream: kNone (NULL: blocking host calls), kHost (queued on a host stream, one synchronize after the timed
  // calls), kHostEach (each call followed by an event record and synchronize: the latency of a queued call).
  enum class Stream { kNone, kHost, kHostEach } stream = Stream::kNone;
  // --pages huge: host buffers on transparent huge pages where the kernel grants them (as Chorus's own staging);
  // small (the default) leaves them on 4 KiB pages, as a framework's tensors and the peers' benchmarks have them.
  bool hugePages = false;
};

// The most calls --group puts in one group.
inline constexpr int kMaxGroupCalls = 4096;

// The most algorithms --algos compares at once (each one is a communicator with its own connections).
inline constexpr size_t kMaxComparedAlgos = 8;

// What main should do after parsing: run, print the usage and exit 0, or report `error` and exit 2.
struct ParseOutcome {
  enum class Action { kRun, kHelp, kError };
  Action action = Action::kRun;
  PerfOptions options;
  std::string error;
};

// The usage text printed by -h.
inline std::string perfUsage() {
  return "Usage: chorus-perf COLLECTIVE [flags]\n"
         "  COLLECTIVE: allreduce, broadcast, reduce, allgather, reducescatter, alltoall, alltoallv, gather,\n"
         "              scatter, sendrecv (rank r sends to r+1, receives from r-1), pingpong (ranks 2k and\n"
         "              2k+1 bounce a message; time is one way), barrier\n"
         "  -b, --minbytes BYTES       smallest size (K/M/G suffixes; default 32M)\n"
         "  -e, --maxbytes BYTES       largest size (default 32M)\n"
         "  -f, --stepfactor N         multiply the size by N (integer >= 2) at each step\n"
         "  -i, --stepbytes BYTES      add BYTES to the size at each step (default 1M; exclusive with -f)\n"
         "  -n, --iters N              timed iterations per size (default 20)\n"
         "  -w, --warmup_iters N       untimed iterations before them (default 5)\n"
         "  -c, --check 0|1            verify every result once per size and mode (default 1)\n"
         "  -d, --datatype TYPE        int8 uint8 int32 uint32 int64 uint64 float16 half bfloat16\n"
         "                             float32 float float64 double float8e4m3 float8e5m2 (default float32)\n"
         "  -o, --op OP                sum prod max min avg (default sum)\n"
         "  -r, --root RANK            root of broadcast, reduce, gather and scatter (default 0)\n"
         "      --group N              N calls of each size per chorusGroupStart/End, on N distinct buffers; times\n"
         "                             are per group (default 1: no group)\n"
         "      --stream none|host|host-each\n"
         "                             host buffers' calls: blocking (none, default), queued on a host stream and\n"
         "                             synchronized once after the timed calls (host; also prints the mean enqueue\n"
         "                             time), or each followed by an event record and synchronize (host-each)\n"
         "      --pages small|huge     host buffers on 4 KiB pages (small, default: as a framework's tensors) or\n"
         "                             on transparent huge pages where the kernel grants them (huge)\n"
         "      --csv FILE             also write one CSV record per size to FILE\n"
         "      --json FILE            also write one JSON record per size to FILE\n"
         "      --plot FILE            also write the bus bandwidth against size as an SVG plot to FILE\n"
         "      --device host|gpu      where the buffers live (default host); gpu: device memory and a stream,\n"
         "                             the CUDA device or, with CHORUS_DEVICE_EMULATION=1, the emulated one\n"
         "      --algos LIST           compare algorithms (e.g. ring,tree,halving_doubling) with the default\n"
         "                             selection in one job: one communicator each (CHORUS_ALGO=name), their\n"
         "                             out-of-place calls interleaved; prints each one's median time per size;\n"
         "                             autotune in the list: a communicator with CHORUS_AUTOTUNE=1 (warm it up:\n"
         "                             -w 32 covers its trials)\n"
         "      --rounds N             interleaved rounds of -n calls per algorithm with --algos (default 10)\n"
         "      --min-ms MS            each timed run (with --algos, each algorithm's) lasts at least MS ms:\n"
         "                             more than -n calls where calls are short, counted from a first run\n"
         "                             (default 0: -n calls)\n"
         "      --max-iters N          the most calls --min-ms makes a run (default 1000000)\n"
         "  -h, --help                 this text\n"
         "Sizes are per-rank buffer bytes as in nccl-tests (allgather: the gathered total; reducescatter: the\n"
         "scattered total). Run one process per rank, e.g. chorusrun -n 2 chorus-perf allreduce -b 8 -e 64M -f 2\n";
}

// Bytes in `text` ("8", "64K", "64M", "1G"; binary multiples as nccl-tests); nullopt when malformed or too large.
inline std::optional<size_t> parseByteSize(std::string_view text) {
  uint64_t multiplier = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 'K':
      case 'k':
        multiplier = 1ull << 10;
        break;
      case 'M':
      case 'm':
        multiplier = 1ull << 20;
        break;
      case 'G':
      case 'g':
        multiplier = 1ull << 30;
        break;
      default:
        break;
    }
    if (multiplier != 1) text.remove_suffix(1);
  }
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  if (value > std::numeric_limits<size_t>::max() / multiplier) return std::nullopt;
  return static_cast<size_t>(value * multiplier);
}

// The datatype named `name` (nccl-tests' aliases half, float and double included); nullopt when unknown.
inline std::optional<chorusDataType_t> parseDataType(std::string_view name) {
  struct Named {
    std::string_view name;
    chorusDataType_t type;
  };
  static constexpr Named kNames[] = {
      {"int8", chorusInt8},       {"uint8", chorusUint8},           {"int32", chorusInt32},
      {"uint32", chorusUint32},   {"int64", chorusInt64},           {"uint64", chorusUint64},
      {"float16", chorusFloat16}, {"half", chorusFloat16},          {"bfloat16", chorusBfloat16},
      {"float32", chorusFloat32}, {"float", chorusFloat32},         {"float64", chorusFloat64},
      {"double", chorusFloat64},  {"float8e4m3", chorusFloat8e4m3}, {"float8e5m2", chorusFloat8e5m2},
  };
  for (const Named& n : kNames) {
    if (n.name == name) return n.type;
  }
  return std::nullopt;
}

// The canonical lower-case name of `type` ("float32"), as chorusTypeName prints it.
inline std::string_view dataTypeName(chorusDataType_t type) {
  static constexpr std::string_view kNames[] = {"int8",    "uint8",   "int32",      "uint32",
                                                "int64",   "uint64",  "float16",    "bfloat16",
                                                "float32", "float64", "float8e4m3", "float8e5m2"};
  return type >= 0 && type < chorusNumTypes ? kNames[type] : "unknown";
}

// Bytes per element of `type`, as chorusTypeSize returns it (0 when out of range).
inline size_t dataTypeSize(chorusDataType_t type) {
  static constexpr size_t kSizes[] = {1, 1, 4, 4, 8, 8, 2, 2, 4, 8, 1, 1};
  return type >= 0 && type < chorusNumTypes ? kSizes[type] : 0;
}

// The op named `name`; nullopt when unknown.
inline std::optional<chorusRedOp_t> parseRedOp(std::string_view name) {
  static constexpr std::string_view kNames[] = {"sum", "prod", "max", "min", "avg", "band", "bor", "bxor"};
  for (int op = 0; op < chorusNumOps; ++op) {
    if (kNames[op] == name) return static_cast<chorusRedOp_t>(op);
  }
  return std::nullopt;
}

// The lower-case name of `op` ("sum"), as chorusOpName prints it.
inline std::string_view redOpName(chorusRedOp_t op) {
  static constexpr std::string_view kNames[] = {"sum", "prod", "max", "min", "avg", "band", "bor", "bxor"};
  return op >= 0 && op < chorusNumOps ? kNames[op] : "unknown";
}

namespace detail {

// A non-negative integer in [0, max]; nullopt otherwise.
inline std::optional<int64_t> parseBoundedInt(std::string_view text, int64_t max) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 0 || value > max) return std::nullopt;
  return value;
}

}  // namespace detail

// Parses argv[1..argc) (argv[0] is the program). Options take their value as the next word, attached ("-b8") or
// after '=' for long names ("--minbytes=8"); the one positional word is the collective.
inline ParseOutcome parsePerfArgs(int argc, const char* const* argv) {
  ParseOutcome out;
  PerfOptions& o = out.options;
  auto fail = [&out](std::string message) {
    out.action = ParseOutcome::Action::kError;
    out.error = std::move(message);
    return out;
  };
  enum class Id {
    kMinBytes,
    kMaxBytes,
    kStepFactor,
    kStepBytes,
    kIters,
    kWarmup,
    kCheck,
    kType,
    kOp,
    kRoot,
    kCsv,
    kJson,
    kPlot,
    kDevice,
    kAlgos,
    kRounds,
    kMinMs,
    kMaxIters,
    kGroup,
    kStream,
    kPages
  };
  struct Flag {
    Id id;
    char shortName;  // '\0': long name only
    std::string_view longName;
  };
  static constexpr Flag kFlags[] = {
      {Id::kMinBytes, 'b', "minbytes"},   {Id::kMaxBytes, 'e', "maxbytes"}, {Id::kStepFactor, 'f', "stepfactor"},
      {Id::kStepBytes, 'i', "stepbytes"}, {Id::kIters, 'n', "iters"},       {Id::kWarmup, 'w', "warmup_iters"},
      {Id::kCheck, 'c', "check"},         {Id::kType, 'd', "datatype"},     {Id::kOp, 'o', "op"},
      {Id::kRoot, 'r', "root"},           {Id::kCsv, '\0', "csv"},          {Id::kJson, '\0', "json"},
      {Id::kDevice, '\0', "device"},      {Id::kAlgos, '\0', "algos"},      {Id::kRounds, '\0', "rounds"},
      {Id::kMinMs, '\0', "min-ms"},       {Id::kGroup, '\0', "group"},      {Id::kStream, '\0', "stream"},
      {Id::kPages, '\0', "pages"},        {Id::kPlot, '\0', "plot"},        {Id::kMaxIters, '\0', "max-iters"},
  };
  std::optional<Collective> collective;
  bool sawStepBytes = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "-h" || word == "--help") {
      out.action = ParseOutcome::Action::kHelp;
      return out;
    }
    if (word.size() < 2 || word[0] != '-') {
      if (collective) return fail("more than one collective given: '" + std::string(word) + "'");
      collective = parseCollective(word);
      if (!collective) {
        return fail("unknown collective '" + std::string(word) +
                    "' (" + collectiveNames() + ")");
      }
      continue;
    }
    // Find the flag and its value.
    const Flag* flag = nullptr;
    std::optional<std::string_view> value;
    if (word[1] == '-') {
      std::string_view name = word.substr(2);
      if (size_t eq = name.find('='); eq != std::string_view::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      for (const Flag& f : kFlags) {
        if (f.longName == name) flag = &f;
      }
    } else {
      for (const Flag& f : kFlags) {
        if (f.shortName != '\0' && f.shortName == word[1]) flag = &f;
      }
      if (word.size() > 2) value = word.substr(2);
    }
    if (!flag) return fail("unknown option '" + std::string(word) + "'");
    if (!value) {
      if (i + 1 >= argc) return fail("option '" + std::string(word) + "' needs a value");
      value = argv[++i];
    }
    const std::string_view v = *value;
    auto badValue = [&](std::string_view what) {
      return fail("bad value '" + std::string(v) + "' for " + std::string(word.substr(0, word.find('='))) + ": " +
                  std::string(what));
    };
    switch (flag->id) {
      case Id::kMinBytes:
      case Id::kMaxBytes:
      case Id::kStepBytes: {
        std::optional<size_t> bytes = parseByteSize(v);
        if (!bytes) return badValue("expected bytes, e.g. 8, 64K, 64M, 1G");
        if (flag->id == Id::kMinBytes) o.minBytes = *bytes;
        if (flag->id == Id::kMaxBytes) o.maxBytes = *bytes;
        if (flag->id == Id::kStepBytes) {
          if (*bytes == 0) return badValue("the step must be at least 1 byte");
          o.stepBytes = *bytes;
          sawStepBytes = true;
        }
        break;
      }
      case Id::kStepFactor: {
        std::optional<int64_t> factor = detail::parseBoundedInt(v, 1 << 20);
        if (!factor || *factor < 2) return badValue("expected an integer factor >= 2");
        o.stepFactor = static_cast<uint64_t>(*factor);
        break;
      }
      case Id::kIters:
      case Id::kWarmup:
      case Id::kCheck:
      case Id::kRoot:
      case Id::kRounds:
      case Id::kMinMs:
      case Id::kMaxIters:
      case Id::kGroup: {
        std::optional<int64_t> n = detail::parseBoundedInt(v, std::numeric_limits<int>::max());
        if (!n) return badValue("expected a non-negative integer");
        if (flag->id == Id::kIters) {
          if (*n == 0) return badValue("at least one timed iteration is needed");
          o.iters = static_cast<int>(*n);
        }
        if (flag->id == Id::kWarmup) o.warmupIters = static_cast<int>(*n);
        if (flag->id == Id::kCheck) o.check = static_cast<int>(*n);
        if (flag->id == Id::kRoot) o.root = static_cast<int>(*n);
        if (flag->id == Id::kGroup) {
          if (*n == 0 || *n > kMaxGroupCalls)
            return badValue("expected 1 to " + std::to_string(kMaxGroupCalls) + " calls");
          o.group = static_cast<int>(*n);
        }
        if (flag->id == Id::kMaxIters) {
          if (*n == 0) return badValue("at least one timed iteration is needed");
          o.maxIters = static_cast<int>(*n);
        }
        if (flag->id == Id::kMinMs) {
          if (*n > 60000) return badValue("expected 0 to 60000 milliseconds");
          o.minMs = static_cast<int>(*n);
        }
        if (flag->id == Id::kRounds) {
          if (*n == 0 || *n > 1000) return badValue("expected 1 to 1000 rounds");
          o.rounds = static_cast<int>(*n);
        }
        break;
      }
      case Id::kType: {
        std::optional<chorusDataType_t> type = parseDataType(v);
        if (!type) {
          return badValue(
              "expected int8 uint8 int32 uint32 int64 uint64 float16 half bfloat16 float32 float float64 double "
              "float8e4m3 float8e5m2");
        }
        o.datatype = *type;
        break;
      }
      case Id::kOp: {
        std::optional<chorusRedOp_t> op = parseRedOp(v);
        if (!op) return badValue("expected sum prod max min avg band bor bxor");
        o.op = *op;
        break;
      }
      case Id::kCsv:
      case Id::kJson:
      case Id::kPlot:
        if (v.empty()) return badValue("expected a file name");
        (flag->id == Id::kCsv ? o.csvPath : flag->id == Id::kJson ? o.jsonPath : o.plotPath) = std::string(v);
        break;
      case Id::kStream:
        if (v == "none") {
          o.stream = PerfOptions::Stream::kNone;
        } else if (v == "host") {
          o.stream = PerfOptions::Stream::kHost;
        } else if (v == "host-each") {
          o.stream = PerfOptions::Stream::kHostEach;
        } else {
          return badValue("expected none, host or host-each");
        }
        break;
      case Id::kPages:
        if (v != "small" && v != "huge") return badValue("expected small or huge");
        o.hugePages = v == "huge";
        break;
      case Id::kDevice:
        if (v != "host" && v != "gpu") return badValue("expected host or gpu");
        o.deviceBuffers = v == "gpu";
        break;
      case Id::kAlgos: {
        o.algos = {"default"};
        for (size_t start = 0; start <= v.size();) {
          const size_t comma = std::min(v.find(',', start), v.size());
          const std::string_view name = v.substr(start, comma - start);
          if (name.empty()) return badValue("expected algorithm names separated by commas, e.g. ring,tree");
          if (std::find(o.algos.begin(), o.algos.end(), name) != o.algos.end()) {
            return badValue("'" + std::string(name) + "' is listed twice (the default selection is always compared)");
          }
          o.algos.emplace_back(name);
          start = comma + 1;
        }
        if (o.algos.size() < 2 || o.algos.size() > kMaxComparedAlgos) {
          return badValue("expected 1 to " + std::to_string(kMaxComparedAlgos - 1) + " algorithms besides the default");
        }
        break;
      }
    }
  }
  if (!collective) return fail("no collective given (" + collectiveNames() + ")");
  o.collective = *collective;
  if (sawStepBytes && o.stepFactor != 0) return fail("-i/--stepbytes and -f/--stepfactor are mutually exclusive");
  if (o.minBytes > o.maxBytes) {
    return fail("-b/--minbytes (" + std::to_string(o.minBytes) + ") is larger than -e/--maxbytes (" +
                std::to_string(o.maxBytes) + ")");
  }
  if (o.stepFactor != 0 && o.minBytes == 0) return fail("-b/--minbytes must be at least 1 when stepping by -f");
  if (o.deviceBuffers && o.stream != PerfOptions::Stream::kNone) {
    return fail("--stream host is for host buffers; --device gpu calls go on a CUDA stream");
  }
  if (!o.algos.empty() && (!o.csvPath.empty() || !o.jsonPath.empty() || !o.plotPath.empty())) {
    return fail("--algos prints its own table; --csv, --json and --plot are for the usual sweep");
  }
  return out;
}

// The sizes swept, smallest first: min, then min*factor (or min+step) while not above max.
inline std::vector<size_t> sweepSizes(const PerfOptions& o) {
  std::vector<size_t> sizes;
  for (size_t size = o.minBytes; size <= o.maxBytes;) {
    sizes.push_back(size);
    if (o.stepFactor != 0) {
      if (size == 0 || size > std::numeric_limits<size_t>::max() / o.stepFactor) break;
      size *= o.stepFactor;
    } else {
      if (o.stepBytes == 0 || size > std::numeric_limits<size_t>::max() - o.stepBytes) break;
      size += o.stepBytes;
    }
  }
  return sizes;
}

}  // namespace chorus::perf
