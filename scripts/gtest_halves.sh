#!/usr/bin/env bash
# Sourced by scripts/test.sh: runs a gtest binary as two halves side by side, optionally sampling the instances of
# its parameterized tests.
# The salt that picks the sampled instances: INSTANCE_SALT, else the commit's first 7 hex digits, else 0.
instance_salt() {
  if [ -n "${INSTANCE_SALT:-}" ]; then echo "$INSTANCE_SALT"; return; fi
  local head
  head=$(git rev-parse --short=7 HEAD 2>/dev/null) || head=0
  echo $((16#$head))
}
# sample_instances N: test names in, the kept ones out (see halves). An instance is the last /-part of a name
# without a dot (Prefix/Suite.Test/Param); a test with N instances or fewer keeps exactly one.
sample_instances() {
  awk -v n="$1" -v salt="$(instance_salt)" '
    { name[NR] = $0; key[NR] = $0; if (match($0, /\/[^\/.]*$/)) key[NR] = substr($0, 1, RSTART - 1); count[key[NR]]++ }
    END {
      for (i = 1; i <= NR; i++) {
        k = key[i]; at = seen[k]++
        if (n <= 1 || count[k] == 1) keep = 1
        else if (count[k] <= n) keep = (at == salt % count[k])
        else keep = ((at + salt) % n == 0)
        if (keep) print name[i]
      }
    }'
}
# The test binaries run as two halves each, side by side, one process per half, rather than a process per test
# under ctest: an instrumented process takes 0.3 s to start, which made up most of the unit tests' time (TSan: 317
# test-seconds under ctest, 154 s in one process; ASan's collective tests 349 s under ctest, 234 in halves). The
# halves are the tests taken alternately, passed as filters, not GTEST_SHARD_* (which the tests' own child
# processes would inherit); a half's deadline is its own (the process worlds inside keep theirs).
# halves BINARY [ALONE]: runs tests/BINARY in two halves; fails when either does, printing the end of its log. Tests
# whose names match the regex ALONE run after them, in a process of their own: under TSan, a test that forks a child
# which starts threads fails in a process where many threads came and went before it ("dup thread with used id").
# With INSTANCE_SAMPLE=N (N > 1), each parameterized test keeps one instance in N of its own, at least one, chosen
# by a salt from the commit (INSTANCE_SALT overrides it): every test runs, and successive commits try other worlds.
halves() {
  local bin=$1 alone=${2:-} half pids=() rc=0 filters=("" "" "") i=0 name listed kept
  listed=$("./tests/$bin" --gtest_list_tests | awk '/^[^ ]/ && $1 ~ /\.$/ {suite = $1} /^  / && suite {print suite $1}')
  kept=$(sample_instances "${INSTANCE_SAMPLE:-1}" <<<"$listed")
  if [ "${INSTANCE_SAMPLE:-1}" -gt 1 ]; then
    echo "$bin: $(wc -l <<<"$kept") of $(wc -l <<<"$listed") tests (one instance in $INSTANCE_SAMPLE of each" \
      "parameterized test, INSTANCE_SALT=$(instance_salt))"
  fi
  for name in $kept; do
    if [ -n "$alone" ] && [[ $name =~ $alone ]]; then
      filters[2]+="$name:"
      continue
    fi
    filters[i % 2]+="$name:"
    i=$((i + 1))
  done
  for half in 0 1; do
    timeout -k 10 900 "./tests/$bin" --gtest_filter="${filters[half]%:}" >"$bin-half-$half.log" 2>&1 &
    pids+=($!)
  done
  for half in 0 1 2; do
    if [ "$half" = 2 ]; then
      [ -n "${filters[2]}" ] || break
      timeout -k 10 300 "./tests/$bin" --gtest_filter="${filters[2]%:}" >"$bin-alone.log" 2>&1 &
      pids+=($!)
    fi
    local log="$bin-half-$half.log"
    [ "$half" = 2 ] && log="$bin-alone.log"
    local label=${log#"$bin"-}
    label=${label%.log}
    if wait "${pids[half]}"; then
      grep -E '^\[(==========|  PASSED  )\]' "$log" | sed "s/^/$bin, $label: /"
    else
      echo "$bin, $label, failed (exit $?): $PWD/$log"
      tail -n 60 "$log"
      rc=1
    fi
  done
  return $rc
}
