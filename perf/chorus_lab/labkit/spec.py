"""What a lab is: hosts, ranks per host, NICs per host, the links' rate (and delay, jitter, loss where the kernel can
emulate them) and the fabric (one switch, or racks whose uplinks have their own rate). Read from a lab file or from
command-line flags; pure, so it is unit-tested without root.

A lab file (JSON, format "chorus-lab/1"):
  {
    "format": "chorus-lab/1",
    "name": "two-racks",               optional: names the lab for up/down/status (default: the file's stem)
    "hosts": 4,                        a count, or a list: [{"name": "a", "ranks": 2, "rack": 0}, ...]
    "ranks_per_host": 2,               for hosts that do not say (default 1)
    "nics_per_host": 1,                1 to 4: host NIC i is eth<i>, on rail i (a switch per rail)
    "link": {"rate": "1gbit",          every host link, both ways (tc syntax: 200mbit, 1gbit, 10gbit)
             "latency_us": 20,         optional: the cost model's network latency (default: measured)
             "mtu": 9000,              optional: every lab interface's MTU, 1280..65000 (default 1500)
             "delay": "50us", "jitter": "5us", "loss": "0.1%"},   optional, netem syntax: needs netem
    "fabric": {"kind": "switch"},      or {"kind": "racks", "racks": 2, "uplink_rate": "2gbit"}
    "addresses": "ipv4"                optional: "ipv4" (default: 10.(77+r).0.0/16), "ipv6" (IPv6 only: ULA
                                       fd00:(77+r)::/64, no IPv4 address anywhere, lo's 127.0.0.1 removed too) or
                                       "ipv6-link-local" (IPv6 only, nothing but link-local fe80::/64 addresses)
  }
Hosts of a list without "rack" fill the racks in contiguous blocks, as do counted hosts."""

import json
import os
import re
from dataclasses import dataclass, field

FORMAT = "chorus-lab/1"
MAX_HOSTS = 64
MAX_RANKS_PER_HOST = 16
MAX_NICS = 4
MIN_MTU, DEFAULT_MTU, MAX_MTU = 1280, 1500, 65000
ADDRESSES = ("ipv4", "ipv6", "ipv6-link-local")
NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,15}")


class LabError(Exception):
    pass


RATE_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9}


def parse_rate(rate, where="--rate"):
    """Bits per second of a tc rate ('200mbit', '1gbit', '2.5gbit')."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(bit|kbit|mbit|gbit)", str(rate))
    if not m or float(m.group(1)) <= 0:
        raise LabError(f"{where} {rate}: expected a number and bit, kbit, mbit or gbit (e.g. 1gbit, 200mbit)")
    return float(m.group(1)) * RATE_UNITS[m.group(2)]


@dataclass
class Host:
    name: str
    ranks: int
    rack: int


@dataclass
class LabSpec:
    name: str
    hosts: list                  # [Host]
    nics: int = 1
    rate_bps: float = 1e9
    latency_us: float = None     # the model's network latency; None: measured when the lab comes up
    delay: str = ""
    jitter: str = ""
    loss: str = ""
    racks: int = 1               # 1: one switch
    uplink_bps: float = None     # each rack's uplink to the core switch (racks > 1)
    mtu: int = DEFAULT_MTU       # every interface of the lab, bridges included
    addresses: str = "ipv4"      # ADDRESSES: the hosts' address family (plan.address)
    rate_text: str = field(default="1gbit", repr=False)

    @property
    def nranks(self):
        return sum(h.ranks for h in self.hosts)

    def hosts_in_rack(self, k):
        return [i for i, h in enumerate(self.hosts) if h.rack == k]

    def oversubscription(self):
        """The hosts' NICs added up over the rack uplink's rate (1 without racks)."""
        if self.racks == 1:
            return 1.0
        most = max(len(self.hosts_in_rack(k)) for k in range(self.racks))
        return most * self.nics * self.rate_bps / self.uplink_bps

    def describe(self):
        fabric = "one switch" if self.racks == 1 else (
            f"{self.racks} racks, uplinks at {self.uplink_bps / 1e9:g} Gbit/s "
            f"(oversubscription {self.oversubscription():.2g}:1)")
        ranks = sorted({h.ranks for h in self.hosts})
        per = str(ranks[0]) if len(ranks) == 1 else f"{ranks[0]}-{ranks[-1]}"
        extra = "".join(f", {k} {v}" for k, v in (("delay", self.delay), ("jitter", self.jitter),
                                                   ("loss", self.loss)) if v)
        mtu = f", MTU {self.mtu}" if self.mtu != DEFAULT_MTU else ""
        family = "" if self.addresses == "ipv4" else f", {self.addresses} only"
        return (f"{len(self.hosts)} hosts x {per} ranks, {self.nics} NIC(s) per host at "
                f"{self.rate_bps / 1e9:g} Gbit/s{mtu}{extra}{family}, {fabric}")


def _check_name(name, where):
    if not NAME.fullmatch(name):
        raise LabError(f"{where}: '{name}' must be 1-16 of a-z, 0-9 and '-', starting with a letter or digit")
    return name


def _int(value, where, lo, hi):
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise LabError(f"{where}: expected an integer in {lo}..{hi}, got {json.dumps(value)}")
    return value


def _str(value, where):
    if not isinstance(value, str):
        raise LabError(f"{where}: expected a string, got {json.dumps(value)}")
    return value


def _reject_unknown(obj, known, where):
    extra = sorted(set(obj) - set(known))
    if extra:
        raise LabError(f"{where}: unknown field(s) {', '.join(extra)} (known: {', '.join(known)})")


def _object(value, where):
    if not isinstance(value, dict):
        raise LabError(f"{where}: expected an object, got {json.dumps(value)[:60]}")
    return value


def make_spec(name, hosts, ranks_per_host=1, nics=1, rate="1gbit", latency_us=None, delay="", jitter="", loss="",
              racks=1, uplink_rate=None, where="lab", mtu=DEFAULT_MTU, addresses="ipv4"):
    """A checked LabSpec. `hosts` is a count or a list of {"name", "ranks", "rack"} (each optional)."""
    _check_name(name, f"{where}: name")
    ranks_per_host = _int(ranks_per_host, f"{where}: ranks_per_host", 1, MAX_RANKS_PER_HOST)
    nics = _int(nics, f"{where}: nics_per_host", 1, MAX_NICS)
    racks = _int(racks, f"{where}: fabric.racks", 1, MAX_HOSTS)
    if isinstance(hosts, int) and not isinstance(hosts, bool):
        entries = [{} for _ in range(_int(hosts, f"{where}: hosts", 1, MAX_HOSTS))]
    elif isinstance(hosts, list) and 1 <= len(hosts) <= MAX_HOSTS:
        entries = hosts
    else:
        raise LabError(f"{where}: hosts: expected a count (1..{MAX_HOSTS}) or a list of 1..{MAX_HOSTS} hosts")
    count = len(entries)
    if racks > count:
        raise LabError(f"{where}: fabric.racks: {racks} racks for {count} hosts (each rack needs a host)")
    made, names = [], set()
    for i, e in enumerate(entries):
        e = _object(e, f"{where}: hosts[{i}]")
        _reject_unknown(e, ("name", "ranks", "rack"), f"{where}: hosts[{i}]")
        hname = _check_name(_str(e.get("name", f"h{i}"), f"{where}: hosts[{i}].name"), f"{where}: hosts[{i}].name")
        if hname in names:
            raise LabError(f"{where}: hosts[{i}].name: '{hname}' names two hosts")
        names.add(hname)
        ranks = _int(e.get("ranks", ranks_per_host), f"{where}: hosts[{i}].ranks", 1, MAX_RANKS_PER_HOST)
        rack = _int(e.get("rack", i * racks // count), f"{where}: hosts[{i}].rack", 0, racks - 1)
        made.append(Host(hname, ranks, rack))
    spec = LabSpec(name=name, hosts=made, nics=nics, rate_bps=parse_rate(rate, f"{where}: link.rate"),
                   delay=delay, jitter=jitter, loss=loss, racks=racks, rate_text=rate,
                   mtu=_int(mtu, f"{where}: link.mtu", MIN_MTU, MAX_MTU))
    if addresses not in ADDRESSES:
        raise LabError(f"{where}: addresses: one of {', '.join(ADDRESSES)}, got {json.dumps(addresses)}")
    spec.addresses = addresses
    for k in range(racks):
        if not spec.hosts_in_rack(k):
            raise LabError(f"{where}: fabric: rack {k} has no host")
    if latency_us is not None:
        if isinstance(latency_us, bool) or not isinstance(latency_us, (int, float)) or not 0 <= latency_us < 1e6:
            raise LabError(f"{where}: link.latency_us: expected microseconds (0 or more), got {latency_us!r}")
        spec.latency_us = float(latency_us)
    if jitter and not delay:
        raise LabError(f"{where}: link.jitter needs link.delay")
    if racks > 1:
        if uplink_rate is None:
            raise LabError(f"{where}: fabric: racks need an uplink_rate (e.g. \"2gbit\")")
        spec.uplink_bps = parse_rate(uplink_rate, f"{where}: fabric.uplink_rate")
    elif uplink_rate is not None:
        raise LabError(f"{where}: fabric: uplink_rate needs racks (kind \"racks\")")
    return spec


def parse_lab(text, default_name="lab", where="lab file"):
    """A LabSpec from a lab file's text; every error names the field."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise LabError(f"{where}: not JSON ({e})") from None
    doc = _object(doc, where)
    known = ("format", "name", "hosts", "ranks_per_host", "nics_per_host", "link", "fabric", "addresses")
    _reject_unknown(doc, known, where)
    if doc.get("format") != FORMAT:
        raise LabError(f"{where}: format must be \"{FORMAT}\", got {json.dumps(doc.get('format'))}")
    if "hosts" not in doc:
        raise LabError(f"{where}: hosts: missing (a count or a list)")
    link = _object(doc.get("link", {}), f"{where}: link")
    _reject_unknown(link, ("rate", "latency_us", "mtu", "delay", "jitter", "loss"), f"{where}: link")
    fabric = _object(doc.get("fabric", {"kind": "switch"}), f"{where}: fabric")
    kind = fabric.get("kind", "switch")
    if kind == "switch":
        _reject_unknown(fabric, ("kind",), f"{where}: fabric")
        racks, uplink = 1, None
    elif kind == "racks":
        _reject_unknown(fabric, ("kind", "racks", "uplink_rate"), f"{where}: fabric")
        racks, uplink = fabric.get("racks", 2), fabric.get("uplink_rate")
        if _int(racks, f"{where}: fabric.racks", 2, MAX_HOSTS) < 2:
            raise LabError(f"{where}: fabric.racks: at least 2")
    else:
        raise LabError(f"{where}: fabric.kind: \"switch\" or \"racks\", got {json.dumps(kind)}")
    return make_spec(
        name=_str(doc.get("name", default_name), f"{where}: name"), hosts=doc["hosts"],
        ranks_per_host=doc.get("ranks_per_host", 1), nics=doc.get("nics_per_host", 1),
        rate=_str(link.get("rate", "1gbit"), f"{where}: link.rate"), latency_us=link.get("latency_us"),
        delay=_str(link.get("delay", ""), f"{where}: link.delay"),
        jitter=_str(link.get("jitter", ""), f"{where}: link.jitter"),
        loss=_str(link.get("loss", ""), f"{where}: link.loss"), racks=racks, uplink_rate=uplink, where=where,
        mtu=link.get("mtu", DEFAULT_MTU), addresses=doc.get("addresses", "ipv4"))


def load_lab(path):
    try:
        with open(path) as f:
            text = f.read(1 << 20)
    except OSError as e:
        raise LabError(f"lab file {path}: {e.strerror}") from None
    stem = re.sub(r"[^a-z0-9-]", "-", os.path.splitext(os.path.basename(path))[0].lower())[:16].strip("-") or "lab"
    return parse_lab(text, default_name=stem, where=f"lab file {path}")
