#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls exactly this): installs the Debian packages,
# configures and builds with the default preset (CUDA targets too when nvcc is found), then runs
# every CTest label. A label in ZEROHOP_REQUIRED_LABELS that ran zero tests (all skipped or none
# registered) fails the run, so a silently skipped suite cannot pass as green.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${ZEROHOP_REQUIRED_LABELS:=unit media ipc browser fuzz soak}"
: "${ZEROHOP_ALL_LABELS:=unit media ipc gpu browser fuzz soak}"
: "${BUILD_DIR:=build}"

if [[ "${ZEROHOP_SKIP_INSTALL:-0}" != 1 ]]; then
  scripts/install-deps.sh
fi
cmake --preset default -B "$BUILD_DIR" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"

# libFuzzer targets (clang, ASan+UBSan): a short smoke over the committed corpus (label fuzz).
FUZZ_DIR="${BUILD_DIR}-fuzz"
cmake -S . -B "$FUZZ_DIR" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DZEROHOP_BUILD_FUZZERS=ON -DZEROHOP_WITH_CUDA=OFF -DZEROHOP_WITH_MEDIA=OFF \
  -DZEROHOP_WITH_PYTHON=OFF -DZEROHOP_BUILD_TESTS=OFF -DZEROHOP_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build "$FUZZ_DIR" -j"$(nproc)" --target fuzz_whep_offer fuzz_share_wire fuzz_mjpeg_frame

status=0
declare -A ran
for label in $ZEROHOP_ALL_LABELS; do
  echo "=== ctest label: $label"
  jobs=2
  [[ $label == browser || $label == soak ]] && jobs=1
  log=$(mktemp)
  set +e
  dir="$BUILD_DIR"
  [[ $label == fuzz ]] && dir="$FUZZ_DIR"
  ctest --test-dir "$dir" -L "^${label}\$" -j"$jobs" --output-on-failure --timeout 300 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  total=$(sed -nE 's/.*tests passed, [0-9]+ tests failed out of ([0-9]+).*/\1/p' "$log" | tail -1)
  skipped=$(grep -cE '\*\*\*Skipped|Not Run' "$log" || true)
  ran[$label]=$(( ${total:-0} - skipped ))
  rm -f "$log"
  if [[ $rc -ne 0 ]]; then status=1; fi
done

echo "=== tests run per label"
for label in $ZEROHOP_ALL_LABELS; do
  printf '  %-8s %s\n' "$label" "${ran[$label]}"
done
for label in $ZEROHOP_REQUIRED_LABELS; do
  if [[ ${ran[$label]:-0} -le 0 ]]; then
    echo "FAIL: required label '$label' ran zero tests"
    status=1
  fi
done
exit $status
