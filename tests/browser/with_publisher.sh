#!/usr/bin/env bash
# with_publisher.sh PUBLISHER... -- COMMAND...: starts PUBLISHER in the background (e.g. a zerohop
# serve --share, or the C publisher example), waits up to 10 s for its share socket when
# $WAIT_SHARE names one, runs COMMAND in the foreground with SIGINT/SIGTERM passed on to it, then
# stops PUBLISHER; exits with COMMAND's status. For tests of `serve --source share:NAME` (--wrap).
set -u
publisher=()
while [[ $# -gt 0 && $1 != -- ]]; do publisher+=("$1"); shift; done
shift
"${publisher[@]}" >"${PUBLISHER_LOG:-/dev/null}" 2>&1 &
pub=$!
if [[ -n ${WAIT_SHARE:-} ]]; then
  dir=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/zerohop}
  dir=${dir:-/tmp/zerohop-$(id -u)}
  for _ in $(seq 100); do [[ -S $dir/$WAIT_SHARE.sock ]] && break; sleep 0.1; done
  [[ -S $dir/$WAIT_SHARE.sock ]] || { echo "with_publisher.sh: no share '$WAIT_SHARE' after 10 s" >&2; kill $pub; exit 1; }
fi
"$@" &
child=$!
trap 'kill -INT $child 2>/dev/null' INT
trap 'kill -TERM $child 2>/dev/null' TERM
rc=0
while kill -0 $child 2>/dev/null; do wait $child; rc=$?; done
kill $pub 2>/dev/null
wait $pub 2>/dev/null
exit $rc
