#!/bin/sh
# Run a conformance client and record how it exited: exit_status.sh DIR COMMAND... URL
#
# The harness runs this for each scenario. For a scenario that DIR/judged.txt
# names, it runs COMMAND... URL, appends "<status><TAB><scenario>" to a file
# of its own in DIR, and exits as the client did: the harness itself only
# prints a client's exit status, and ignores it for some scenarios, and
# run.py requires it. Any other scenario is not judged in this run, and its
# client is not started (exit 3).
dir=$1
shift
if ! grep -qxF -e "$MCP_CONFORMANCE_SCENARIO" "$dir/judged.txt"; then
    echo "scenario not judged in this run: the client is not started" >&2
    exit 3
fi
"$@"
status=$?
record=$(mktemp "$dir/exit.XXXXXX")
printf '%s\t%s\n' "$status" "$MCP_CONFORMANCE_SCENARIO" >"$record"
exit "$status"
