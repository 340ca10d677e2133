#!/usr/bin/env bash
# `zerohop tap` on a device ring (label gpu): the same GPU in place, then --device-access copy (the
# fallback for GPUs without peer access, forced on one GPU). Each run must attach, say how it reads
# (its second stderr line: "ring on GPU 0, read on GPU 0: same-gpu|copy (why)"), and print 30 frames.
# The frames' pixels are checked byte for byte by test_share_device.py; this checks the CLI's option
# and what it tells the user. Exit 77 (skipped) without a usable GPU.
# usage: tap_device_copy.sh ZEROHOP_BINARY DEVICE_PUBLISHER
set -uo pipefail
zerohop=$1 publisher=$2
work=$(mktemp -d)
trap 'kill "$pub" 2>/dev/null; wait "$pub" 2>/dev/null; rm -rf "$work"' EXIT
export XDG_RUNTIME_DIR=$work
mkdir -p "$work/zerohop"
"$publisher" tapdev "$work/zerohop" 8 >"$work/ready" &
pub=$!
for _ in $(seq 200); do  # up to 20 s for "ready" (or "nogpu")
  [[ -s $work/ready ]] && break
  kill -0 "$pub" 2>/dev/null || break
  sleep 0.1
done
read -r first <"$work/ready" || first="nothing within 20 s"
if [[ $first == nogpu* ]]; then echo "skipped: $first"; exit 77; fi
[[ $first == ready ]] || { echo "FAIL: the publisher said: $first"; exit 1; }

fail=0
for access in auto copy; do
  if ! timeout 30 "$zerohop" tap tapdev --count 30 --device 0 --device-access "$access" \
      >"$work/$access.out" 2>"$work/$access.err"; then
    echo "FAIL: tap --device-access $access exited $?:"; cat "$work/$access.err"; fail=1; continue
  fi
  want=$([[ $access == copy ]] && echo copy || echo same-gpu)
  if ! grep -qE "read on GPU 0: $want( \(|$)" "$work/$access.err"; then
    echo "FAIL: tap --device-access $access did not say it reads '$want':"; cat "$work/$access.err"; fail=1
  fi
  frames=$(grep -c '^seq ' "$work/$access.out")
  if [[ $frames != 30 ]]; then echo "FAIL: tap --device-access $access printed $frames frames, not 30"; fail=1; fi
  echo "--device-access $access: $(sed -n 2p "$work/$access.err"); $frames frames"
done
if "$zerohop" tap tapdev --device-access peer >/dev/null 2>"$work/bad.err"; then
  echo "FAIL: --device-access peer was accepted"; fail=1
elif ! grep -q 'auto' "$work/bad.err"; then
  echo "FAIL: --device-access peer was refused without naming the choices:"; cat "$work/bad.err"; fail=1
fi
exit $fail
