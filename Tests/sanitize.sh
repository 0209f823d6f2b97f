#!/bin/bash
# Runs flow's concurrency and process suites under ThreadSanitizer, or its suites and the
# fuzz corpus under AddressSanitizer or UndefinedBehaviorSanitizer, and lists what the
# sanitizer reported.
# See Tests/README.md ("Sanitizers") for what it runs, how long it takes and how to read it.
#
#   Tests/sanitize.sh thread  [SUITE...]   # default: FlowEndToEndTests ProcessTests FlowJournalTests FlowKitTests
#   Tests/sanitize.sh address [SUITE...]   # default: the same, then the fuzz corpus and 300 fuzzed inputs
#   Tests/sanitize.sh undefined [SUITE...] # default: as address
#
# Builds into .build-tsan / .build-asan / .build-ubsan (the normal .build is left alone). Reports go to
# $SANITIZER_REPORTS (default /tmp/flow-sanitizer/<kind>), one file per process that
# reported; the exit status is 1 when there is any.
set -u
kind=${1:-}
case "$kind" in
    thread) short=tsan ;;
    address) short=asan ;;
    undefined) short=ubsan ;;
    *) echo "usage: $0 thread|address|undefined [SUITE...]" >&2; exit 2 ;;
esac
shift
suites=("$@")
[ ${#suites[@]} -eq 0 ] && suites=(FlowEndToEndTests ProcessTests FlowJournalTests FlowKitTests)

root=$(cd "$(dirname "$0")/.." && pwd)
scratch="$root/.build-$short"
reports=${SANITIZER_REPORTS:-/tmp/flow-sanitizer/$short}
rm -rf "$reports"
mkdir -p "$reports/bin"

cd "$root" || exit 2
# swiftc has no `-sanitize=undefined` on Linux ("unsupported option … for target"): Swift
# traps on overflow, out-of-bounds indexing and bad unwrapping by itself. So UBSan
# instruments the C targets only (CFlowSys, CFlowSQLite, the tests' C), through clang's
# flags, and clang, which links the executables, adds its runtime.
if [ "$kind" = undefined ]; then
    sanitize=(-Xcc -fsanitize=undefined -Xcc -fno-omit-frame-pointer -Xswiftc -Xclang-linker -Xswiftc -fsanitize=undefined)
else
    sanitize=(--sanitize="$kind")
fi
swift build --build-tests "${sanitize[@]}" --scratch-path "$scratch" || exit 2

# Reports go to files, not to stderr, which the tests compare; the exit status stays the
# process's own (TSan's `exitcode=0`; UBSan's, which goes on after a report with
# `halt_on_error=0` so that every report of a run is collected), or is one no command of
# flow's uses (ASan's 86, which the fuzzer flags). Leak checking is off: flow exits with its
# journal and hub alive on purpose, and every such exit would be reported.
if [ "$kind" = thread ]; then
    options="halt_on_error=0 second_deadlock_stack=1 history_size=4 exitcode=0"
    variable=TSAN_OPTIONS
elif [ "$kind" = undefined ]; then
    options="print_stacktrace=1 halt_on_error=0"
    variable=UBSAN_OPTIONS
else
    options="detect_leaks=0 exitcode=86"
    variable=ASAN_OPTIONS
fi
# The end-to-end tests run flow with a clean environment: the options come with it through
# a wrapper that FLOW_BIN names.
# (`exec -a`: flow names itself as the tests expect, in hints such as `flow resume ID`;
# the harness finds flow-test-child beside it.)
cat > "$reports/bin/flow" <<EOF
#!/bin/bash
$variable="$options log_path=$reports/flow" exec -a "\$0" "$scratch/debug/flow" "\$@"
EOF
chmod +x "$reports/bin/flow"
ln -sf "$scratch/debug/flow-test-child" "$reports/bin/flow-test-child"

status=0
for suite in "${suites[@]}"; do
    echo "== $suite under $kind sanitizer"
    env FLOW_BIN="$reports/bin/flow" "$variable=$options log_path=$reports/test" \
        swift test --skip-build "${sanitize[@]}" --scratch-path "$scratch" --filter "$suite" \
        > "$reports/$suite.log" 2>&1 || { echo "   failing tests: see $reports/$suite.log"; status=1; }
    echo "   $SECONDS s since the start"
done

if [ "$kind" != thread ]; then
    echo "== fuzz corpus and 300 fuzzed inputs under $kind sanitizer"
    python3 Tests/fuzz/fuzz.py --binary "$reports/bin/flow" --memory-mb 0 --timeout 60 --crashes "$reports/crashes" \
        --replay Tests/FlowEndToEndTests/Fixtures/fuzz-corpus/*.yaml > "$reports/fuzz-corpus.log" 2>&1 || status=1
    python3 Tests/fuzz/fuzz.py --binary "$reports/bin/flow" --memory-mb 0 --timeout 60 --crashes "$reports/crashes" \
        --seed 1 --iterations 300 > "$reports/fuzz.log" 2>&1 || status=1
    echo "   $SECONDS s since the start"
fi

found=$(find "$reports" -maxdepth 1 -type f \( -name 'flow.*' -o -name 'test.*' \) | sort)
if [ -n "$found" ]; then
    echo "== sanitizer reports ($reports):"
    grep -h "^SUMMARY" $found | sort | uniq -c | sort -rn
    exit 1
fi
echo "== no sanitizer reports"
exit $status
