#!/usr/bin/env python3
"""gpu-bundle-stub.py LIB OUTDIR: write OUTDIR/<LIB's SONAME>, a stand-in for a shared library that a
bundled program links but never calls (scripts/gpu-serve-bundle.sh, BUNDLE_STUB).

The stand-in has LIB's SONAME, its version nodes and every symbol it exports in its default version,
so the loader accepts it in LIB's place, also for libraries linked with -z now. Its functions print
"stub SONAME: NAME called" and abort; its data objects are zeroed storage of the same size. It exists
because Debian's libavfilter links speech synthesis (flite, ~19 MiB), libplacebo and LAPACK for filters
a scale_cuda test never creates, and the whole closure is too large to carry to the GPU machine.
"""
import os
import re
import subprocess
import sys
import tempfile


def readelf(*args):
    return subprocess.run(["readelf", "-W", *args], capture_output=True, text=True, check=True).stdout


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    lib, out = sys.argv[1], sys.argv[2]
    soname = re.search(r"\(SONAME\)[^\[]*\[(.*)\]", readelf("-d", lib)).group(1)
    nodes, definitions = {}, []
    for line in readelf("--dyn-syms", lib).splitlines():
        f = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(f) < 8 or not f[0].endswith(":") or f[6] in ("UND", "ABS") or f[4] not in ("GLOBAL", "WEAK"):
            continue
        kind, size, name = f[3], int(f[2], 0), f[7]
        if "@@" in name:
            name, version = name.split("@@")
        elif "@" in name:
            continue  # an old, non-default version: nothing built today links against it
        else:
            version = None
        if kind in ("FUNC", "IFUNC"):
            definitions.append(f'void {name}(void) {{ stubCalled("{name}"); }}')
        elif kind in ("OBJECT", "TLS"):
            tls = "__thread " if kind == "TLS" else ""
            definitions.append(f"{tls}char {name}[{max(size, 1)}] __attribute__((aligned(16)));")
        else:
            continue
        nodes.setdefault(version, []).append(name)
    with tempfile.TemporaryDirectory() as tmp:
        src, script = os.path.join(tmp, "stub.c"), os.path.join(tmp, "versions.map")
        with open(src, "w") as s:
            s.write("#include <stdio.h>\n#include <stdlib.h>\n")
            s.write(f'static void stubCalled(const char* n) {{ fprintf(stderr, "stub {soname}: %s called\\n", n); '
                    "abort(); }\n")
            s.write("\n".join(definitions) + "\n")
        unversioned = nodes.pop(None, [])
        with open(script, "w") as v:
            for version, names in nodes.items():
                v.write(f"{version} {{ global: {'; '.join(names)}; }};\n")
        if unversioned and nodes:
            sys.exit(f"{lib}: both versioned and unversioned symbols; not handled")
        cmd = ["gcc", "-shared", "-fPIC", "-w", "-fno-builtin", "-o", os.path.join(out, soname),
               f"-Wl,-soname,{soname}", src]
        if nodes:
            cmd.append(f"-Wl,--version-script={script}")
        subprocess.run(cmd, check=True)
    print(f"{soname}: stub of {len(definitions)} symbols")


if __name__ == "__main__":
    main()
