#!/usr/bin/env bash
# abi-check.sh: does a built libzerohop keep the C API's ABI of its SOVERSION? libabigail (Debian's
# abigail-tools) compares the library with the committed baseline abi/<soname>.abi, through the
# suppressions in abi/c-api.suppr (only zh_* functions and the types they reach). Run by CTest as package.abi_c_api.
#
# Usage: scripts/abi-check.sh LIBRARY            check (exit 1 on a removed or changed zh_* function)
#        scripts/abi-check.sh LIBRARY --update   write the baseline for LIBRARY's soname
#
# Added functions and added enumerators pass. Any other change to a zh_* function or a type it reaches
# fails, unless the SOVERSION changes with it (CMakeLists.txt's major version: a new soname has no
# baseline yet, which is said, and --update writes one). A versioned struct grown at its end is
# compatible (struct_size; tests/capi/v0_1 proves it) but fails here too, on purpose: the commit that
# grows it runs --update, so every change of the C ABI is a reviewed line in abi/. (libabigail 2.2's
# has_data_member_inserted_at = end suppression also hid a member changed in type, so it is not used.) The baseline holds full debug information of src/capi (built -g2 whatever
# the build's own -g level), so it is written and checked with the same compiler (Debian 12's GCC).
set -euo pipefail
cd "$(dirname "$0")/.."
lib=${1:?"usage: scripts/abi-check.sh LIBRARY [--update]"}
mode=${2:-check}
for tool in abidw abidiff readelf; do
  command -v "$tool" >/dev/null || { echo "abi-check: $tool not found: install abigail-tools and binutils (scripts/install-deps.sh)" >&2; exit 2; }
done
[[ -f $lib ]] || { echo "abi-check: no library at $lib: build the zerohop_lib target first" >&2; exit 2; }
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
[[ -n $soname ]] || { echo "abi-check: $lib has no soname" >&2; exit 2; }
baseline=abi/$soname.abi
suppr=abi/c-api.suppr

if [[ $mode == --update ]]; then
  abidw --no-corpus-path --suppressions "$suppr" "$lib" > "$baseline"
  echo "abi-check: wrote $baseline ($(grep -c "<elf-symbol name='zh_" "$baseline") zh_* functions)"
  exit 0
fi
if [[ ! -f $baseline ]]; then
  echo "abi-check: no baseline for $soname (a new SOVERSION): write it with scripts/abi-check.sh $lib --update"
  exit 0
fi
set +e
report=$(abidiff --no-unreferenced-symbols --suppressions "$suppr" "$baseline" "$lib" 2>&1)
rc=$?
set -e
echo "$report"
if (( rc & 1 )); then echo "abi-check: abidiff failed to run (exit $rc)" >&2; exit 2; fi
# Exit bits: 4 = some ABI change, 8 = incompatible. Additions are changes too, so read the summary:
# anything removed or changed fails.
bad=$(echo "$report" | sed -n 's/^\(Functions\|Variables\) changes summary: \([0-9]*\) Removed, \([0-9]*\) Changed.*/\2 \3/p' |
  awk '{ n += $1 + $2 } END { print n + 0 }')
if (( rc & 8 )) || (( bad > 0 )); then
  echo "abi-check: FAIL: the C API of $soname changed against $baseline (above). Keep the old functions" \
       "and struct layouts; if the change only grows a versioned struct at its end (compatible through" \
       "struct_size), write the new baseline with '$0 $lib --update' in the same commit; if it breaks" \
       "callers, raise the SOVERSION (CMakeLists.txt's major version) and write a baseline for it." >&2
  exit 1
fi
echo "abi-check: $soname keeps the C API's ABI of $baseline"
