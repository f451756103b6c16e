"""Fuzz targets: one source, two builds.

fuzz_test(name = "x", srcs = [...], deps = [...]) is a cc_test that replays
the target's corpus, corpus/x/ (the seeds and every crash found so far), in
the ordinary, ASan and UBSan builds. Under --config=fuzz (clang and
libFuzzer, see tools/fuzz) the same target links libFuzzer's main instead
and fuzzes, starting from that corpus, with the dictionary dict/x.dict.
"""

def fuzz_test(name, srcs, deps = []):
    native.cc_test(
        name = name,
        srcs = srcs,
        args = ["tests/fuzz/corpus/" + name],
        data = native.glob(["corpus/%s/**" % name]),
        linkopts = select({
            ":libfuzzer": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        size = "small",
        deps = deps + [":support"] + select({
            ":libfuzzer": [],
            "//conditions:default": [":replay_main"],
        }),
    )
