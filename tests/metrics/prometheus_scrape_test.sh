#!/usr/bin/env bash
# A real Prometheus server scrapes a running 4-rank job (CHORUS_METRICS_PORT) every second; its HTTP API must then
# show what the job did: 4 targets up, 4*N allreduces of B bytes each, histograms that count them, no error, no call
# under way. The job stays alive (each rank waits on a FIFO this script holds) until the figures are checked.
# Then the script kills rank 3 (chorusrun --elastic lets the others go on); each survivor's next allreduce fails and
# it aborts its communicator, and Prometheus must show rank 3's target down and, on each survivor, the one error of
# the kind its call returned, the lost peer and the abort.
# Usage: prometheus_scrape_test.sh CHORUSRUN METRICS_JOB (tests/metrics/metrics_job.c). Exits 77 (skipped) without
# Debian's prometheus.
set -euo pipefail
chorusrun=$1
metrics_job=$2
calls=50
count=256  # float32s: 1 KiB per call
ranks=4
deadline_seconds=40

if [[ ! -x "$metrics_job" ]]; then  # a tree that built only some targets (scripts/test.sh's sanitizer trees)
  echo "SKIP: $metrics_job is not built"
  exit 77
fi
prometheus_bin=$(command -v prometheus || true)
if [[ -z "$prometheus_bin" ]]; then
  echo "SKIP: prometheus not installed (scripts/install-deps.sh installs it)"
  exit 77
fi

tmp=$(mktemp -d /tmp/chorus-metrics-test.XXXXXX)
job_pid=
prom_pid=
cleanup() {
  local rc=$?
  [[ -n "$prom_pid" ]] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null
  # chorusrun forwards SIGTERM to the ranks and kills what they leave behind.
  [[ -n "$job_pid" ]] && kill "$job_pid" 2>/dev/null && wait "$job_pid" 2>/dev/null
  if [[ $rc -ne 0 ]]; then
    echo "--- job output"; cat "$tmp/job.log" 2>/dev/null || true
    echo "--- prometheus output (last lines)"; tail -n 20 "$tmp/prometheus.log" 2>/dev/null || true
  fi
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT

# Free ports: a block of $ranks for the job (port + local rank) and one for Prometheus.
read -r metrics_port prom_port < <(python3 - "$ranks" <<'PY'
import socket, sys
ranks = int(sys.argv[1])
def free(port):
    s = socket.socket()
    try:
        s.bind(("0.0.0.0", port)); return True
    except OSError:
        return False
    finally:
        s.close()
for _ in range(200):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); base = s.getsockname()[1]; s.close()
    if base + ranks + 1 < 65536 and all(free(base + i) for i in range(ranks + 1)):
        print(base, base + ranks); break
else:
    sys.exit("no free block of ports")
PY
)

mkfifo "$tmp/release" "$tmp/end"
# CHORUS_TIMEOUT bounds the failing call, should a survivor not hear of the loss otherwise.
CHORUS_METRICS_PORT=$metrics_port CHORUS_TIMEOUT=10 "$chorusrun" -n $ranks --elastic --timeout $deadline_seconds \
  "$metrics_job" "$tmp" $calls $count $deadline_seconds lose >"$tmp/job.log" 2>&1 &
job_pid=$!

targets=$(python3 -c "import sys; b=int(sys.argv[1]); print(', '.join(\"'127.0.0.1:%d'\" % (b+i) for i in range($ranks)))" "$metrics_port")
cat >"$tmp/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: chorus
    static_configs:
      - targets: [$targets]
YML
"$prometheus_bin" --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$tmp/prometheus.log" 2>&1 &
prom_pid=$!

cat >"$tmp/check.py" <<'PY'
import json, os, sys, time, urllib.parse, urllib.request
port, tmp, phase = sys.argv[1], sys.argv[2], sys.argv[3]
job, ranks, calls, size, seconds = map(int, sys.argv[4:])
survivors = range(ranks - 1)
def failed_kinds():
    """Each survivor's failed call, as it reported it (DIR/failed.R: chorusGetErrorString's text, ": ", the message)."""
    return {r: open(os.path.join(tmp, "failed.%d" % r)).read().split(":", 1)[0] for r in survivors}
before = {
    'count(up{job="chorus"} == 1)': ranks,
    'count(count by (rank) (chorus_calls_total{world_size="%d"}))' % ranks: ranks,
    'count(count by (comm) (chorus_calls_total))': 1,
    'sum(chorus_calls_total{collective="allreduce"})': ranks * calls,
    'sum(chorus_bytes_total{collective="allreduce"})': ranks * calls * size,
    'sum(chorus_call_duration_seconds_count{collective="allreduce"})': ranks * calls,
    'sum(chorus_call_duration_seconds_bucket{collective="allreduce",le="+Inf"})': ranks * calls,
    'sum(chorus_calls_total{collective!="allreduce"}) or vector(0)': 0,
    'count(chorus_oldest_pending_call_age_seconds)': ranks,
    'max(chorus_oldest_pending_call_age_seconds)': 0,
    'sum(chorus_errors_total)': 0,
    'count(chorus_errors_total{kind="timeout"})': ranks,
}
after = {
    'count(up{job="chorus"} == 1)': ranks - 1,
    'count(up{job="chorus"} == 0)': 1,
    'sum(chorus_errors_total)': ranks - 1,
    'sum(chorus_aborts_total)': ranks - 1,
    'sum(chorus_lost_peers_total)': ranks - 1,
    'max(chorus_oldest_pending_call_age_seconds)': 0,
    'sum(chorus_calls_total{collective="allreduce"})': (ranks - 1) * calls,
}
for r in survivors:
    after['sum(chorus_errors_total{rank="%d"})' % r] = 1
    after['sum(chorus_aborts_total{rank="%d"})' % r] = 1
    after['sum(chorus_lost_peers_total{rank="%d"})' % r] = 1
expected = before if phase == "before" else after
def state(pid):  # the process's state letter; None when it is gone (an exited job stays a zombie until reaped)
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None
def query(q):
    url = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": q}))
    with urllib.request.urlopen(url, timeout=2) as r:
        body = json.load(r)
    result = body["data"]["result"]
    return float(result[0]["value"][1]) if result else None
deadline = time.monotonic() + seconds
seen = {}
while True:
    if phase == "before":
        ready = all(os.path.exists(os.path.join(tmp, "ready.%d" % r)) for r in range(ranks))
    else:
        ready = all(os.path.exists(os.path.join(tmp, "failed.%d" % r)) for r in survivors)
    try:
        seen = {q: query(q) for q in expected}
    except OSError as e:  # Prometheus not listening yet
        seen = {"(prometheus)": str(e)}
    if ready and all(seen.get(q) == v for q, v in expected.items()):
        break
    job_gone = state(job) in (None, "Z")
    if time.monotonic() > deadline or job_gone:
        print("FAIL after %d s (ranks ready: %s, job gone: %s):" % (seconds, ready, job_gone))
        for q, v in expected.items():
            print("  %s = %s, expected %s" % (q, seen.get(q), v))
        sys.exit(1)
    time.sleep(0.2)
print("prometheus saw (%s rank %d was killed):" % (phase, ranks - 1))
for q, v in expected.items():
    print("  %s = %g" % (q, v))
if phase == "before":
    # The median call time, as a Grafana panel would show it (histogram_quantile over the buckets).
    q = 'histogram_quantile(0.5, sum by (le) (chorus_call_duration_seconds_bucket{collective="allreduce"}))'
    print("  %s = %s s" % (q, query(q)))
else:
    # The kind each survivor's counter names against what its call returned: a lost peer, or a peer's failure reaching
    # it, is chorusRemoteError ("remote error"); a timeout would be chorusTimeout ("timeout").
    returned = failed_kinds()
    for r in survivors:
        url = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode(
            {"query": 'chorus_errors_total{rank="%d"} > 0' % r}))
        with urllib.request.urlopen(url, timeout=2) as resp:
            kinds = [s["metric"]["kind"] for s in json.load(resp)["data"]["result"]]
        print("  rank %d: its call returned %s; chorus_errors_total counts kind %s" % (r, returned[r], kinds))
        code = {"peer_lost": "remote error", "remote_error": "remote error", "timeout": "timeout"}
        assert len(kinds) == 1 and code.get(kinds[0]) == returned[r], (r, kinds, returned[r])
PY

# Until every figure matches (or the deadline): Prometheus starts, the ranks finish their calls, a scrape follows.
python3 "$tmp/check.py" "$prom_port" "$tmp" before $job_pid $ranks $calls $((count * 4)) 30

# Kill the last rank, release the others (a writer opening the FIFO wakes every reader): their next call fails.
kill -KILL "$(cat "$tmp/ready.$((ranks - 1))")"
timeout 10 bash -c "echo go > '$tmp/release'"
python3 "$tmp/check.py" "$prom_port" "$tmp" after $job_pid $ranks $calls $((count * 4)) 30

# The survivors end cleanly; chorusrun --elastic reports the killed rank and exits 0 (every rank not lost did).
timeout 10 bash -c "echo go > '$tmp/end'"
wait "$job_pid"
job_pid=
grep -q "rank $((ranks - 1)) (pid [0-9]*) was killed by signal 9" "$tmp/job.log" ||
  { echo "chorusrun did not report the killed rank"; exit 1; }
echo "PASS: prometheus scraped $ranks ranks and saw $((ranks * calls)) allreduces, then a killed rank's peers' errors"
