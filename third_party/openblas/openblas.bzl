"""@openblas: Debian's OpenBLAS (libopenblas-dev) when the machine has it.

lib/matmul's local product runs on OpenBLAS's dgemm when it is present and
on Eigen otherwise, so a build never fails for the lack of it. The rule
writes a cc_library `openblas` whose header openblas_found.h defines
RANKSHAPE_OPENBLAS_FOUND to 1 (and links -lopenblas) or to 0 (links
nothing). It runs again whenever Bazel fetches (local = True), so
installing or removing the package takes effect on the next build.
"""

_HEADER = "/usr/include/x86_64-linux-gnu/cblas-openblas.h"
_LIBRARY = "/usr/lib/x86_64-linux-gnu/libopenblas.so"

def _openblas_impl(ctx):
    found = ctx.path(_HEADER).exists and ctx.path(_LIBRARY).exists
    ctx.file("openblas_found.h", "\n".join([
        "// Written by //third_party/openblas:openblas.bzl: is OpenBLAS here?",
        "#ifndef RANKSHAPE_OPENBLAS_FOUND",
        "#define RANKSHAPE_OPENBLAS_FOUND %d" % (1 if found else 0),
        "#endif",
        "",
    ]))
    ctx.file("BUILD", "\n".join([
        "# Written by //third_party/openblas:openblas.bzl (%s)." %
        ("found " + _LIBRARY if found else "not found: Eigen only"),
        "cc_library(",
        "    name = \"openblas\",",
        "    hdrs = [\"openblas_found.h\"],",
        "    linkopts = %s," % (["-lopenblas"] if found else []),
        "    visibility = [\"//visibility:public\"],",
        ")",
        "",
    ]))

openblas_repository = repository_rule(
    implementation = _openblas_impl,
    local = True,
)
