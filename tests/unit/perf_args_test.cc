// chorus-perf's pure parts: flag parsing, the size sweep, size layouts, formatting, the result checker, and the
// order of --algos's columns per round (a Williams design).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "reduce/half.h"
#include "perf/chorus_perf/collective_layout.h"
#include "perf/chorus_perf/half_float.h"
#include "perf/chorus_perf/perf_options.h"
#include "perf/chorus_perf/perf_report.h"
#include "perf/chorus_perf/result_checker.h"
#include "perf/chorus_perf/round_order.h"

namespace chorus::perf {
namespace {

std::vector<std::string> fields(const std::string& line);

// Parses a command line given as one string, split at spaces.
ParseOutcome parse(const std::string& commandLine) {
  std::vector<std::string> words = fields(commandLine);
  std::vector<const char*> argv = {"chorus-perf"};
  for (const std::string& w : words) argv.push_back(w.c_str());
  return parsePerfArgs(static_cast<int>(argv.size()), argv.data());
}

std::vector<std::string> fields(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

TEST(PerfArgs, DefaultsFollowNcclTests) {
  ParseOutcome p = parse("allreduce");
  ASSERT_EQ(p.action, ParseOutcome::Action::kRun) << p.error;
  EXPECT_EQ(p.options.collective, Collective::kAllReduce);
  EXPECT_EQ(p.options.iters, 20);
  EXPECT_EQ(p.options.warmupIters, 5);
  EXPECT_EQ(p.options.check, 1);
  EXPECT_EQ(p.options.datatype, chorusFloat32);
  EXPECT_EQ(p.options.op, chorusSum);
  EXPECT_EQ(p.options.root, 0);
  EXPECT_EQ(sweepSizes(p.options), std::vector<size_t>{32u << 20});
}

TEST(PerfArgs, ParsesEveryFlag) {
  ParseOutcome p = parse(
      "-b 8 -e64M -f 2 -n 7 --warmup_iters=3 -c 0 -d half -o max -r 1 --csv /tmp/x.csv --json=/tmp/x.json "
      "--plot /tmp/x.svg "
      "reduce_scatter");
  ASSERT_EQ(p.action, ParseOutcome::Action::kRun) << p.error;
  const PerfOptions& o = p.options;
  EXPECT_EQ(o.collective, Collective::kReduceScatter);
  EXPECT_EQ(o.minBytes, 8u);
  EXPECT_EQ(o.maxBytes, 64u << 20);
  EXPECT_EQ(o.stepFactor, 2u);
  EXPECT_EQ(o.iters, 7);
  EXPECT_EQ(o.warmupIters, 3);
  EXPECT_EQ(o.check, 0);
  EXPECT_EQ(o.datatype, chorusFloat16);
  EXPECT_EQ(o.op, chorusMax);
  EXPECT_EQ(o.root, 1);
  EXPECT_EQ(o.csvPath, "/tmp/x.csv");
  EXPECT_EQ(o.jsonPath, "/tmp/x.json");
  EXPECT_EQ(o.plotPath, "/tmp/x.svg");
}

TEST(PerfArgs, GroupsStreamsPagesAndTheFrameworkCalls) {
  ParseOutcome p = parse("alltoallv --group 64 --stream host-each -o bxor -d int32");
  ASSERT_EQ(p.action, ParseOutcome::Action::kRun) << p.error;
  EXPECT_EQ(p.options.collective, Collective::kAllToAllv);
  EXPECT_EQ(p.options.group, 64);
  EXPECT_EQ(p.options.stream, PerfOptions::Stream::kHostEach);
  EXPECT_FALSE(p.options.hugePages);
  EXPECT_TRUE(parse("allreduce --pages huge").options.hugePages);
  EXPECT_FALSE(parse("allreduce --pages small").options.hugePages);
  EXPECT_EQ(p.options.op, chorusBxor);
  for (const char* bad : {"allreduce --group 0", "allreduce --group 5000", "allreduce --stream gpu",
                          "allreduce --stream host --device gpu", "allreduce --pages 2M"}) {
    EXPECT_EQ(parse(bad).action, ParseOutcome::Action::kError) << bad;
  }
  // nccl-tests' layouts: alltoall splits the per-rank size into blocks; gather and scatter as allgather and
  // reducescatter; sendrecv and pingpong as one buffer.
  SizeLayout l = computeSizeLayout(Collective::kAllToAll, 1000, 4, 3, 1);
  EXPECT_EQ(l.count, 83u);
  EXPECT_EQ(l.sendBytes, 996u);
  EXPECT_EQ(l.recvBytes, 996u);
  l = computeSizeLayout(Collective::kGather, 1200, 4, 3, 2);
  EXPECT_EQ(l.count, 100u);
  EXPECT_EQ(l.sendBytes, 400u);
  EXPECT_EQ(l.recvBytes, 1200u);
  EXPECT_EQ(l.inPlaceSendOffset, 800u);
  l = computeSizeLayout(Collective::kScatter, 1200, 4, 3, 2);
  EXPECT_EQ(l.recvBytes, 400u);
  EXPECT_EQ(l.inPlaceRecvOffset, 800u);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kAllToAll, 4), 0.75);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kSendRecv, 4), 1.0);
  // Alltoallv's split is the same on every rank and stays within half to one and a half times the block.
  for (int from = 0; from < 4; ++from) {
    for (int to = 0; to < 4; ++to) {
      const size_t c = alltoallvCount(1000, from, to, 7);
      EXPECT_EQ(c, alltoallvCount(1000, from, to, 7));
      EXPECT_GE(c, 500u);
      EXPECT_LE(c, 1500u);
    }
  }
}

TEST(PerfArgs, TypeAndOpNames) {
  EXPECT_EQ(parseDataType("float"), chorusFloat32);
  EXPECT_EQ(parseDataType("double"), chorusFloat64);
  EXPECT_EQ(parseDataType("bfloat16"), chorusBfloat16);
  EXPECT_EQ(parseDataType("uint64"), chorusUint64);
  EXPECT_FALSE(parseDataType("float8"));
  EXPECT_EQ(parseRedOp("avg"), chorusAvg);
  EXPECT_FALSE(parseRedOp("mean"));
  for (int t = 0; t < chorusNumTypes; ++t) {
    const auto type = static_cast<chorusDataType_t>(t);
    EXPECT_EQ(parseDataType(dataTypeName(type)), type);
  }
  EXPECT_EQ(dataTypeSize(chorusBfloat16), 2u);
  EXPECT_EQ(dataTypeSize(chorusInt64), 8u);
  EXPECT_EQ(parseCollective("all_gather"), Collective::kAllGather);
  EXPECT_EQ(parseCollective("all_to_all"), Collective::kAllToAll);
  EXPECT_EQ(parseCollective("pingpong"), Collective::kPingPong);
  EXPECT_FALSE(parseCollective("alltoallw"));
}

TEST(PerfArgs, ByteSizes) {
  EXPECT_EQ(parseByteSize("0"), 0u);
  EXPECT_EQ(parseByteSize("8"), 8u);
  EXPECT_EQ(parseByteSize("1k"), 1024u);
  EXPECT_EQ(parseByteSize("64M"), 64u << 20);
  EXPECT_EQ(parseByteSize("2G"), 2ull << 30);
  EXPECT_FALSE(parseByteSize(""));
  EXPECT_FALSE(parseByteSize("M"));
  EXPECT_FALSE(parseByteSize("-8"));
  EXPECT_FALSE(parseByteSize("8MB"));
  EXPECT_FALSE(parseByteSize("1.5M"));
  EXPECT_FALSE(parseByteSize("99999999999999999999"));
  EXPECT_FALSE(parseByteSize("17179869184G"));  // 2^34 GiB overflows 64 bits
}

TEST(PerfArgs, RejectsBadCommandLines) {
  const std::vector<std::string> bad = {
      "",                                       // no collective
      "alltoallw",                              // unknown collective
      "allreduce broadcast",                    // two collectives
      "allreduce -x 1",                         // unknown flag
      "allreduce --nope=1",                     // unknown long flag
      "allreduce -b",                           // missing value
      "allreduce -b 8 -e 4",                    // min > max
      "allreduce -f 2 -i 8",                    // exclusive steps
      "allreduce -f 1",                         // factor below 2
      "allreduce -b 0 -f 2",                    // factor from zero never grows
      "allreduce -i 0",                         // step of zero never grows
      "allreduce -n 0",                         // nothing to time
      "allreduce -w -1",                        // negative
      "allreduce -r x",                         // not a number
      "allreduce -d float8",                    // unknown type
      "allreduce -o mean",                      // unknown op
      "allreduce --csv=",                       // empty file name
      "allreduce --algos=",                     // no algorithm
      "allreduce --algos ring,,tree",           // empty name
      "allreduce --algos ring,ring",            // twice
      "allreduce --algos default,ring",         // the default is always there
      "allreduce --algos a,b,c,d,e,f,g,h",      // more than kMaxComparedAlgos with the default
      "allreduce --algos ring --csv x.csv",     // the comparison has its own table
      "allreduce --algos ring --rounds 0",      // nothing to time
      "allreduce --algos ring --min-ms 60001",  // over a minute a run
      "allreduce --algos ring --min-ms -1",
      "allreduce --min-ms 300 --max-iters 0",  // a run of no calls
  };
  for (const std::string& commandLine : bad) {
    ParseOutcome p = parse(commandLine);
    EXPECT_EQ(p.action, ParseOutcome::Action::kError) << commandLine;
    EXPECT_FALSE(p.error.empty()) << commandLine;
  }
  EXPECT_NE(parse("allreduce -d float8").error.find("float8"), std::string::npos);
  EXPECT_EQ(parse("allreduce -h").action, ParseOutcome::Action::kHelp);
  EXPECT_EQ(parse("--help").action, ParseOutcome::Action::kHelp);
}

TEST(PerfArgs, AlgosPutTheDefaultFirst) {
  ParseOutcome p = parse("allreduce --algos ring,tree,halving_doubling --rounds 7");
  ASSERT_EQ(p.action, ParseOutcome::Action::kRun) << p.error;
  EXPECT_EQ(p.options.algos, (std::vector<std::string>{"default", "ring", "tree", "halving_doubling"}));
  EXPECT_EQ(p.options.rounds, 7);
  EXPECT_TRUE(parse("allreduce").options.algos.empty());
  EXPECT_EQ(parse("allreduce").options.rounds, 10);
  EXPECT_EQ(parse("allreduce").options.minMs, 0);
  EXPECT_EQ(parse("allreduce --algos ring --min-ms 5").options.minMs, 5);
  // Every run may last a time, as the peers' benchmarks time each size.
  const PerfOptions timed = parse("allreduce --min-ms 300 --max-iters 100000").options;
  EXPECT_EQ(timed.minMs, 300);
  EXPECT_EQ(timed.maxIters, 100000);
  EXPECT_EQ(parse("allreduce").options.maxIters, 1000000);
}

TEST(PerfReport, ComparisonTableNamesEveryAlgorithmAndTheRatio) {
  PerfOptions o = parse("allreduce -n 5 --algos ring,recursive_doubling --rounds 3").options;
  const std::string header = formatComparisonHeader(o, 4);
  EXPECT_NE(header.find("nranks 4"), std::string::npos) << header;
  EXPECT_NE(header.find("3 rounds of 5 calls per algorithm"), std::string::npos) << header;
  const std::string lastLine = header.substr(header.rfind('\n', header.size() - 2) + 1);
  const std::vector<std::string> titles = fields(lastLine);
  EXPECT_EQ(titles, (std::vector<std::string>{"#", "size", "(B)", "default", "ring", "recursive_doubling", "best",
                                              "forced", "default/best", "#wrong"}));
  const std::vector<std::string> row = fields(formatComparisonRow(o, 1024, {12.0, 10.0, 20.0}, 1, 0));
  EXPECT_EQ(row, (std::vector<std::string>{"1024", "12.00", "10.00", "20.00", "ring", "1.20", "0"}));
  EXPECT_EQ(formatComparisonFooter(0, 1.2, 1024),
            "# Out of bounds values : 0 OK\n# Worst default/best   : 1.20 at 1024 bytes\n#\n");
}

TEST(PerfReport, WithAutotuneTheRowNamesThePlansTheDefaultAndAutotuneRan) {
  PerfOptions o = parse("allreduce --algos autotune,ring").options;
  const std::string header = formatComparisonHeader(o, 4);
  const std::vector<std::string> titles = fields(header.substr(header.rfind('\n', header.size() - 2) + 1));
  EXPECT_EQ(std::vector<std::string>(titles.end() - 4, titles.end()),
            (std::vector<std::string>{"default", "ran", "autotune", "ran"}));
  const std::vector<std::string> row =
      fields(formatComparisonRow(o, 1024, {12.0, 10.0, 11.0}, 2, 0, {"ring@512K", "halving_doubling@128K"}));
  EXPECT_EQ(row, (std::vector<std::string>{"1024", "12.00", "10.00", "11.00", "ring", "1.09", "0.91", "0", "ring@512K",
                                           "halving_doubling@128K"}));
}

TEST(PerfArgs, SweepSizes) {
  PerfOptions o = parse("allreduce -b 8 -e 64M -f 2").options;
  std::vector<size_t> sizes = sweepSizes(o);
  ASSERT_EQ(sizes.size(), 24u);
  EXPECT_EQ(sizes.front(), 8u);
  EXPECT_EQ(sizes[1], 16u);
  EXPECT_EQ(sizes.back(), 64u << 20);

  o = parse("allreduce -b 1M -e 4M -i 1M").options;
  EXPECT_EQ(sweepSizes(o), (std::vector<size_t>{1u << 20, 2u << 20, 3u << 20, 4u << 20}));
  o = parse("allreduce -b 0 -e 10 -i 4").options;
  EXPECT_EQ(sweepSizes(o), (std::vector<size_t>{0, 4, 8}));
  o = parse("allreduce -b 3 -e 100 -f 10").options;
  EXPECT_EQ(sweepSizes(o), (std::vector<size_t>{3, 30}));
  o.minBytes = o.maxBytes = SIZE_MAX;  // no overflow at the top of the range
  EXPECT_EQ(sweepSizes(o), std::vector<size_t>{SIZE_MAX});
}

TEST(PerfLayout, CountsFollowNcclTests) {
  SizeLayout l = computeSizeLayout(Collective::kAllReduce, 10, 4, 3, 1);
  EXPECT_EQ(l.count, 2u);
  EXPECT_EQ(l.bytes, 8u);
  EXPECT_EQ(l.sendBytes, 8u);
  EXPECT_EQ(l.recvBytes, 8u);
  EXPECT_EQ(l.inPlaceSendOffset, 0u);

  l = computeSizeLayout(Collective::kAllGather, 1000, 4, 3, 2);  // 250 elements, 83 per rank
  EXPECT_EQ(l.count, 83u);
  EXPECT_EQ(l.totalCount, 249u);
  EXPECT_EQ(l.bytes, 996u);
  EXPECT_EQ(l.sendBytes, 332u);
  EXPECT_EQ(l.recvBytes, 996u);
  EXPECT_EQ(l.inPlaceBytes, 996u);
  EXPECT_EQ(l.inPlaceSendOffset, 2u * 332u);
  EXPECT_EQ(l.inPlaceRecvOffset, 0u);

  l = computeSizeLayout(Collective::kReduceScatter, 1000, 4, 3, 2);
  EXPECT_EQ(l.count, 83u);
  EXPECT_EQ(l.bytes, 996u);
  EXPECT_EQ(l.sendBytes, 996u);
  EXPECT_EQ(l.recvBytes, 332u);
  EXPECT_EQ(l.inPlaceSendOffset, 0u);
  EXPECT_EQ(l.inPlaceRecvOffset, 2u * 332u);

  l = computeSizeLayout(Collective::kAllGather, 8, 4, 4, 0);  // less than one element per rank
  EXPECT_EQ(l.count, 0u);
  EXPECT_EQ(l.bytes, 0u);

  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kReduceScatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(Collective::kReduce, 8), 1.0);
}

TEST(PerfReport, TableHasNcclTestsShape) {
  PerfOptions o = parse("allreduce -b 8 -e 64M -f 2").options;
  const std::string header = formatTableHeader(o, 2);
  const std::string expected =
      "# chorus-perf allreduce: nranks 2, datatype float32, op sum, root 0, iters 20, warmup 5, check 1\n"
      "#\n"
      "#                                                              out-of-place                       in-place\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
      "(GB/s)\n";
  EXPECT_EQ(header, expected);

  SizeRecord r;
  r.collective = "allreduce";
  r.nranks = 2;
  r.bytes = 8;
  r.count = 2;
  r.type = "float32";
  r.op = "sum";
  r.root = -1;
  r.outOfPlace = {10.5, 0, 0, 0};
  r.inPlace = {10.375, 0, 0, 0};
  EXPECT_EQ(formatTableRow(r),
            "           8             2   float32     sum      -1    10.50    0.00    0.00      0    10.38    0.00"
            "    0.00      0\n");

  r.bytes = 64u << 20;
  r.count = 16u << 20;
  r.outOfPlace = {123456.7, 0, 0, std::nullopt};
  computeBandwidths(r.outOfPlace, r.bytes, busBandwidthFactor(Collective::kAllReduce, 2));
  r.inPlace = {1234.56, 0, 0, 3};
  computeBandwidths(r.inPlace, r.bytes, 1.0);
  EXPECT_NEAR(r.outOfPlace.algBandwidthGBs, 67108864.0 / 123456.7 / 1e3, 1e-9);
  const std::vector<std::string> f = fields(formatTableRow(r));
  ASSERT_EQ(f.size(), 13u);
  EXPECT_EQ(f[0], "67108864");  // field 1: size
  EXPECT_EQ(f[1], "16777216");
  EXPECT_EQ(f[5], "123457");  // field 6: out-of-place time, no decimals above 10 ms
  EXPECT_EQ(f[7], "0.54");    // field 8: out-of-place busbw (0.5436 GB/s)
  EXPECT_EQ(f[8], "N/A");
  EXPECT_EQ(f[9], "1234.6");
  EXPECT_EQ(f[12], "3");

  EXPECT_EQ(formatTableFooter(0, 1.2345), "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.2345\n#\n");
  EXPECT_EQ(formatTableFooter(7, 0), "# Out of bounds values : 7 FAILED\n# Avg bus bandwidth    : 0\n#\n");
}

TEST(PerfReport, CsvAndJsonRecords) {
  SizeRecord r;
  r.collective = "broadcast";
  r.nranks = 4;
  r.bytes = 1024;
  r.count = 256;
  r.type = "int32";
  r.op = "none";
  r.root = 3;
  r.outOfPlace = {12.5, 0.08192, 0.08192, 0};
  r.inPlace = {11.0, 0.0930909, 0.0930909, std::nullopt};
  r.algorithm = "tree";
  EXPECT_EQ(csvRecord(r), "broadcast,4,1024,256,int32,none,3,12.500,0.0819,0.0819,0,11.000,0.0931,0.0931,,tree\n");
  const std::string header = csvHeader();
  const std::string record = csvRecord(r);
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), std::count(record.begin(), record.end(), ','));
  EXPECT_EQ(jsonRecord(r),
            "{\"collective\": \"broadcast\", \"ranks\": 4, \"bytes\": 1024, \"count\": 256, \"type\": \"int32\", "
            "\"op\": \"none\", \"root\": 3, \"oop_time_us\": 12.500, \"oop_algbw_gbs\": 0.0819, \"oop_busbw_gbs\": "
            "0.0819, \"oop_wrong\": 0, \"ip_time_us\": 11.000, \"ip_algbw_gbs\": 0.0931, \"ip_busbw_gbs\": 0.0931, "
            "\"ip_wrong\": null, \"algorithm\": \"tree\"}");
}

TEST(PerfHalf, AgreesWithTheLibraryConversions) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float b = bfloat16BitsToFloat(static_cast<uint16_t>(h));
    if (!std::isnan(b)) {
      ASSERT_EQ(b, bfloat16ToFloat(static_cast<uint16_t>(h))) << h;
    }
    const float f = halfBitsToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    const float library = halfToFloat(static_cast<uint16_t>(h));
    ASSERT_EQ(std::memcmp(&f, &library, sizeof(f)), 0) << h;  // bitwise: keeps the sign of zero
    ASSERT_EQ(floatToHalfBits(f), h) << h;
  }
  // Every rounding boundary region, over a sweep of float bit patterns.
  for (uint64_t bits = 0; bits < 0x7f800000u; bits += 997) {
    float f;
    const uint32_t b32 = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b32, 4);
    ASSERT_EQ(floatToHalfBits(f), floatToHalf(f)) << bits;
    ASSERT_EQ(floatToHalfBits(-f), floatToHalf(-f)) << bits;
    ASSERT_EQ(floatToBfloat16Bits(f), floatToBfloat16(f)) << bits;
  }
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalfBits(2049.0f), 0x6800);             // tie to even: 2048
  EXPECT_EQ(floatToHalfBits(2051.0f), 0x6802);             // tie to even: 2052
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7c00);            // rounds to infinity
  EXPECT_EQ(floatToBfloat16Bits(1.0f + 0x1p-8f), 0x3f80);  // tie to even: 1
  EXPECT_EQ(floatToBfloat16Bits(257.0f), 0x4380);          // 256
}

// A scalar "library": reduces rank inputs in reverse rank order, rounding to the type after every step as the
// reducer does, then finishes avg by dividing; its result must match the checker's expectation exactly.
template <typename Storage>
struct TypeOps {
  chorusDataType_t type;
  double decode(Storage s) const {
    if constexpr (std::is_same_v<Storage, uint16_t>) {
      return type == chorusFloat16 ? halfBitsToFloat(s) : bfloat16BitsToFloat(s);
    } else {
      return static_cast<double>(s);
    }
  }
  Storage encode(double v) const {
    if constexpr (std::is_same_v<Storage, uint16_t>) {
      return type == chorusFloat16 ? floatToHalfBits(static_cast<float>(v))
                                   : floatToBfloat16Bits(static_cast<float>(v));
    } else if constexpr (std::is_integral_v<Storage>) {
      return static_cast<Storage>(static_cast<int64_t>(v));  // wraps modulo the width, as the type does
    } else {
      return static_cast<Storage>(v);
    }
  }
  Storage step(Storage a, Storage b, chorusRedOp_t op) const {
    if constexpr (std::is_integral_v<Storage> && !std::is_same_v<Storage, uint16_t>) {
      if (op == chorusBand) return static_cast<Storage>(a & b);
      if (op == chorusBor) return static_cast<Storage>(a | b);
      if (op == chorusBxor) return static_cast<Storage>(a ^ b);
    }
    const double x = decode(a);
    const double y = decode(b);
    switch (op) {
      case chorusProd:
        return encode(x * y);
      case chorusMax:
        return encode(std::max(x, y));
      case chorusMin:
        return encode(std::min(x, y));
      default:
        return encode(x + y);
    }
  }
  Storage finishAverage(Storage sum, int n) const {
    if constexpr (std::is_same_v<Storage, uint16_t>) {  // before integers: halves are stored in uint16_t
      return encode(static_cast<float>(decode(sum)) / static_cast<float>(n));
    } else if constexpr (std::is_integral_v<Storage>) {
      return encode(std::trunc(decode(sum) / n));
    } else {
      return sum / static_cast<Storage>(n);
    }
  }
};

template <typename Storage>
void checkReductionsOfType(chorusDataType_t type) {
  const TypeOps<Storage> ops{type};
  // float32 crosses the period boundary (the wrap-around code is the same template for every type).
  const size_t count = type == chorusFloat32 ? kPatternPeriod + 1000 : 5000;
  for (int nranks : {1, 2, 3, 7, 40}) {
    if (nranks == 40 && type != chorusInt8 && type != chorusUint8) continue;  // 40: 8-bit sums wrap
    for (int o = 0; o < chorusNumOps; ++o) {
      const auto op = static_cast<chorusRedOp_t>(o);
      if (op >= chorusBand && type > chorusUint64) continue;  // bitwise ops take integers only
      SCOPED_TRACE(std::string(dataTypeName(type)) + " " + std::string(redOpName(op)) + " n=" + std::to_string(nranks));
      auto checker = makeResultChecker(type, op, nranks, true);
      checker->setSeed(42);
      std::vector<std::vector<Storage>> inputs(nranks, std::vector<Storage>(count));
      for (int r = 0; r < nranks; ++r) checker->fillInput(inputs[r].data(), count, r);
      std::vector<Storage> result = inputs[nranks - 1];
      for (int r = nranks - 2; r >= 0; --r) {
        for (size_t i = 0; i < count; ++i) result[i] = ops.step(result[i], inputs[r][i], op);
      }
      if (op == chorusAvg) {
        for (Storage& v : result) v = ops.finishAverage(v, nranks);
      }
      EXPECT_EQ(checker->countReducedMismatches(result.data(), count), 0u);
      EXPECT_EQ(checker->countReducedMismatches(result.data() + 500, 700, 500), 0u);  // a block, as reducescatter
      EXPECT_EQ(checker->countInputMismatches(inputs[0].data(), count, 0), 0u);
      // Ranks differ (prod: mostly 1 everywhere, so only now and then).
      const size_t distinct = op == chorusProd ? count / (10 * nranks) : count / 3;
      if (nranks > 1) {
        EXPECT_GT(checker->countInputMismatches(inputs[1].data(), count, 0), distinct);
      }
      result[0] = ops.encode(ops.decode(result[0]) + 16);
      result[count - 1] = ops.encode(ops.decode(result[count - 1]) - 16);
      EXPECT_EQ(checker->countReducedMismatches(result.data(), count), 2u);
      // A new seed is a new pattern: yesterday's correct result is wrong today.
      checker->setSeed(43);
      EXPECT_GT(checker->countInputMismatches(inputs[0].data(), count, 0), distinct);
    }
  }
}

TEST(PerfChecker, ExpectedResultsMatchAnyReductionOrder) {
  checkReductionsOfType<int8_t>(chorusInt8);
  checkReductionsOfType<uint8_t>(chorusUint8);
  checkReductionsOfType<int32_t>(chorusInt32);
  checkReductionsOfType<uint32_t>(chorusUint32);
  checkReductionsOfType<int64_t>(chorusInt64);
  checkReductionsOfType<uint64_t>(chorusUint64);
  checkReductionsOfType<uint16_t>(chorusFloat16);
  checkReductionsOfType<uint16_t>(chorusBfloat16);
  checkReductionsOfType<float>(chorusFloat32);
  checkReductionsOfType<double>(chorusFloat64);
}

TEST(PerfChecker, PatternStaysSmallAndExact) {
  for (int nranks : {2, 64, 300}) {
    const PatternShape bf16Sum = patternShapeFor(chorusBfloat16, chorusSum, nranks, true);
    EXPECT_LE(bf16Sum.amplitude * nranks, std::max(256, nranks));
    const PatternShape prod = patternShapeFor(chorusFloat16, chorusProd, nranks, true);
    const PatternShape uprod = patternShapeFor(chorusUint32, chorusProd, nranks, true);
    const PatternShape usum = patternShapeFor(chorusUint8, chorusSum, nranks, true);
    for (size_t j = 0; j < 5000; ++j) {
      int64_t product = 1;
      for (int r = 0; r < nranks; ++r) {
        const int64_t p = patternValue(prod, 7, r, j);
        product *= p;
        EXPECT_TRUE(p == 1 || p == -1 || p == 2 || p == -2 || p == 4 || p == -4) << p;
        EXPECT_GE(patternValue(uprod, 7, r, j), 1);
        const int64_t u = patternValue(usum, 7, r, j);
        EXPECT_TRUE(u >= 0 && u <= 8) << u;
        const int64_t s = patternValue(bf16Sum, 7, r, j);
        EXPECT_LE(std::abs(s), bf16Sum.amplitude);
      }
      EXPECT_LE(std::abs(product), 4);
    }
  }
}

TEST(PerfChecker, SentinelsCountForeignWrites) {
  std::vector<unsigned char> guard(64);
  fillSentinel(guard.data(), guard.size());
  EXPECT_EQ(countSentinelMismatches(guard.data(), guard.size(), 4), 0u);
  guard[5] = 0;
  guard[6] = 0;
  guard[63] = 1;
  EXPECT_EQ(countSentinelMismatches(guard.data(), guard.size(), 4), 2u);  // elements 1 and 15
  EXPECT_EQ(countSentinelMismatches(guard.data(), guard.size(), 1), 3u);
}

// --algos's rounds: every column first, and after every other, equally often.
TEST(RoundOrder, EveryColumnFirstAndAfterEveryOtherEquallyOften) {
  for (size_t n = 1; n <= 9; ++n) {
    const int rows = n % 2 == 0 ? static_cast<int>(n) : 2 * static_cast<int>(n);
    std::map<size_t, int> firsts;
    std::map<std::pair<size_t, size_t>, int> follows;
    for (int r = 0; r < rows; ++r) {
      std::vector<size_t> order = roundOrder(n, r);
      std::vector<size_t> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      for (size_t k = 0; k < n; ++k) ASSERT_EQ(sorted[k], k) << n << " columns, round " << r << ": not a permutation";
      ++firsts[order[0]];
      for (size_t k = 1; k < n; ++k) ++follows[{order[k - 1], order[k]}];
      EXPECT_EQ(roundOrder(n, r + rows), order) << "the design cycles";
    }
    for (size_t c = 0; c < n; ++c) EXPECT_EQ(firsts[c], rows / static_cast<int>(n)) << n << " columns";
    if (n < 2) continue;
    EXPECT_EQ(follows.size(), n * (n - 1)) << n << " columns: some column never follows another";
    for (const auto& [pair, count] : follows) EXPECT_EQ(count, rows / static_cast<int>(n)) << n << " columns";
  }
}

}  // namespace
}  // namespace chorus::perf
