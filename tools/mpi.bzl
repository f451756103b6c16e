"""Registers an MPI test binary at several rank counts.

mpi_test(name = "x", srcs = [...], deps = [...]) builds one binary linked
with the MPI GoogleTest main and one sh_test per rank count (x_np1, x_np2,
...), each running it under the configured launcher (mpirun for Open MPI,
mpiexec for MPICH, smpirun for SMPI), plus a test_suite `x` with all of them.
MPI tests are tagged "exclusive" (two cores, many ranks: one at a time) and
"mpi" (so CI can select them); runs at 1 to 3 ranks also "mpi_small" (the
sanitizer step's share), runs at 4 ranks or more also "mpi_wide" (left out
of the MPICH step and of tools/test --quick: see docs/testing.md).
"""

DEFAULT_RANKS = [1, 2, 3, 4, 7, 8]

# The launcher follows the back-end: --define=mpi=openmpi|mpich|smpi (set
# by .bazelrc and its configs) is also a Make variable.
_LAUNCHER_ARG = "$(mpi)"

# SMPI loads programs as shared objects.
_SMPI_LINKOPTS = select({
    "//third_party/mpi:smpi": ["-shared"],
    "//conditions:default": [],
})

def mpi_binary(name, linkopts = [], **kwargs):
    """A cc_binary that is an executable, or a shared object under SMPI."""
    native.cc_binary(
        name = name,
        linkopts = linkopts + _SMPI_LINKOPTS,
        **kwargs
    )

def mpi_launch_test(name, binary, ranks = DEFAULT_RANKS, args = [], data = [], size = "medium", tags = []):
    """One sh_test per rank count running an existing MPI binary."""
    tests = []
    for n in ranks:
        test_name = "%s_np%d" % (name, n)
        native.sh_test(
            name = test_name,
            srcs = ["//tools:run_mpi.sh"],
            args = [_LAUNCHER_ARG, str(n), "$(location %s)" % binary] + args,
            data = [binary, "//data/platforms:ci-cluster.xml", "//tools:sanitizer_env"] + data,
            size = size,
            # 4 ranks and more: "mpi_wide". MPICH busy-polls, so on two
            # cores these cost it 20x to 100x what Open MPI takes (which
            # yields when oversubscribed); its step and --quick skip them.
            # 1 to 3 ranks: "mpi_small", the sanitizer builds' share (with
            # the shorter script-driven tests, tagged so in their BUILD).
            tags = ["exclusive", "mpi"] + (["mpi_wide"] if n >= 4 else []) +
                   (["mpi_small"] if n <= 3 else []) + tags,
        )
        tests.append(":" + test_name)
    native.test_suite(name = name, tests = tests, tags = ["mpi"] + tags)

def mpi_test(name, srcs, deps = [], ranks = DEFAULT_RANKS, args = [], data = [], size = "medium", tags = []):
    """A GoogleTest MPI test at every rank count in `ranks`."""
    binary = name + "_bin"
    mpi_binary(
        name = binary,
        srcs = srcs,
        deps = deps + ["//tests/mpi_testing:mpi_test_main"],
        testonly = True,
    )
    mpi_launch_test(name, ":" + binary, ranks, args, data, size, tags)
