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

DIR may also hold report-NAME.csv for a variant column rankshape-NAME
(e.g. coll_tune --rack-nodes for rankshape-racks): its predictions.

Emulated: a native column labelled tuned-again (the tuned run repeated in
every round) is the noise floor: its ratio to tuned is shown per row and
summed up, and rows over the goal by no more than the worst such ratio
are counted apart.
"""
import csv
import glob
import math
import os
import sys

BIG = 64 << 10  # the goal's threshold: messages of 64 KiB and more
GOAL_SPEEDUP = 1.5
GOAL_SLOWDOWN = 1.05
AGAIN = "tuned-again"  # emulated: the tuned column timed a second time


def read_report(path):
    """{(collective, bytes, config): predicted seconds}; barrier under bytes 0."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path, newline="") as f:
        rows = csv.reader(f)
        next(rows, None)
        for r in rows:
            if len(r) < 5:
                continue
            # Reports before the configuration was quoted: commas inside it.
            c, b, config = r[0], int(r[1]), ",".join(r[2:-2])
            out[(c, 0 if c == "barrier" else b, config)] = float(r[-2])
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


def new_summary():
    return {"big": 0, "big_goal": 0, "all": 0, "worst": (0.0, None), "over": [], "pred": [],
            "big_speedups": []}


def add_to_summary(s, coll, size, speedup, ratio, pm):
    if ratio is None:
        return
    what = f"{coll} {size_name(size)}"
    if ratio > s["worst"][0]:
        s["worst"] = (ratio, what)
    s["all"] += 1
    if ratio > GOAL_SLOWDOWN:
        s["over"].append((ratio, what))
    if size >= BIG and coll != "barrier":
        s["big"] += 1
        s["big_goal"] += speedup is not None and speedup >= GOAL_SPEEDUP
        if speedup is not None:
            s["big_speedups"].append(speedup)
    if pm:
        s["pred"].append(pm)


def table(platform, directory, baselines, csv_rows, noise):
    """Markdown lines for one platform, and a summary per rankshape column.

    baselines: the native columns, e.g. ["native"] or ["tuned", "han"];
    the first is the reference for the speedup, the best of all for the
    ratio. Columns rankshape-* (variants, e.g. with racks) follow
    rankshape's, each with its speedup, ratio, choice and prediction (from
    report-*.csv). noise: the ratio tuned-again / tuned of each row that
    has both is appended to it (and a column shows it)."""
    rows = read_latency(directory)
    again = any(AGAIN in cols for cols in rows.values())
    variants = sorted({c for cols in rows.values() for c in cols if c.startswith("rankshape-")})
    columns = ["rankshape"] + variants
    predicted = {c: read_report(os.path.join(
        directory, "report.csv" if c == "rankshape" else f"report-{c[len('rankshape-'):]}.csv"))
        for c in columns}
    tuned_sizes = {(k[0], k[1]) for p in predicted.values() for k in p}
    lines = []
    summaries = {c: new_summary() for c in columns}
    by_coll = {}
    for key in order(rows):
        by_coll.setdefault(key[0], []).append(key)
    for coll, keys in by_coll.items():
        lines.append(f"\n#### {coll}\n")
        head = ["size"] + [f"{b} us" for b in baselines]
        if again:
            head += ["tuned again / tuned"]
        for c in columns:
            head += [f"{c} us", "speedup"] + (["vs best"] if len(baselines) > 1 else [])
            head += ["chosen", "predicted us", "pred/meas"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "|".join("---" if h == "chosen" else "---:" for h in head) + "|")
        for key in keys:
            cols = rows[key]
            base = [cols.get(b, (None, ""))[0] for b in baselines]
            ref = base[0]
            best = min((x for x in base if x is not None), default=None)
            tuned = coll == "barrier" or (coll, key[1]) in tuned_sizes
            size = size_name(key[1]) if tuned else f"*{size_name(key[1])}*"
            cells = [size] + [us(x) for x in base]
            if again:
                repeat = cols.get(AGAIN, (None, ""))[0]
                aa = repeat / ref if repeat and ref else None
                cells.append(fmt(aa))
                if aa is not None:
                    noise.append(aa)
            row = [platform, coll, key[1]] + [g9(x) for x in base]
            if again:
                row.append(g9(repeat))
            for c in columns:
                rs, choice = cols.get(c, (None, ""))
                speedup = ref / rs if ref and rs else None
                ratio = rs / best if best and rs else None
                p = predicted[c].get((coll, key[1], choice)) if rs is not None else None
                pm = p / rs if p is not None and rs else None
                cells += [us(rs), fmt(speedup)] + ([fmt(ratio)] if len(baselines) > 1 else [])
                cells += [choice, us(p), fmt(pm)]
                row += [g9(rs), fmt(speedup, 4), fmt(ratio, 4), choice, g9(p)]
                add_to_summary(summaries[c], coll, key[1], speedup, ratio, pm)
            lines.append("| " + " | ".join(cells) + " |")
            csv_rows.append(row)
    return lines, summaries, variants, again


def fmt(x, digits=2):
    return "" if x is None else f"{x:.{digits}f}"


def g9(x):
    return "" if x is None else f"{x:.9g}"


def noise_line(noise, summaries):
    """Markdown: how far two identical tuned runs land apart, and how many
    rows over the goal are within that."""
    if not noise:
        return []
    ordered = sorted(noise)
    spread = max(ordered[-1], 1 / ordered[0])
    over = [r for s in summaries.values() for r, _ in s["over"]]
    within = sum(1 for r in over if r <= spread)
    return ["", f"Noise floor: the tuned run timed twice in every round (column "
            f"\"tuned again / tuned\"): median {ordered[len(ordered) // 2]:.2f}, range "
            f"{ordered[0]:.2f}-{ordered[-1]:.2f} over {len(noise)} rows, so identical runs "
            f"land up to {spread:.2f}x apart. {within} of the {len(over)} rows over "
            f"{GOAL_SLOWDOWN:.2f}x are within that."]


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
    body, summaries, variants, noise, noise_lines = [], [], set(), [], []
    # Emulated only (one run): the repeated tuned column, if it was timed.
    again = False
    for platform, directory in runs:
        lines, per_column, v, again = table(platform, directory, baselines, csv_rows, noise)
        noise_lines += noise_line(noise, per_column)
        variants.update(v)
        body.append(f"\n### {platform}\n")
        body.extend(lines)
        for column, s in per_column.items():
            if s["all"]:
                name = platform if column == "rankshape" else f"{platform}, {column}"
                summaries.append(summary_line(name, s, baselines))
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
    md += noise_lines
    md += ["", "## Tables"] + body
    with open(out_md + ".tmp", "w") as f:
        f.write("\n".join(md) + "\n")
    with open(out_csv + ".tmp", "w", newline="") as f:
        w = csv.writer(f)
        head = ["platform", "collective", "bytes"] + [f"{b}_s" for b in baselines]
        head += [f"{AGAIN}_s"] if again else []
        for c in ["rankshape"] + sorted(variants):
            head += [f"{c}_s", f"{c}_speedup", f"{c}_ratio_vs_best", f"{c}_choice",
                     f"{c}_predicted_s"]
        w.writerow(head)
        # Platforms without a variant get empty cells.
        w.writerows(r + [""] * (len(head) - len(r)) for r in csv_rows)
    os.replace(out_md + ".tmp", out_md)
    os.replace(out_csv + ".tmp", out_csv)


if __name__ == "__main__":
    main()
