"""chorus-lab's pieces that need no root: rate parsing and the --algos table it reads from chorus-perf.
Usage: lab_unit_test.py BUILD_DIR (runs without root)."""

import importlib.machinery
import importlib.util
import os
import sys

path = os.path.join(sys.argv[1], "perf", "chorus-lab")
loader = importlib.machinery.SourceFileLoader("chorus_lab", path)
spec = importlib.util.spec_from_loader("chorus_lab", loader)
lab = importlib.util.module_from_spec(spec)
loader.exec_module(lab)

assert lab.check_rate("200mbit") == 200e6
assert lab.check_rate("1gbit") == 1e9
assert lab.check_rate("2.5gbit") == 2.5e9
for bad in ("1gb", "fast", "10", "-1mbit"):
    try:
        lab.check_rate(bad)
    except lab.LabError as e:
        assert bad in str(e)
    else:
        raise AssertionError(f"{bad} accepted")

TABLE = """# out-of-place time per call (us): median over the rounds, the algorithms' calls interleaved round by round
#   size (B)     default        ring  hierarchical         best forced  default/best  #wrong
      262144      2188.1      3236.3        2187.2        hierarchical          1.00       0
     1048576      8997.9       13010        9001.2        hierarchical          1.00       0
# Worst default/best   : 1.00 at 262144 bytes
"""
rows = lab.parse_algos_table(TABLE)
assert rows == [(262144, "default", 2188.1), (262144, "ring", 3236.3), (262144, "hierarchical", 2187.2),
                (1048576, "default", 8997.9), (1048576, "ring", 13010.0), (1048576, "hierarchical", 9001.2)], rows
try:
    lab.parse_algos_table("chorus-perf: something went wrong\n")
except lab.LabError as e:
    assert "no --algos table" in str(e)
else:
    raise AssertionError("an empty table was accepted")
assert abs(lab.BUS_FACTOR["allreduce"](4) - 1.5) < 1e-12 and lab.BUS_FACTOR["broadcast"](4) == 1.0

# Names and addresses: everything carries the lab's prefix and pid; hosts get distinct addresses.
l = lab.Lab(300, 1e9)
assert l.host_ns(7).startswith(f"chlab{os.getpid()}-") and l.switch == f"chlab{os.getpid()}-sw"
assert len({l.address(i) for i in range(300)}) == 300
print("lab unit test passed")
