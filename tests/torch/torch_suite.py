#!/usr/bin/python3
"""PyTorch's own distributed test suite (torch/testing/_internal/distributed/distributed_test.py,
DistributedTest._DistTestBase, each test in freshly spawned processes, as PyTorch's test_distributed_spawn.py runs
it) for one backend and world size.

  /usr/bin/python3 tests/torch/torch_suite.py run --backend chorus --world-size 2 --json chorus-2.json [-k NAME...]
      [--start fork]   (each test's ranks forked from the runner, torch already imported; default: spawned)
  /usr/bin/python3 tests/torch/torch_suite.py compare gloo-2.json chorus-2.json

The suite gates tests on backend names, read when it is imported; for "chorus" it is imported with a backend name
that counts as "gloo" in those comparisons (Chorus claims Gloo's feature set) while every process group the tests
make is a chorus one. torch itself is not edited. `compare` lists the tests the first run passed and the second did
not, and exits non-zero when there are any.
"""

import argparse
import collections
import collections.abc
import json
import os
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "build", "python"))
try:
    import expecttest  # noqa: F401  (torch's test utilities need it; Debian 12 does not package it)
except ImportError:
    sys.path.append(os.path.join(HERE, "shim"))


class _CountsAsGloo(str):
    """The backend name "chorus", equal to "gloo" too (and hashed as it, for set membership), so that the suite's
    gates (`BACKEND != "gloo"`, `BACKEND in backend_feature["subgroup"]`) treat chorus as Gloo. Anything derived
    from it (lower(), formatting, torch's Backend) is the plain "chorus"."""

    def __eq__(self, other):
        return str.__eq__(self, other) or other == "gloo"

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash("gloo")


class _EnvironWithBackend(collections.abc.MutableMapping):
    """os.environ, except that BACKEND reads as _CountsAsGloo while the suite is imported."""

    def __init__(self, real, backend):
        self._real, self._backend = real, backend

    def __getitem__(self, key):
        return self._backend if key == "BACKEND" else self._real[key]

    def __setitem__(self, key, value):
        self._real[key] = value

    def __delitem__(self, key):
        del self._real[key]

    def __iter__(self):
        return iter(self._real)

    def __len__(self):
        return len(self._real)

    def copy(self):
        return self._real.copy()


def _import_suite():
    """DistributedTest and TestDistBackend, with BACKEND as the environment names it (chorus counting as gloo)."""
    backend = os.environ["BACKEND"]
    if backend == "chorus":
        import chorus_torch  # noqa: F401  (registers the backend in every spawned process too)
        real = os.environ
        os.environ = _EnvironWithBackend(real, _CountsAsGloo("chorus"))
        try:
            from torch.testing._internal.distributed import distributed_test
        finally:
            os.environ = real
    else:
        from torch.testing._internal.distributed import distributed_test
    return distributed_test.DistributedTest, distributed_test.TestDistBackend


_START = "spawn"  # how each test starts its ranks (run --start)
DistributedTest, TestDistBackend = (_import_suite() if "BACKEND" in os.environ else (None, None))

if DistributedTest is not None:
    class TestDistBackendWithSpawn(TestDistBackend, DistributedTest._DistTestBase):
        def setUp(self):
            super().setUp()
            # --start fork: the ranks forked from this process, torch already imported (as PyTorch's
            # test_distributed_fork ran the suite), rather than spawned, each importing torch again (the CI sample:
            # 8-10 s instead of 39-41, the same outcomes).
            if _START == "fork":
                import torch.multiprocessing
                self._start_processes(torch.multiprocessing.get_context("fork").Process)
            else:
                self._spawn_processes()


class _Recorder(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcomes = {}
        self._started = {}

    def _name(self, test):
        return test.id().split(".")[-1]

    def startTest(self, test):
        self._started[self._name(test)] = time.monotonic()
        super().startTest(test)

    def _record(self, test, outcome, detail=""):
        name = self._name(test)
        self.outcomes[name] = {"outcome": outcome, "seconds": round(time.monotonic() - self._started.get(name, 0), 2),
                               "detail": detail[-2000:]}

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, "failed", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._record(test, "failed", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, "skipped", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._record(test, "passed", "expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._record(test, "failed", "unexpected success")


def _selected(names, patterns):
    if not patterns:
        return names
    return [n for n in names if any(p in n for p in patterns)]


def run(args):
    if os.environ.get("BACKEND") != args.backend or os.environ.get("WORLD_SIZE") != str(args.world_size):
        # The suite reads BACKEND and WORLD_SIZE when it is imported, here and in every process it spawns (which
        # import this module again): run again with them set, in a temporary directory of its own.
        import subprocess
        with tempfile.TemporaryDirectory(prefix="chorus-torch-suite-") as tmp:
            env = dict(os.environ, BACKEND=args.backend, WORLD_SIZE=str(args.world_size), TEMP_DIR=tmp)
            return subprocess.run([sys.executable, os.path.abspath(__file__)] + sys.argv[1:], env=env).returncode
    global _START
    _START = args.start
    names = _selected(unittest.TestLoader().getTestCaseNames(TestDistBackendWithSpawn), args.k)
    if args.names:
        with open(args.names) as f:
            wanted = [line.split("#")[0].strip() for line in f]
        wanted = [w for w in wanted if w]
        unknown = sorted(set(wanted) - set(names))
        if unknown:
            sys.exit(f"torch_suite: not in the suite: {', '.join(unknown)}")
        names = [n for n in names if n in wanted]
    if args.list:
        print("\n".join(names))
        return 0
    suite = unittest.TestSuite(TestDistBackendWithSpawn(n) for n in names)
    runner = unittest.TextTestRunner(resultclass=_Recorder, verbosity=2 if args.verbose else 1, stream=sys.stderr)
    start = time.monotonic()
    result = runner.run(suite)
    counts = collections.Counter(o["outcome"] for o in result.outcomes.values())
    summary = {"backend": args.backend, "world_size": args.world_size, "seconds": round(time.monotonic() - start),
               "counts": dict(counts), "tests": result.outcomes}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1, sort_keys=True)
    print(f"torch suite, {args.backend}, world size {args.world_size}: {counts['passed']} passed, "
          f"{counts['failed']} failed, {counts['skipped']} skipped in {summary['seconds']} s")
    for name, o in sorted(result.outcomes.items()):
        if o["outcome"] == "failed":
            print(f"  FAILED {name}")
    return 0 if counts["failed"] == 0 else 1


def compare(args):
    with open(args.reference) as f:
        reference = json.load(f)
    with open(args.candidate) as f:
        candidate = json.load(f)
    missing = []
    for name, o in sorted(reference["tests"].items()):
        if o["outcome"] != "passed":
            continue
        got = candidate["tests"].get(name, {"outcome": "not run"})
        if got["outcome"] != "passed":
            missing.append((name, got["outcome"], got.get("detail", "")))
    passed = sum(1 for o in reference["tests"].values() if o["outcome"] == "passed")
    print(f"{reference['backend']} passed {passed} tests at world size {reference['world_size']}; "
          f"{candidate['backend']} passed {passed - len(missing)} of them")
    for name, outcome, detail in missing:
        last = detail.strip().splitlines()[-1] if detail.strip() else ""
        print(f"  {outcome:>8} {name}: {last[:200]}")
    return 1 if missing else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run the suite for one backend and world size")
    r.add_argument("--backend", default="chorus")
    r.add_argument("--world-size", type=int, default=2)
    r.add_argument("--json", help="write every test's outcome here")
    r.add_argument("-k", action="append", help="run only tests whose names contain this (repeatable)")
    r.add_argument("--names", help="a file naming the tests to run, one per line (# comments)")
    r.add_argument("--list", action="store_true", help="list the selected tests and stop")
    r.add_argument("-v", "--verbose", action="store_true")
    r.add_argument("--start", choices=("spawn", "fork"), default="spawn",
                   help="how each test starts its ranks: spawned (as test_distributed_spawn) or forked from here")
    c = sub.add_parser("compare", help="tests the reference run passed that the candidate did not")
    c.add_argument("reference")
    c.add_argument("candidate")
    args = parser.parse_args()
    sys.exit(run(args) if args.command == "run" else compare(args))


if __name__ == "__main__":
    main()
