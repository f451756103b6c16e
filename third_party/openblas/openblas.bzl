"""@openblas: Debian's OpenBLAS (libopenblas-dev) when the machine has it.

lib/matmul's local product runs on OpenBLAS's dgemm when it is present and
on Eigen otherwise, so the library and its tests build without it (the
benchmarks that compare against OpenBLAS and ScaLAPACK still need it). The
rule writes a cc_library `openblas` whose header
<openblas/openblas_found.h> defines RANKSHAPE_OPENBLAS_FOUND to 1 (and
links -lopenblas) or to 0 (links nothing).

Bazel looks again when its server restarts (`bazel shutdown`), on
`bazel sync --configure`, or when RANKSHAPE_REQUIRE_OPENBLAS changes: after
installing or removing the package, run one of those. With
RANKSHAPE_REQUIRE_OPENBLAS=1 (tools/test sets it) a machine without OpenBLAS
fails the build instead of quietly testing Eigen alone.
"""

_HEADER = "/usr/include/x86_64-linux-gnu/cblas-openblas.h"
_LIBRARY = "/usr/lib/x86_64-linux-gnu/libopenblas.so"

def _openblas_impl(ctx):
    found = ctx.path(_HEADER).exists and ctx.path(_LIBRARY).exists
    if not found and ctx.os.environ.get("RANKSHAPE_REQUIRE_OPENBLAS", "") == "1":
        fail("RANKSHAPE_REQUIRE_OPENBLAS=1, but OpenBLAS is not installed (%s or %s is " %
             (_HEADER, _LIBRARY) + "missing): run tools/install-deps")
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
        "    include_prefix = \"openblas\",",
        "    linkopts = %s," % (["-lopenblas"] if found else []),
        "    visibility = [\"//visibility:public\"],",
        ")",
        "",
    ]))

openblas_repository = repository_rule(
    implementation = _openblas_impl,
    local = True,
    configure = True,
    environ = ["RANKSHAPE_REQUIRE_OPENBLAS"],
)
