#!/usr/bin/python3
"""Runs examples/torch/elastic_train.py under chorusrun --elastic with rank 0 lost mid-run (the rank whose loss a
rank-0-served rendezvous could not survive): the survivors must shrink, finish every step and agree on the final
parameters.  Usage: elastic_example_check.py CHORUSRUN PYTHONPATH SOURCE_DIR"""

import os
import re
import subprocess
import sys
import tempfile


def main():
    chorusrun, pythonpath, source = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        command = [chorusrun, "--elastic", "--tag-output", "--timeout", "180", "-n", "3", "/usr/bin/python3",
                   os.path.join(source, "examples", "torch", "elastic_train.py"), "--lose-rank", "0", "--lose-at", "4",
                   "--steps", "10", "--init-file", os.path.join(tmp, "init")]
        env = dict(os.environ, PYTHONPATH=pythonpath)
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    output = done.stdout + done.stderr
    problems = []
    if done.returncode != 0:
        problems.append(f"chorusrun exited {done.returncode}")
    finished = re.findall(r"rank (\d+): finished 10 steps on 2 ranks; parameter checksum (\S+)", output)
    if sorted(r for r, _ in finished) != ["1", "2"]:
        problems.append(f"survivors that finished: {finished}")
    if len({c for _, c in finished}) != 1:
        problems.append(f"the survivors' parameters differ: {finished}")
    if len(re.findall(r"shrank from 3 to 2 ranks", output)) != 2:
        problems.append("not both survivors shrank")
    if "rank 0 (pid" not in output or "--elastic: the others go on" not in output:
        problems.append("chorusrun did not report rank 0's loss")
    print(output)
    if problems:
        print("FAILED: " + "; ".join(problems))
        return 1
    print("elastic example: survivors shrank and agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
