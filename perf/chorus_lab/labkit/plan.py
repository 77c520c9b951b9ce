"""The command lines that build a lab from its spec, and the names and addresses in it: pure, so the unit test
checks what the lab would run without root.

Namespaces: <tag>-sw holds every bridge (the fabric), <tag>-h<i> is host i. Host i's NIC r is eth<r>, one end of a
veth pair whose other end, p<i>r<r>, is a port of rail r's bridge: br<r> with one switch; with racks, rack k's
bridge k<k>r<r>, joined to rail r's core bridge c<r> by the uplink pair u<k>r<r> (rack side) / d<k>r<r> (core
side). Rail r is the subnet 10.(77+r).0.0/16, or with IPv6 addresses fd00:(77+r)::/64 (link-local: fe80::/64 on
every rail, each NIC's zone telling them apart). Every link is shaped on egress, so each direction has its own tbf:
the hosts' NICs and the switch ports at the link rate, both ends of an uplink at the uplink rate. Nothing is made in
the root namespace."""

from .spec import DEFAULT_MTU

PREFIX = "chlab"
STORE_PORT = 29411


def ephemeral_tag(pid):
    return f"{PREFIX}{pid}"


def named_tag(name):
    return f"{PREFIX}-{name}"


def switch_ns(tag):
    return f"{tag}-sw"


def host_ns(tag, i):
    return f"{tag}-h{i}"


def address(i, rail=0, addresses="ipv4"):
    """Host i's address on rail r: IPv4, IPv6 ULA, or link-local with its zone (the NIC, the same on every host)."""
    if addresses == "ipv6":
        return f"fd00:{77 + rail}::{i + 1:x}"
    if addresses == "ipv6-link-local":
        return f"fe80::{i + 1:x}%{nic(rail)}"
    return f"10.{77 + rail}.{i // 250}.{i % 250 + 1}"


def host_port(host, port):
    """"host:port", an IPv6 host in brackets (Chorus's syntax for CHORUS_STORE)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _ipv6_only(ns):
    """A host namespace with IPv6 and no IPv4: addresses usable at once (no duplicate address detection, so no
    tentative wait), and lo without 127.0.0.1."""
    return [_in(ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=0", "net.ipv6.conf.default.disable_ipv6=0",
                "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0"),
            _in(ns, "ip", "addr", "del", "127.0.0.1/8", "dev", "lo")]


def _nic_address(spec, ns, i, r):
    """The commands that give host i's NIC r its address (before the link is up)."""
    if spec.addresses == "ipv4":
        return [_in(ns, "ip", "addr", "add", f"{address(i, r)}/16", "dev", nic(r))]
    cmds = []
    if spec.addresses == "ipv6-link-local":
        # Only the lab's own fe80::<i+1>, not one the kernel would make from the MAC: CHORUS_STORE names host 0's.
        cmds.append(_in(ns, "ip", "link", "set", nic(r), "addrgenmode", "none"))
    bare = address(i, r, spec.addresses).split("%")[0]
    return cmds + [_in(ns, "ip", "addr", "add", f"{bare}/64", "dev", nic(r), "nodad")]


def nic(rail):
    return f"eth{rail}"


def bridge_of(spec, host_index, rail):
    return f"br{rail}" if spec.racks == 1 else f"k{spec.hosts[host_index].rack}r{rail}"


def ifname_env(spec):
    """CHORUS_SOCKET_IFNAME for the ranks: exactly the lab's NICs."""
    return "=" + ",".join(nic(r) for r in range(spec.nics))


def _in(ns, *argv):
    return ["ip", "netns", "exec", ns, *argv]


def bring_up(spec, tag):
    """Namespaces, bridges and links, unshaped (the capacity probe runs before shaping), every interface at the
    lab's MTU."""
    sw = switch_ns(tag)
    mtu = [] if spec.mtu == DEFAULT_MTU else ["mtu", str(spec.mtu)]
    cmds = [["ip", "netns", "add", sw]]
    bridges = []
    for r in range(spec.nics):
        if spec.racks == 1:
            bridges.append(f"br{r}")
        else:
            bridges += [f"c{r}"] + [f"k{k}r{r}" for k in range(spec.racks)]
    for b in bridges:
        # Without MLD snooping the bridge floods IPv6 neighbour discovery as a plain switch would.
        snoop = [] if spec.addresses == "ipv4" else ["mcast_snooping", "0"]
        cmds += [_in(sw, "ip", "link", "add", b, *mtu, "type", "bridge", *snoop),
                 _in(sw, "ip", "link", "set", b, "up")]
    if spec.racks > 1:
        for r in range(spec.nics):
            for k in range(spec.racks):
                up, down = f"u{k}r{r}", f"d{k}r{r}"
                cmds += [_in(sw, "ip", "link", "add", up, *mtu, "type", "veth", "peer", "name", down, *mtu),
                         _in(sw, "ip", "link", "set", up, "master", f"k{k}r{r}"),
                         _in(sw, "ip", "link", "set", down, "master", f"c{r}"),
                         _in(sw, "ip", "link", "set", up, "up"), _in(sw, "ip", "link", "set", down, "up")]
    for i in range(len(spec.hosts)):
        ns = host_ns(tag, i)
        cmds += [["ip", "netns", "add", ns], _in(ns, "ip", "link", "set", "lo", "up")]
        if spec.addresses != "ipv4":
            cmds += _ipv6_only(ns)
        for r in range(spec.nics):
            port = f"p{i}r{r}"
            # Made inside the host's namespace and one end moved to the switch's: the root namespace never holds it.
            cmds += [_in(ns, "ip", "link", "add", nic(r), *mtu, "type", "veth", "peer", "name", port, *mtu),
                     _in(ns, "ip", "link", "set", port, "netns", sw),
                     *_nic_address(spec, ns, i, r),
                     _in(ns, "ip", "link", "set", nic(r), "up"),
                     _in(sw, "ip", "link", "set", port, "master", bridge_of(spec, i, r)),
                     _in(sw, "ip", "link", "set", port, "up")]
    return cmds


def tbf_burst(rate_bps):
    """The bytes tbf lets through at veth speed while its bucket is full: 1 ms at the rate, at least 64 KiB (veth
    moves frames of up to 64 KiB with TSO). Smaller bursts were tried: at 16 KiB, 1 Gbit/s links carried 0.07 GB/s of
    allreduce busbw instead of 0.11 (tbf splits the 64 KiB frames and waits on its timer). The cost model prices the
    burst (the link's burst_bytes, model.network_link)."""
    return max(64 * 1024, int(rate_bps / 8 / 1000))


def tbf(ns, dev, rate_bps):
    """tbf on dev's egress: the rate, its burst (tbf_burst) and a queue of 10 ms."""
    return _in(ns, "tc", "qdisc", "replace", "dev", dev, "root", "handle", "1:", "tbf", "rate", str(int(rate_bps)),
               "burst", str(tbf_burst(rate_bps)), "latency", "10ms")


def netem(ns, dev, args):
    return _in(ns, "tc", "qdisc", "add", "dev", dev, "parent", "1:1", "handle", "10:", "netem", *args)


def shaping(spec, tag, netem_args=()):
    """tbf (and netem under it, when asked) on both directions of every link."""
    sw = switch_ns(tag)
    ends = []
    for i in range(len(spec.hosts)):
        for r in range(spec.nics):
            ends += [(host_ns(tag, i), nic(r), spec.rate_bps), (sw, f"p{i}r{r}", spec.rate_bps)]
    if spec.racks > 1:
        for r in range(spec.nics):
            for k in range(spec.racks):
                ends += [(sw, f"u{k}r{r}", spec.uplink_bps), (sw, f"d{k}r{r}", spec.uplink_bps)]
    cmds = []
    for ns, dev, rate in ends:
        cmds.append(tbf(ns, dev, rate))
        if netem_args:
            cmds.append(netem(ns, dev, netem_args))
    return cmds


def namespaces_of(spec, tag):
    return [switch_ns(tag)] + [host_ns(tag, i) for i in range(len(spec.hosts))]


def netem_request(spec):
    """netem's arguments for the delay, jitter and loss asked for (empty when none)."""
    args = []
    if spec.delay:
        args += ["delay", spec.delay] + ([spec.jitter] if spec.jitter else [])
    if spec.loss:
        args += ["loss", spec.loss]
    return tuple(args)


def rank_layout(spec):
    """[(rank, host index, local rank)] in rank order: host 0's ranks first."""
    out, rank = [], 0
    for i, h in enumerate(spec.hosts):
        for local in range(h.ranks):
            out.append((rank, i, local))
            rank += 1
    return out


def rank_cpus(spec, cpus):
    """--bind-to core: each rank's CPU, as chorusrun --bind-to core places emulated hosts (launcher/core_binding.h):
    host i owns len(cpus) // hosts consecutive CPUs (at least one; hosts share them round-robin when there are more
    hosts than CPUs) and its ranks take them in turn. A host's ranks then share that host's cores, as on a cluster;
    unbound, 4 ranks on 2 cores run in whichever placement the scheduler picks and it moves them during a run."""
    cpus = sorted(cpus)
    if not cpus:
        return [None] * spec.nranks
    per_host = max(1, len(cpus) // len(spec.hosts))
    return [cpus[(host * per_host + local % per_host) % len(cpus)] for _, host, local in rank_layout(spec)]

