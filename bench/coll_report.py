#!/usr/bin/env python3
"""Tables for the collective latency benchmarks (bench/coll_smpi.sh,
bench/emulated/coll_emulated.sh): joins coll_latency's CSV rows (one file
per run, possibly several labels) with coll_tune's report (the predicted
time of every measured candidate) and writes one CSV and a Markdown table
per platform and collective.

  coll_report.py smpi OUT_CSV OUT_MD HEADER_MD PLATFORM=DIR ...
  coll_report.py emulated OUT_CSV OUT_MD HEADER_MD DIR

DIR holds latency*.csv (coll_latency --out) and report.csv (coll_tune
--report). HEADER_MD is Markdown put before the tables.

coll_tune's report is not quoted; a configuration may hold commas
("hierarchical levels=binomial,native"), so its rows are read as the first
two fields, the last two, and everything between.
"""
import csv
import glob
import math
import os
import sys

BIG = 64 << 10  # the goal's threshold: messages of 64 KiB and more
GOAL_SPEEDUP = 1.5
GOAL_SLOWDOWN = 1.05


def read_report(path):
    """{(collective, bytes, config): predicted seconds}; barrier under bytes 0."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        next(f, None)
        for line in f:
            parts = line.rstrip("\n").split(",")
            if len(parts) < 5:
                continue
            c, b = parts[0], int(parts[1])
            config = ",".join(parts[2:-2])
            out[(c, 0 if c == "barrier" else b, config)] = float(parts[-2])
    return out


def read_latency(directory):
    """{(collective, bytes): {column: (seconds, choice)}}."""
    rows = {}
    for path in sorted(glob.glob(os.path.join(directory, "latency*.csv"))):
        with open(path) as f:
            for r in csv.DictReader(f):
                # native: its label (tuned, han, native); rankshape: "rankshape",
                # or the label itself for variants labelled rankshape-*.
                if r["mode"] == "native":
                    column = r["label"]
                else:
                    column = r["label"] if r["label"].startswith("rankshape-") else "rankshape"
                key = (r["collective"], int(r["bytes"]))
                rows.setdefault(key, {})[column] = (float(r["seconds"]), r["choice"])
    return rows


def size_name(b):
    if b == 0:
        return "-"
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if b >= (1 << shift) and b % (1 << shift) == 0:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def us(s):
    return "" if s is None else f"{s * 1e6:.2f}"


def order(rows):
    names = ["bcast", "reduce", "allreduce", "gather", "scatter", "allgather",
             "reduce_scatter_block", "alltoall", "barrier"]
    return sorted(rows, key=lambda k: (names.index(k[0]) if k[0] in names else 99, k[1]))


def table(platform, directory, baselines, csv_rows):
    """Markdown lines for one platform, and its summary numbers.

    baselines: the native columns, e.g. ["native"] or ["tuned", "han"];
    the first is the reference for the speedup, the best of all for the
    ratio. Columns rankshape-* (variants, e.g. with racks) are shown after
    rankshape's, with their speedup and choice; the summary is rankshape's."""
    rows = read_latency(directory)
    predicted = read_report(os.path.join(directory, "report.csv"))
    variants = sorted({c for cols in rows.values() for c in cols if c.startswith("rankshape-")})
    lines = []
    summary = {"big": 0, "big_goal": 0, "all": 0, "worst": (0.0, None), "over": [], "pred": [],
               "big_speedups": []}
    by_coll = {}
    for key in order(rows):
        by_coll.setdefault(key[0], []).append(key)
    for coll, keys in by_coll.items():
        lines.append(f"\n#### {coll}\n")
        head = ["size"] + [f"{b} us" for b in baselines] + ["rankshape us", "speedup"]
        if len(baselines) > 1:
            head.append("vs best")
        head += ["chosen", "predicted us", "pred/meas"]
        for v in variants:
            head += [f"{v} us", f"{v} speedup", f"{v} chosen"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "|".join("---" if h.endswith("chosen") else "---:" for h in head) + "|")
        for key in keys:
            cols = rows[key]
            base = [cols.get(b, (None, ""))[0] for b in baselines]
            rs, choice = cols.get("rankshape", (None, ""))
            ref = base[0]
            best = min((x for x in base if x is not None), default=None)
            speedup = ref / rs if ref and rs else None
            ratio = rs / best if best and rs else None
            p = predicted.get((coll, key[1], choice)) if rs is not None else None
            pm = p / rs if p is not None and rs else None
            tuned = coll == "barrier" or any(k[0] == coll and k[1] == key[1] for k in predicted)
            size = size_name(key[1]) if tuned else f"*{size_name(key[1])}*"
            cells = [size] + [us(x) for x in base] + [us(rs), fmt(speedup)]
            if len(baselines) > 1:
                cells.append(fmt(ratio))
            cells += [choice, us(p), fmt(pm)]
            extra = []
            for v in variants:
                vs, vchoice = cols.get(v, (None, ""))
                cells += [us(vs), fmt(ref / vs if ref and vs else None), vchoice]
                extra += ["" if vs is None else f"{vs:.9g}", vchoice]
            lines.append("| " + " | ".join(cells) + " |")
            csv_rows.append([platform, coll, key[1]] + [g9(x) for x in base]
                            + [g9(rs), fmt(speedup, 4), fmt(ratio, 4), choice, g9(p)]
                            + extra)
            if rs is None or best is None:
                continue
            if ratio > summary["worst"][0]:
                summary["worst"] = (ratio, f"{coll} {size_name(key[1])}")
            summary["all"] += 1
            if ratio > GOAL_SLOWDOWN:
                summary["over"].append((ratio, f"{coll} {size_name(key[1])}"))
            if key[1] >= BIG and coll != "barrier":
                summary["big"] += 1
                summary["big_goal"] += speedup is not None and speedup >= GOAL_SPEEDUP
                if speedup is not None:
                    summary["big_speedups"].append(speedup)
            if pm:
                summary["pred"].append(pm)
    return lines, summary, variants


def fmt(x, digits=2):
    return "" if x is None else f"{x:.{digits}f}"


def g9(x):
    return "" if x is None else f"{x:.9g}"


def summary_line(platform, s, baselines):
    best = "native" if len(baselines) == 1 else "min(" + ", ".join(baselines) + ")"
    worst = f"{s['worst'][0]:.2f}x ({s['worst'][1]})" if s["worst"][1] else "n/a"
    pred = s["pred"]
    if pred:
        ordered = sorted(pred)
        within = sum(1 for x in pred if 0.8 <= x <= 1.25)
        agree = (f"pred/meas median {ordered[len(ordered) // 2]:.2f} (range "
                 f"{ordered[0]:.2f}-{ordered[-1]:.2f}); {within}/{len(pred)} within 0.8-1.25")
    else:
        agree = "n/a"
    big = s["big_speedups"]
    if big:
        geo = math.exp(sum(math.log(x) for x in big) / len(big))
        spread = f"{geo:.2f} ({min(big):.2f}-{max(big):.2f})"
    else:
        spread = "n/a"
    if s["over"]:
        top = sorted(s["over"], reverse=True)[:4]
        over = f"{len(s['over'])}/{s['all']}; worst: " + ", ".join(f"{w} ({r:.2f}x)" for r, w in top)
    else:
        over = f"0/{s['all']}"
    return (f"| {platform} | {s['big_goal']}/{s['big']} | {spread} | {worst} | {over} | {agree} |",
            best)


def main():
    kind, out_csv, out_md, header = sys.argv[1:5]
    if kind == "smpi":
        runs = [a.split("=", 1) for a in sys.argv[5:]]
        baselines = ["native"]
    else:
        runs = [("emulated", sys.argv[5])]
        baselines = ["tuned", "han"]
    csv_rows = []
    body, summaries, variants = [], [], set()
    for platform, directory in runs:
        lines, s, v = table(platform, directory, baselines, csv_rows)
        variants.update(v)
        body.append(f"\n### {platform}\n")
        body.extend(lines)
        summaries.append(summary_line(platform, s, baselines))
    best = summaries[0][1] if summaries else "native"
    md = [open(header).read().rstrip("\n"), "", "## Summary", "",
          f"Speedup = {baselines[0]} / rankshape; ratio = rankshape / {best} "
          f"(goal: no size over {GOAL_SLOWDOWN:.2f}); at >= 64 KiB the goal is a "
          f"speedup of {GOAL_SPEEDUP} or more. Predicted: coll_tune's model for the "
          "configuration rankshape chose; measured: coll_latency's time of it.", "",
          f"| platform | >= 64 KiB: (collective, size) with speedup >= {GOAL_SPEEDUP} | "
          f">= 64 KiB: speedup geomean (min-max) | worst ratio vs {best} | "
          f"(collective, size) over {GOAL_SLOWDOWN:.2f}x | predicted vs measured (chosen configuration) |",
          "|---|---:|---|---|---|---|"]
    md += [s[0] for s in summaries]
    md += ["", "## Tables"] + body
    with open(out_md + ".tmp", "w") as f:
        f.write("\n".join(md) + "\n")
    with open(out_csv + ".tmp", "w", newline="") as f:
        w = csv.writer(f)
        head = (["platform", "collective", "bytes"] + [f"{b}_s" for b in baselines]
                + ["rankshape_s", "speedup", "ratio_vs_best", "choice", "predicted_s"]
                + [f"{v}{suffix}" for v in sorted(variants) for suffix in ("_s", "_choice")])
        w.writerow(head)
        # Platforms without the variants get empty cells (one variant at most).
        w.writerows(r + [""] * (len(head) - len(r)) for r in csv_rows)
    os.replace(out_md + ".tmp", out_md)
    os.replace(out_csv + ".tmp", out_csv)


if __name__ == "__main__":
    main()
