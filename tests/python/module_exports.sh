#!/bin/sh
# The zerohop Python module exports PyInit_zerohop and nothing else (python/CMakeLists.txt says why:
# a module that exports its static libstdc++/fmt/cudart symbols can capture the symbols of C++
# extensions imported after it, torch and cupy among them, and crash them).
# Usage: module_exports.sh MODULE.so
set -eu
module=$1
command -v nm >/dev/null || { echo "SKIP: nm (binutils) not found"; exit 77; }
extra=$(nm -D --defined-only "$module" | awk '$2 ~ /^[TWDBRViu]$/ && $3 != "PyInit_zerohop" {print $3}')
if [ -n "$extra" ]; then
  echo "FAIL: $module exports $(echo "$extra" | wc -l) symbols besides PyInit_zerohop; the first ones:"
  echo "$extra" | head -20 | c++filt
  exit 1
fi
echo "OK: $module exports only PyInit_zerohop"
