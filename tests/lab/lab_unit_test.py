"""chorus-lab's pieces that need no root: lab files, the command lines a lab would run, rates, and the --algos
table it reads from chorus-perf. Usage: lab_unit_test.py BUILD_DIR (runs without root)."""

import json
import os
import sys

sys.path.insert(0, os.path.join(sys.argv[1], "perf"))
from labkit import model, plan, spec, sweep  # noqa: E402
from labkit.net import Lab, spec_to_dict  # noqa: E402

S = spec


def rejects(call, arg, words):
    """call(arg) raises LabError in one line that says `words`."""
    try:
        call(arg)
    except S.LabError as e:
        assert words in str(e), (words, str(e))
        assert "\n" not in str(e)
    else:
        raise AssertionError(f"accepted: {arg}")


assert S.parse_rate("200mbit") == 200e6 and S.parse_rate("1gbit") == 1e9 and S.parse_rate("2.5gbit") == 2.5e9
for bad in ("1gb", "fast", "10", "-1mbit", "0gbit"):
    rejects(S.parse_rate, bad, bad)


def refused(doc, words):
    rejects(S.parse_lab, json.dumps(doc) if not isinstance(doc, str) else doc, words)


# A lab file with racks, two NICs and hosts of their own.
text = json.dumps({"format": "chorus-lab/1", "name": "racks", "hosts": 4, "ranks_per_host": 2, "nics_per_host": 2,
                   "link": {"rate": "1gbit", "latency_us": 30}, "fabric": {"kind": "racks", "racks": 2,
                                                                          "uplink_rate": "1gbit"}})
lab = S.parse_lab(text)
assert lab.nranks == 8 and lab.nics == 2 and lab.racks == 2 and lab.uplink_bps == 1e9 and lab.latency_us == 30
assert [h.rack for h in lab.hosts] == [0, 0, 1, 1] and [h.name for h in lab.hosts] == ["h0", "h1", "h2", "h3"]
assert abs(lab.oversubscription() - 4.0) < 1e-9  # 2 hosts x 2 NICs x 1 Gbit/s over a 1 Gbit/s uplink
assert "oversubscription 4:1" in lab.describe(), lab.describe()
# What the lab would describe itself as reads back the same.
again = S.parse_lab(json.dumps(spec_to_dict(lab)))
assert again.hosts == lab.hosts and again.uplink_bps == lab.uplink_bps and again.nics == 2

listed = S.parse_lab(json.dumps({"format": "chorus-lab/1", "hosts": [{"name": "a", "ranks": 3}, {"name": "b"}]}))
assert [h.ranks for h in listed.hosts] == [3, 1] and listed.nranks == 4 and listed.racks == 1

refused({"hosts": 2}, "format must be")
refused("{not json", "not JSON")
refused({"format": "chorus-lab/1"}, "hosts: missing")
refused({"format": "chorus-lab/1", "hosts": 0}, "hosts")
refused({"format": "chorus-lab/1", "hosts": 2, "ranks": 2}, "unknown field(s) ranks")
refused({"format": "chorus-lab/1", "hosts": 2, "link": {"rate": "fast"}}, "link.rate fast")
refused({"format": "chorus-lab/1", "hosts": 2, "link": {"jitter": "5us"}}, "jitter needs link.delay")
refused({"format": "chorus-lab/1", "hosts": 2, "fabric": {"kind": "racks", "racks": 2}}, "uplink_rate")
refused({"format": "chorus-lab/1", "hosts": 2, "fabric": {"kind": "racks", "racks": 3, "uplink_rate": "1gbit"}},
        "3 racks for 2 hosts")
refused({"format": "chorus-lab/1", "hosts": 2, "fabric": {"kind": "mesh"}}, "fabric.kind")
refused({"format": "chorus-lab/1", "hosts": [{"name": "a"}, {"name": "a"}]}, "names two hosts")
refused({"format": "chorus-lab/1", "hosts": 2, "nics_per_host": 5}, "nics_per_host")

# The command lines: every name carries the lab's tag, nothing is made in the root namespace but namespaces, each
# rail has its bridges, each uplink is shaped both ways at its own rate.
tag = plan.named_tag("racks")
up = plan.bring_up(lab, tag)
for argv in up:
    assert argv[:3] in (["ip", "netns", "add"], ["ip", "netns", "exec"]), argv
    assert argv[3].startswith(tag + "-"), argv
made = [a[3] for a in up if a[:3] == ["ip", "netns", "add"]]
assert made == plan.namespaces_of(lab, tag) and len(made) == 5
bridges = sorted(a[7] for a in up if a[4:7] == ["ip", "link", "add"] and a[-1] == "bridge")
assert bridges == ["c0", "c1", "k0r0", "k0r1", "k1r0", "k1r1"], bridges
assert [a for a in up if a[4:] == ["ip", "link", "set", "p3r1", "master", "k1r1"]], "host 3's eth1 in rack 1, rail 1"
assert [a for a in up if a[4:] == ["ip", "addr", "add", "10.78.0.4/16", "dev", "eth1"]]
shaped = plan.shaping(lab, tag)
rates = {(a[3], a[8]): a[a.index("rate") + 1] for a in shaped}
assert len(shaped) == 4 * 2 * 2 + 2 * 2 * 2  # host NICs both ways, uplinks both ways
assert rates[(f"{tag}-h0", "eth0")] == "1000000000" and rates[(f"{tag}-sw", "u1r0")] == "1000000000"
assert all(len(dev) <= 15 for (_, dev) in rates)
assert plan.ifname_env(lab) == "=eth0,eth1"
assert [r for r in plan.rank_layout(listed)] == [(0, 0, 0), (1, 0, 1), (2, 0, 2), (3, 1, 0)]
# --bind-to core, as chorusrun's: each host on its share of the CPUs, its ranks in turn; hosts round-robin when they
# outnumber the CPUs; none with no CPUs known.
two_by_two = S.make_spec("t", 2, ranks_per_host=2)
assert plan.rank_cpus(two_by_two, {0, 1}) == [0, 0, 1, 1]
assert plan.rank_cpus(two_by_two, {4, 5, 6, 7}) == [4, 5, 6, 7]
assert plan.rank_cpus(S.make_spec("f", 4), {0, 1}) == [0, 1, 0, 1]
assert plan.rank_cpus(listed, {0, 1, 2, 3}) == [0, 1, 0, 2]
assert plan.rank_cpus(two_by_two, set()) == [None] * 4
assert len({plan.address(i) for i in range(64)}) == 64
assert plan.netem_request(S.make_spec("x", 2, delay="50us", jitter="5us", loss="1%")) == \
    ("delay", "50us", "5us", "loss", "1%")
net_one = S.make_spec("flags", 2)
assert not [a for a in plan.bring_up(net_one, "t") if "racks" in " ".join(a)] and plan.ifname_env(net_one) == "=eth0"
# IPv6-only hosts: ULA (or only link-local) addresses added without duplicate address detection, lo's 127.0.0.1
# removed, bridges flooding neighbour discovery; CHORUS_STORE's host in brackets; the field round-trips.
v6 = S.parse_lab('{"format": "chorus-lab/1", "hosts": 2, "addresses": "ipv6"}')
v6_cmds = [" ".join(a) for a in plan.bring_up(v6, "t")]
assert "ip netns exec t-h1 ip addr add fd00:77::2/64 dev eth0 nodad" in v6_cmds, v6_cmds
assert "ip netns exec t-h0 ip addr del 127.0.0.1/8 dev lo" in v6_cmds
assert any("net.ipv6.conf.default.accept_dad=0" in c for c in v6_cmds)
assert "ip netns exec t-sw ip link add br0 type bridge mcast_snooping 0" in v6_cmds
assert not [c for c in v6_cmds if "10.77." in c]
assert plan.host_port(plan.address(0, 0, "ipv6"), 29411) == "[fd00:77::1]:29411"
assert plan.host_port(plan.address(1, 0, "ipv6-link-local"), 1) == "[fe80::2%eth0]:1"
assert plan.host_port(plan.address(0), 29411) == "10.77.0.1:29411"
ll_cmds = [" ".join(a) for a in plan.bring_up(S.make_spec("l", 2, addresses="ipv6-link-local"), "t")]
assert "ip netns exec t-h0 ip link set eth0 addrgenmode none" in ll_cmds
assert "ip netns exec t-h0 ip addr add fe80::1/64 dev eth0 nodad" in ll_cmds
assert S.parse_lab(json.dumps(spec_to_dict(v6))).addresses == "ipv6"
assert "addresses" not in spec_to_dict(net_one) and "ipv6 only" in v6.describe()
try:
    S.parse_lab('{"format": "chorus-lab/1", "hosts": 2, "addresses": "ipv5"}')
    raise AssertionError("ipv5 accepted")
except S.LabError as e:
    assert "addresses: one of ipv4, ipv6, ipv6-link-local" in str(e), e

# The model's view of a lab: its link at TCP's payload share of the rate, Chorus's measured per-message time as the
# latency unless the file names one, racks as a fabric with the uplink's rate.
# Chorus's per-message time is measured between two hosts, one rank on each.
assert model.pair_of(S.make_spec("crowded", 4, ranks_per_host=3)).nranks == 2
measured = Lab(lab, tag)
measured.alpha_us, measured.latency_us = 18.0, 25.0
assert model.network_link(measured) == {"latency_us": 30.0, "bandwidth_gbs": round(0.125 * 1448 / 1514, 6)}
lab.latency_us = None
assert model.network_link(measured)["latency_us"] == 18.0
# With the unshaped capacity measured, tbf's bucket: its burst at that capacity.
measured.capacity = 0.5e9
assert plan.tbf_burst(1e9) == 125000 and plan.tbf_burst(1e8) == 64 * 1024
shaped = model.network_link(measured)
assert shaped["burst_bytes"] == plan.tbf_burst(lab.rate_bps) and shaped["peak_gbs"] == 0.5, shaped
# A measured cost of messages longer than one frame goes with the frame's payload at a 1500-byte MTU; it is measured
# with messages just either side of one frame.
measured.multi_frame_us = 9.5
assert (shaped := model.network_link(measured))["frame_bytes"] == 1448 and shaped["multi_frame_us"] == 9.5, shaped
assert model.multi_frame_sizes(lab) == (1400, 1496)
# A measured chain's time per call goes to the model as the link's chain_us; not where the file names the latency.
measured.chain_us = 8.123
assert model.network_link(measured)["chain_us"] == 8.12
lab.latency_us = 20.0
assert "chain_us" not in model.network_link(measured)
lab.latency_us, measured.chain_us = None, None
# Jumbo frames: each interface made at the MTU, a frame's payload and the rate's payload share follow it.
jumbo = S.parse_lab(json.dumps({"format": "chorus-lab/1", "hosts": 2, "link": {"rate": "1gbit", "mtu": 9000}}))
assert jumbo.mtu == 9000 and S.parse_lab(json.dumps(spec_to_dict(jumbo))).mtu == 9000 and "MTU 9000" in jumbo.describe()
made = [a for a in plan.bring_up(jumbo, "t") if "add" in a and ("veth" in a or "bridge" in a)]
assert made and all(a[a.index("mtu") + 1] == "9000" for a in made), made
assert not [a for a in plan.bring_up(lab, "t") if "mtu" in a]
assert model.frame_payload(jumbo) == 8948 and model.payload_share(jumbo) == 8948 / 9014
assert model.multi_frame_sizes(jumbo) == (8900, 8996)
assert model.multi_frame_sizes(S.make_spec("odd", 2, mtu=1501)) == (1400, 1500)
refused({"format": "chorus-lab/1", "hosts": 2, "link": {"mtu": 100}}, "link.mtu")
measured.multi_frame_us = None
measured.capacity = None
cluster = model.cluster_of(measured, {"packages": [{"cores": 2}], "links": {}})
# Each emulated host has its share of this machine's cores, as its ranks are bound: a fraction where the hosts
# outnumber the cores, and then even one rank per host is crowded.
cpus = os.cpu_count() or 1
assert cluster["cores_per_host"] == (cpus // 4 if cpus >= 4 else round(cpus / 4, 3)) == model.cores_per_host(lab), \
    (cluster, cpus)
real_cpu_count, os.cpu_count = os.cpu_count, lambda: 2  # the lab's 4x1 on a 2-core machine, on any machine
try:
    assert model.cores_per_host(S.make_spec("4x1", 4)) == 0.5 and model.crowding(S.make_spec("4x1", 4)) == 2.0
finally:
    os.cpu_count = real_cpu_count
assert cluster["ranks_per_host"] == 2 and cluster["nics_per_host"] == 2 and "context_switch_us" not in cluster
assert cluster["fabric"] == {"hosts_per_rack": 2, "uplink_gbs": round(0.125 * 1448 / 1514, 6)}, cluster["fabric"]
assert cluster["nic"]["latency_us"] == 18.0
# Where a host's ranks outnumber its cores, the crowded ring's extra time per message over the pair's is the
# scheduler's wait per oversubscription (the model's context switch), and the pair's is the latency.
two_by_two_lab = S.make_spec("2x2", 2, ranks_per_host=2 * model.cores_per_host(S.make_spec("2x1", 2)))
assert model.crowding(two_by_two_lab) == 2.0 and model.crowding(S.make_spec("2x1", 2)) == 1.0
assert model.split_scheduler_wait(two_by_two_lab, 26.0, 14.0) == (14.0, 12.0)
assert model.split_scheduler_wait(two_by_two_lab, 26.0, None) == (26.0, None)
assert model.split_scheduler_wait(S.make_spec("2x1", 2), 14.0, 14.0) == (14.0, None)
measured.context_switch_us = 12.0
assert model.cluster_of(measured, {"packages": [{"cores": 2}], "links": {}})["context_switch_us"] == 12.0
measured.context_switch_us = None
# The ranks' topology file carries the same racks; racks that are not contiguous blocks of hosts carry none.
assert model.fabric(measured) == cluster["fabric"]
scattered = Lab(S.parse_lab(json.dumps({"format": "chorus-lab/1", "hosts": [{"rack": 0}, {"rack": 1}, {"rack": 0}, {"rack": 1}],
                                        "fabric": {"kind": "racks", "racks": 2, "uplink_rate": "1gbit"}})), tag)
assert model.fabric(scattered) is None

TABLE = """# out-of-place time per call (us): median over the rounds, the algorithms' calls interleaved round by round
#   size (B)     default        ring  hierarchical         best forced  default/best  #wrong
      262144      2188.1      3236.3        2187.2        hierarchical          1.00       0
     1048576      8997.9       13010        9001.2        hierarchical          1.00       0
# Worst default/best   : 1.00 at 262144 bytes
"""
rows = sweep.parse_algos_table(TABLE)
assert rows == [(262144, "default", 2188.1), (262144, "ring", 3236.3), (262144, "hierarchical", 2187.2),
                (1048576, "default", 8997.9), (1048576, "ring", 13010.0), (1048576, "hierarchical", 9001.2)], rows
try:  # its message quotes chorus-perf's output, lines and all
    sweep.parse_algos_table("chorus-perf: something went wrong\n")
except S.LabError as e:
    assert "no --algos table" in str(e)
else:
    raise AssertionError("an empty table was accepted")
# --jobs: the small sizes' rows from several jobs, each (bytes, algorithm)'s median; sizes only the first job timed
# keep its figure.
second = [(262144, "default", 2000.0), (262144, "ring", 3000.0), (262144, "hierarchical", 2100.0)]
third = [(262144, "default", 2400.0), (262144, "ring", 3100.0), (262144, "hierarchical", 2150.0)]
assert sweep.median_rows([rows, second, third]) == [
    (262144, "default", 2188.1), (262144, "ring", 3100.0), (262144, "hierarchical", 2150.0),
    (1048576, "default", 8997.9), (1048576, "ring", 13010.0), (1048576, "hierarchical", 9001.2)]
assert sweep.median_rows([rows, second])[:2] == [(262144, "default", 2094.05), (262144, "ring", 3118.15)]
assert [sweep.parse_size(t) for t in ("8", "64K", "16M", "1G", "0.5K")] == [8, 65536, 16 << 20, 1 << 30, 512]
rejects(sweep.parse_size, "lots", "not a size")
assert abs(sweep.BUS_FACTOR["allreduce"](4) - 1.5) < 1e-12 and sweep.BUS_FACTOR["broadcast"](4) == 1.0
print("lab unit test passed")
