// The topology file: detect -> dump -> parse round trips, the example files, and precise errors on bad input.
#include "topology/topology_json.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "topology/host_topology_check.h"
#include "topology/topology_description.h"
#include "tests/unit/topology_test_support.h"
#include "topology/topology_detector.h"

namespace chorus {
namespace {

using topology_test::kDataDir;

std::string readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The message parseTopologyJson throws for `text` ("" when it parses).
std::string parseError(const std::string& text) {
  try {
    parseTopologyJson(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusInvalidArgument) << e.what();
    return e.what();
  }
  return "";
}

// A document with these packages and NUMA nodes, and `extra` fields appended (",\"pci\":[...]").
std::string twoNodeDocument(const std::string& packages, const std::string& numa, const std::string& extra = "") {
  return R"({"format":"chorus-topology/1","packages":)" + packages + R"(,"numa":)" + numa + extra + "}";
}

const std::string kPackages = R"([{"id":0,"cpus":"0-3","cores":4},{"id":1,"cpus":"4-7","cores":4}])";
const std::string kNuma =
    R"([{"id":0,"cpus":"0-3","cores":4,"memory_bytes":1024},{"id":1,"cpus":"4-7","cores":4,"memory_bytes":1024}])";

TEST(TopologyJsonTest, DetectedTopologyRoundTrips) {
  HostTopology detected = detectHostTopology();
  ASSERT_NO_THROW(validateHostTopology(detected));
  std::string json = topologyToJson(detected);
  HostTopology parsed = parseTopologyJson(json);
  EXPECT_EQ(parsed, detected) << json;
  EXPECT_EQ(topologyToJson(parsed), json);
}

TEST(TopologyJsonTest, MinimalTopologyRoundTrips) {
  HostTopology minimal = minimalHostTopology(3, 1 << 30, "fallback (test)");
  EXPECT_EQ(parseTopologyJson(topologyToJson(minimal)), minimal);
}

TEST(TopologyJsonTest, TwoSocketExampleHasWhatItSays) {
  HostTopology t = loadTopologyFile(kDataDir + "two_socket_2gpu_2nic.json");
  ASSERT_EQ(t.packages.size(), 2u);
  ASSERT_EQ(t.numaNodes.size(), 2u);
  EXPECT_EQ(t.cores(), 32);
  EXPECT_EQ(t.hardwareThreads(), 64);
  EXPECT_EQ(t.gpus(), 2);
  EXPECT_TRUE(t.hasRdma());
  EXPECT_EQ(t.numaNodeOfCpu(40), 0);
  EXPECT_EQ(t.numaNodeOfCpu(20), 1);
  EXPECT_EQ(t.numaNodeOfCpu(64), -1);
  EXPECT_EQ(t.packageOfNuma(1), 1);
  std::vector<const PciDevice*> gpus = t.gpuDevices();
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0]->busId, "0000:17:00.0");
  EXPECT_EQ(gpus[0]->numaNode, 0);
  EXPECT_EQ(gpus[1]->numaNode, 1);
  EXPECT_EQ(t.numaNode(1)->memoryBytes, 256ULL << 30);
  EXPECT_TRUE(t.linkOverrides.empty());
  EXPECT_EQ(parseTopologyJson(topologyToJson(t)), t);
  std::string text = describeHost(t);
  EXPECT_NE(text.find("2 packages, 2 NUMA nodes, 32 cores, 64 hardware threads, 512 GiB memory, 2 GPUs, 2 NICs\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  NUMA node 1: CPUs 16-31,48-63, 16 cores, 256 GiB, package 1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  caches: L1 48 KiB x32, L2 2 MiB x32, L3 60 MiB x2\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  GPU 1: 0000:b1:00.0 [10de:2330] NVIDIA H100 80GB HBM3, NUMA node 1\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  NIC: 0000:ca:00.0 [15b3:1021] ibp202s0 mlx5_1 (RDMA), NUMA node 1\n"), std::string::npos)
      << text;
}

TEST(TopologyJsonTest, FlatVmExampleOverridesTheNetworkLink) {
  HostTopology t = loadTopologyFile(kDataDir + "flat_vm.json");
  EXPECT_EQ(t.numaNodes.size(), 1u);
  EXPECT_EQ(t.cores(), 8);
  EXPECT_EQ(t.gpus(), 0);
  EXPECT_FALSE(t.hasRdma());
  ASSERT_EQ(t.pciDevices.size(), 1u);
  EXPECT_EQ(t.pciDevices[0].numaNode, -1);
  ASSERT_EQ(t.linkOverrides.count(LinkClass::kNetwork), 1u);
  EXPECT_EQ(t.linkOverrides.at(LinkClass::kNetwork), (LinkParams{30, 1.2}));
  LinkModel model = linkModelOf(t);
  EXPECT_EQ(model.params(LinkClass::kNetwork), (LinkParams{30, 1.2}));
  EXPECT_EQ(model.source(LinkClass::kNetwork), LinkSource::kFile);
  EXPECT_EQ(model.source(LinkClass::kSameNuma), LinkSource::kDefault);
  EXPECT_EQ(parseTopologyJson(topologyToJson(t)), t);
}

TEST(TopologyJsonTest, RacksRoundTripAndReachTheLinkModel) {
  HostTopology t = loadTopologyFile(kDataDir + "flat_vm.json");
  t.fabric = {2, 0.25};
  const std::string text = topologyToJson(t);
  EXPECT_NE(text.find("\"fabric\""), std::string::npos) << text;
  EXPECT_EQ(parseTopologyJson(text), t);
  EXPECT_EQ(linkModelOf(t).fabric(), (RackFabric{2, 0.25}));
  EXPECT_NE(describeHost(t).find("fabric: racks of 2 hosts, uplinks at 0.25 GB/s"), std::string::npos)
      << describeHost(t);
  t.fabric = {2, -1};
  EXPECT_THROW(validateHostTopology(t), Error);
}

TEST(TopologyJsonTest, TheSchedulersWaitRoundTripsAndReachesTheLinkModel) {
  HostTopology t = loadTopologyFile(kDataDir + "flat_vm.json");
  EXPECT_EQ(linkModelOf(t).contextSwitchUs(), 0);
  t.contextSwitchUs = 12.5;
  const std::string text = topologyToJson(t);
  EXPECT_NE(text.find("\"context_switch_us\""), std::string::npos) << text;
  EXPECT_EQ(parseTopologyJson(text), t);
  EXPECT_EQ(linkModelOf(t).contextSwitchUs(), 12.5);
  EXPECT_NE(describeHost(t).find("scheduler: a step waits 12.5 us"), std::string::npos) << describeHost(t);
  t.contextSwitchUs = -1;
  EXPECT_THROW(validateHostTopology(t), Error);
}

TEST(TopologyJsonTest, AShapedLinksBucketRoundTripsAndIsChecked) {
  HostTopology t = loadTopologyFile(kDataDir + "flat_vm.json");
  t.linkOverrides[LinkClass::kNetwork] = LinkParams{16, 0.12, 125000, 0.45};
  const std::string text = topologyToJson(t);
  EXPECT_NE(text.find("\"burst_bytes\""), std::string::npos) << text;
  EXPECT_EQ(parseTopologyJson(text), t);
  t.linkOverrides[LinkClass::kNetwork].peakGBs = 0.1;  // a peak below the rate
  EXPECT_THROW(validateHostTopology(t), Error);
}

TEST(TopologyJsonTest, AMultiFrameCostRoundTripsAndMustBeFinite) {
  HostTopology t = loadTopologyFile(kDataDir + "flat_vm.json");
  t.linkOverrides[LinkClass::kNetwork] = LinkParams{16, 0.12, 0, 0, 1448, 9.5};
  const std::string text = topologyToJson(t);
  EXPECT_NE(text.find("\"multi_frame_us\""), std::string::npos) << text;
  EXPECT_EQ(parseTopologyJson(text), t);
  t.linkOverrides[LinkClass::kNetwork].multiFrameUs = -1;
  EXPECT_THROW(validateHostTopology(t), Error);
}

TEST(TopologyJsonTest, AChainTimeRoundTripsAndMustBeFinite) {
  HostTopology t = loadTopologyFile(kDataDir + "flat_vm.json");
  t.linkOverrides[LinkClass::kNetwork] = LinkParams{16, 0.12, 0, 0, 0, 0, 9.25};
  const std::string text = topologyToJson(t);
  EXPECT_NE(text.find("\"chain_us\""), std::string::npos) << text;
  EXPECT_EQ(parseTopologyJson(text), t);
  t.linkOverrides[LinkClass::kNetwork].chainUs = std::numeric_limits<double>::infinity();
  EXPECT_THROW(validateHostTopology(t), Error);
}

TEST(TopologyJsonTest, EntriesComeBackSorted) {
  std::string doc = twoNodeDocument(R"([{"id":1,"cpus":"4-7","cores":4},{"id":0,"cpus":"0-3","cores":4}])",
                                    R"([{"id":1,"cpus":"4-7","cores":4,"memory_bytes":0},)"
                                    R"({"id":0,"cpus":"0-3","cores":4,"memory_bytes":0}])");
  HostTopology t = parseTopologyJson(doc);
  EXPECT_EQ(t.packages[0].id, 0);
  EXPECT_EQ(t.numaNodes[0].id, 0);
  EXPECT_EQ(t.numaNodes[1].cpus, (std::vector<int>{4, 5, 6, 7}));
}

TEST(TopologyJsonTest, MemoryOnlyNodesAreAllowed) {
  std::string doc =
      twoNodeDocument(R"([{"id":0,"cpus":"0-3","cores":2}])", R"([{"id":0,"cpus":"0-3","cores":2,"memory_bytes":8},)"
                                                              R"({"id":2,"cpus":"","cores":0,"memory_bytes":16}])");
  HostTopology t = parseTopologyJson(doc);
  EXPECT_TRUE(t.numaNode(2)->cpus.empty());
  EXPECT_EQ(t.packageOfNuma(2), -1);
}

struct BadCase {
  const char* name;
  std::string text;
  std::string expected;  // a substring of the message
};

TEST(TopologyJsonTest, MalformedInputIsRejectedWithAPreciseMessage) {
  const std::string p = kPackages;
  const std::string n = kNuma;
  const std::vector<BadCase> cases = {
      {"empty", "", "topology JSON: document: "},
      {"not json", "{\"format\": chorus}", "syntax error"},
      {"array root", "[]", "document: must be an object, not an array"},
      {"no format", R"({"packages":[],"numa":[]})", "document.format: is missing"},
      {"future format", R"({"format":"chorus-topology/2"})", "format: 'chorus-topology/2' is not supported"},
      {"format type", R"({"format":1})", "document.format: must be a string, not an integer"},
      {"packages type", twoNodeDocument("{}", n), "document.packages: must be an array, not an object"},
      {"no packages", twoNodeDocument("[]", n), "packages: must list at least one package"},
      {"cpu list junk", twoNodeDocument(R"([{"id":0,"cpus":"0-x","cores":1}])", n),
       "packages[0].cpus: '0-x' is not a CPU list like \"0-7,16-23\": unexpected character 'x' at offset 2"},
      {"cpu list reversed", twoNodeDocument(R"([{"id":0,"cpus":"7-3","cores":1}])", n), "range 7-3 is reversed"},
      {"cpu list huge", twoNodeDocument(R"([{"id":0,"cpus":"0-99999999999","cores":1}])", n), "CPU number above 65535"},
      {"cpu twice", twoNodeDocument(R"([{"id":0,"cpus":"0-3,2","cores":1}])", n), "CPU 2 is listed twice"},
      {"cpu list spaces", twoNodeDocument(R"([{"id":0,"cpus":"0, 1","cores":1}])", n), "unexpected character ' '"},
      {"float id", twoNodeDocument(R"([{"id":1.5,"cpus":"0-7","cores":8}])", n),
       "packages[0].id: must be an integer, not a number"},
      {"negative id", twoNodeDocument(R"([{"id":-1,"cpus":"0-7","cores":8}])", n),
       "packages[0].id: -1 is outside 0..65535"},
      {"huge id", twoNodeDocument(R"([{"id":18446744073709551615,"cpus":"0-7","cores":8}])", n),
       "packages[0].id: 18446744073709551615 is outside 0..65535"},
      {"string id", twoNodeDocument(R"([{"id":"0","cpus":"0-7","cores":8}])", n),
       "packages[0].id: must be an integer, not a string"},
      {"duplicate package", twoNodeDocument(R"([{"id":0,"cpus":"0-3","cores":4},{"id":0,"cpus":"4-7","cores":4}])", n),
       "packages[1].id: 0 is used twice"},
      {"overlapping nodes",
       twoNodeDocument(p, R"([{"id":0,"cpus":"0-3","cores":4,"memory_bytes":0},)"
                          R"({"id":1,"cpus":"3-7","cores":4,"memory_bytes":0}])"),
       "numa[1].cpus: CPU 3 is also in numa[0]"},
      {"node cpu in no package",
       twoNodeDocument(p, R"([{"id":0,"cpus":"0-3","cores":4,"memory_bytes":0},)"
                          R"({"id":1,"cpus":"4-8","cores":4,"memory_bytes":0}])"),
       "numa[1].cpus: CPU 8 is in no package"},
      {"package cpu in no node",
       twoNodeDocument(p, R"([{"id":0,"cpus":"0-3","cores":4,"memory_bytes":0},)"
                          R"({"id":1,"cpus":"4-6","cores":3,"memory_bytes":0}])"),
       "packages[1].cpus: CPU 7 is in no NUMA node"},
      {"too many cores",
       twoNodeDocument(p, R"([{"id":0,"cpus":"0-3","cores":5,"memory_bytes":0},)"
                          R"({"id":1,"cpus":"4-7","cores":4,"memory_bytes":0}])"),
       "numa[0].cores: is 5 but must be in 1..4"},
      {"cores disagree",
       twoNodeDocument(p, R"([{"id":0,"cpus":"0-3","cores":2,"memory_bytes":0},)"
                          R"({"id":1,"cpus":"4-7","cores":4,"memory_bytes":0}])"),
       "numa: the nodes have 6 cores but the packages 8"},
      {"negative memory", twoNodeDocument(p, R"([{"id":0,"cpus":"0-7","cores":8,"memory_bytes":-5}])"),
       "numa[0].memory_bytes: must not be negative"},
      {"overflowing number", twoNodeDocument(p, R"([{"id":0,"cpus":"0-7","cores":8,"memory_bytes":1e400}])"),
       "topology JSON: document: "},
      {"missing memory", twoNodeDocument(p, R"([{"id":0,"cpus":"0-7","cores":8}])"),
       "numa[0].memory_bytes: is missing"},
      {"misspelt field", twoNodeDocument(p, n, R"(,"numa_nodes":[])"),
       "document: unknown field 'numa_nodes' (known here: "},
      {"misspelt entry field", twoNodeDocument(p, R"([{"id":0,"cpus":"0-7","cores":8,"memory_bytes":1,"memory":1}])"),
       "numa[0]: unknown field 'memory'"},
      {"pci on missing node", twoNodeDocument(p, n, R"(,"pci":[{"kind":"gpu","bus_id":"0000:17:00.0","numa":3}])"),
       "pci[0].numa: 3 is not the id of a listed NUMA node (nor -1)"},
      {"pci bad kind", twoNodeDocument(p, n, R"(,"pci":[{"kind":"fpga","bus_id":"0000:17:00.0"}])"),
       "pci[0].kind: 'fpga' is neither \"gpu\" nor \"nic\""},
      {"pci bad bus id", twoNodeDocument(p, n, R"(,"pci":[{"kind":"nic","bus_id":"17:00.0"}])"),
       "pci[0].bus_id: '17:00.0' is not a PCI address like 0000:3b:00.0"},
      {"pci uppercase bus id", twoNodeDocument(p, n, R"(,"pci":[{"kind":"nic","bus_id":"0000:3B:00.0"}])"),
       "is not a PCI address"},
      {"pci twice",
       twoNodeDocument(p, n,
                       R"(,"pci":[{"kind":"nic","bus_id":"0000:17:00.0"},{"kind":"gpu","bus_id":"0000:17:00.0"}])"),
       "pci[1].bus_id: 0000:17:00.0 is listed twice"},
      {"gpu with interface",
       twoNodeDocument(p, n, R"(,"pci":[{"kind":"gpu","bus_id":"0000:17:00.0","interfaces":["eth0"]}])"),
       "pci[0]: a gpu has no network interfaces or RDMA devices"},
      {"bad interface name",
       twoNodeDocument(p, n, R"(,"pci":[{"kind":"nic","bus_id":"0000:17:00.0","interfaces":["eth 0"]}])"),
       "pci[0].interfaces[0]: 'eth 0' has a character other than"},
      {"bad vendor", twoNodeDocument(p, n, R"(,"pci":[{"kind":"nic","bus_id":"0000:17:00.0","vendor_id":"0x10de"}])"),
       "pci[0].vendor_id: must be 4 lowercase hex digits"},
      {"unknown link class", twoNodeDocument(p, n, R"(,"links":{"infiniband":{"latency_us":1,"bandwidth_gbs":1}})"),
       "links: unknown link class 'infiniband'"},
      {"zero bandwidth", twoNodeDocument(p, n, R"(,"links":{"network":{"latency_us":1,"bandwidth_gbs":0}})"),
       "links.network.bandwidth_gbs: must be a finite number in (0, 1e6]"},
      {"link missing field", twoNodeDocument(p, n, R"(,"links":{"rdma":{"latency_us":1}})"),
       "links.rdma.bandwidth_gbs: is missing"},
      {"control character", twoNodeDocument(p, n, R"(,"hostname":"a\u0001b")"), "hostname: contains a control"},
      {"invalid utf-8", twoNodeDocument(p, n, ",\"hostname\":\"a\xff\""), "topology JSON: document: "},
      {"deep nesting", std::string(100000, '['), "nested deeper than 32 levels"},
      {"oversized", std::string(kMaxTopologyJsonBytes + 1, ' '), "bytes is more than the 1048576"},
  };
  for (const BadCase& c : cases) {
    std::string message = parseError(c.text);
    EXPECT_NE(message.find(c.expected), std::string::npos)
        << c.name << ": expected '" << c.expected << "' in '" << message << "'";
    EXPECT_EQ(message.rfind("topology JSON: ", 0), 0u) << c.name << ": " << message;
  }
}

TEST(TopologyJsonTest, TooManyEntriesAreRefusedBeforeBeingRead) {
  std::string many = "[";
  for (int i = 0; i <= kMaxTopologyEntries; ++i) many += std::string(i ? "," : "") + "{}";
  many += "]";
  EXPECT_NE(parseError(twoNodeDocument(many, kNuma)).find("document.packages: has more than 1024 entries"),
            std::string::npos);
}

// Mutated and truncated copies of a valid file: each is either accepted or refused with chorus::Error.
TEST(TopologyJsonTest, MutatedFilesNeverEscapeAsAnythingButAnError) {
  const std::string valid = readAll(kDataDir + "two_socket_2gpu_2nic.json");
  ASSERT_FALSE(valid.empty());
  std::mt19937 random(12345);
  const std::string alphabet = "{}[]\",:-0123456789.eE+ \\x";
  int refused = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = valid;
    int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = random() % text.size();
      switch (random() % 3) {
        case 0:
          text[at] = alphabet[random() % alphabet.size()];
          break;
        case 1:
          text.erase(at, 1 + random() % 8);
          break;
        default:
          text.insert(at, 1, alphabet[random() % alphabet.size()]);
          break;
      }
      if (text.empty()) text.push_back('{');
    }
    try {
      HostTopology t = parseTopologyJson(text);
      EXPECT_NO_THROW(validateHostTopology(t));
    } catch (const Error& e) {
      ++refused;
      EXPECT_EQ(std::string_view(e.what()).substr(0, 15), "topology JSON: ") << e.what();
    }
  }
  EXPECT_GT(refused, 2000);
}

TEST(TopologyJsonTest, FileErrorsNameTheFile) {
  try {
    loadTopologyFile("/nonexistent/topo.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), chorusInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("topology file '/nonexistent/topo.json': cannot be opened: No such file"),
              std::string::npos)
        << e.what();
  }
  char path[] = "/tmp/chorus_topo_test_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::string text = R"({"format":"chorus-topology/1","packages":[]})";
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  try {
    loadTopologyFile(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), std::string("topology file '") + path + "': document.numa: is missing");
  }
  unlink(path);
}

}  // namespace
}  // namespace chorus
