#!/usr/bin/env python3
"""Plots and a Markdown report for the ordering-comparison harness.

  harness_plot.py OUT

OUT is the harness's results folder. It reads
  orderings.csv  ordering,algorithm,status,objective,objective_vs_identity,
                 relabel_seconds,time_limited
  kernels.csv    ordering,kernel,impl,dim,bytes,seconds,speedup_vs_identity
                 [,predicted]: the prediction the row's time is set against;
                 dim -1 of a fibre collective: every dimension in turn
                 (compare writes the worst fibre cost of the dimension for
                 fibre collectives); without it, the ordering's objective
                 [,link_load]: the second prediction, the load on links that
                 nodes and racks share (lib/model/link_load.h)
  summary.json   testbed, ranks, grid, cost_source, measure_seconds,
                 wall_seconds, correlations[] (other keys are ignored)
  heatmap-*.png  optional, only linked from the report
and writes into OUT
  time_per_ordering.png      one subplot per (kernel, dim, bytes): bars of
                             seconds per ordering, one bar per impl
  predicted_vs_measured.png  one subplot per (kernel, impl, dim, bytes):
                             objective against seconds, Spearman rho
  speedup.png                heat-map table: speed-up over identity, one row
                             per (kernel, impl, dim, bytes), one column per
                             ordering
  report.md                  the tables, verdicts and links to the images

Every input is read and checked before anything is written; bad input is
reported on stderr with the file and line (CSV) or key (JSON) and exits 1.
Each output is written to a temporary file in OUT and renamed into place
once all of them are complete, so a failure leaves no partial output (and
leaves earlier outputs as they were).

Verdicts (Spearman table): "agrees" when rho >= 0.9 over at least 3
orderings, otherwise "does not agree" with the causes that can be detected:
fewer than 3 orderings, measured times within 5% of each other (the ranking
is noise), ties among the objectives (or all equal), ties among the times,
and where the fastest measured ordering is placed by the predictions.
When kernels.csv has link loads, their rho is shown too, and a row the
prediction gets wrong but the link load ranks with rho >= 0.9 says so:
contention on shared links, which pair costs do not see, explains it.
"""
import csv
import glob
import json
import math
import os
import sys
import tempfile

AGREE_RHO = 0.9
NOISE_SPREAD = 0.05  # measured times within 5%: the ranking is noise
MIN_ORDERINGS = 3
LOG_SPREAD = 10.0  # log scale when max/min exceeds this

KNOWN_ORDERINGS = ["identity", "round-robin", "random", "node-aware", "kl",
                   "hill-climb", "multilevel", "auto", "metis", "scotch",
                   "treematch"]
KNOWN_KERNELS = ["allreduce", "bcast", "mm3d", "summa"]
MATMUL_KERNELS = {"mm3d", "summa"}
IMPL_COLOURS = {"native": "#4c72b0", "rankshape": "#dd8452"}

ORDERINGS_COLUMNS = ["ordering", "algorithm", "status", "objective",
                     "objective_vs_identity", "relabel_seconds", "time_limited"]
KERNELS_COLUMNS = ["ordering", "kernel", "impl", "dim", "bytes", "seconds",
                   "speedup_vs_identity"]
OUTPUTS = ["time_per_ordering.png", "predicted_vs_measured.png",
           "speedup.png", "report.md"]


class InputError(Exception):
    """Bad input; the message names the file and the line or key."""


def warn(msg):
    print("harness_plot: warning: " + msg, file=sys.stderr)


# ---------------------------------------------------------------- reading

def read_csv(path, columns):
    """[(line number, {column: stripped text})]; checks the header and the
    field count of every row."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise InputError("%s: missing file" % path)
    except (OSError, UnicodeDecodeError) as e:
        raise InputError("%s: cannot read: %s" % (path, e))
    reader = csv.reader(text.lstrip("\ufeff").splitlines())
    header = None
    rows = []
    for fields in reader:
        line = reader.line_num
        if not fields or all(not x.strip() for x in fields):
            continue
        fields = [x.strip() for x in fields]
        if header is None:
            header = fields
            for c in columns:
                if c not in header:
                    raise InputError("%s:%d: missing column '%s' (header: %s)"
                                     % (path, line, c, ",".join(header)))
            dup = [c for c in header if header.count(c) > 1]
            if dup:
                raise InputError("%s:%d: column '%s' appears twice"
                                 % (path, line, dup[0]))
            continue
        if len(fields) != len(header):
            raise InputError("%s:%d: %d fields, the header has %d"
                             % (path, line, len(fields), len(header)))
        rows.append((line, dict(zip(header, fields))))
    if header is None:
        raise InputError("%s:1: empty file, expected the header %s"
                         % (path, ",".join(columns)))
    return rows


def field_error(path, line, header_columns, column, value, what):
    col = header_columns.index(column) + 1 if column in header_columns else 0
    return InputError("%s:%d: column %d '%s': %r is not %s"
                      % (path, line, col, column, value, what))


def parse_float(path, line, columns, row, column, optional=False,
                positive=False):
    text = row[column]
    if text == "" and optional:
        return None
    try:
        v = float(text)
    except ValueError:
        raise field_error(path, line, columns, column, text, "a number")
    if not math.isfinite(v):
        raise field_error(path, line, columns, column, text, "a finite number")
    if positive and v <= 0:
        raise field_error(path, line, columns, column, text,
                          "a positive number")
    if v < 0:
        raise field_error(path, line, columns, column, text,
                          "a non-negative number")
    return v


def parse_int(path, line, columns, row, column, minimum):
    text = row[column]
    try:
        v = int(text)
    except ValueError:
        raise field_error(path, line, columns, column, text, "an integer")
    if v < minimum:
        raise field_error(path, line, columns, column, text,
                          "an integer >= %d" % minimum)
    return v


def read_orderings(path):
    """[dict] in the file's order: name, algorithm, status, ok, objective,
    ratio, relabel, limited (numbers None where empty)."""
    out = []
    seen = {}
    for line, row in read_csv(path, ORDERINGS_COLUMNS):
        cols = list(row.keys())
        name = row["ordering"]
        if not name:
            raise InputError("%s:%d: column 1 'ordering' is empty" % (path, line))
        if name in seen:
            raise InputError("%s:%d: ordering '%s' again (first on line %d)"
                             % (path, line, name, seen[name]))
        seen[name] = line
        status = row["status"]
        if not status:
            raise InputError("%s:%d: column %d 'status' is empty"
                             % (path, line, cols.index("status") + 1))
        ok = status == "ok"
        o = {"name": name, "algorithm": row["algorithm"], "status": status,
             "ok": ok, "line": line}
        # Numbers are required for "ok" rows; skipped rows leave them empty
        # (checked when present anyway).
        o["objective"] = parse_float(path, line, cols, row, "objective",
                                     optional=not ok)
        o["ratio"] = parse_float(path, line, cols, row, "objective_vs_identity",
                                 optional=True)
        o["relabel"] = parse_float(path, line, cols, row, "relabel_seconds",
                                   optional=not ok)
        limited = row["time_limited"]
        if limited in ("0", "1"):
            o["limited"] = limited == "1"
        elif limited == "" and not ok:
            o["limited"] = None
        else:
            raise field_error(path, line, cols, "time_limited", limited,
                              "0 or 1")
        out.append(o)
    if not out:
        raise InputError("%s: no orderings (only a header)" % path)
    return out


def read_kernels(path, orderings):
    """{(kernel, impl, dim, bytes): {ordering: (seconds, speedup or None,
    predicted or None, link load or None)}}."""
    known = {o["name"] for o in orderings}
    out = {}
    where = {}
    for line, row in read_csv(path, KERNELS_COLUMNS):
        cols = list(row.keys())
        for c in ("ordering", "kernel", "impl"):
            if not row[c]:
                raise InputError("%s:%d: column %d '%s' is empty"
                                 % (path, line, cols.index(c) + 1, c))
        name = row["ordering"]
        if name not in known:
            raise InputError("%s:%d: column %d 'ordering': '%s' is not in "
                             "orderings.csv" % (path, line,
                                                cols.index("ordering") + 1, name))
        dim = parse_int(path, line, cols, row, "dim", -1)
        size = parse_int(path, line, cols, row, "bytes", 1)
        seconds = parse_float(path, line, cols, row, "seconds", positive=True)
        speedup = parse_float(path, line, cols, row, "speedup_vs_identity",
                              optional=True, positive=True)
        predicted = None
        if "predicted" in row:
            predicted = parse_float(path, line, cols, row, "predicted", optional=True)
        link_load = None
        if "link_load" in row:
            link_load = parse_float(path, line, cols, row, "link_load", optional=True)
        key = (row["kernel"], row["impl"], dim, size)
        if (key, name) in where:
            raise InputError("%s:%d: a second row for %s %s (first on line %d)"
                             % (path, line, name, row_title(key, True),
                                where[(key, name)]))
        where[(key, name)] = line
        out.setdefault(key, {})[name] = (seconds, speedup, predicted, link_load)
    return out


def _json_type(path, where, value, kind):
    ok = {
        "str": isinstance(value, str),
        "int": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool)
                  and math.isfinite(value),
        "number or null": value is None or (
            isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value)),
        "list of integers": isinstance(value, list) and all(
            isinstance(x, int) and not isinstance(x, bool) for x in value),
        "list": isinstance(value, list),
    }[kind]
    if not ok:
        raise InputError("%s: key %s: expected %s, got %s"
                         % (path, where, "a " + kind if kind != "list of integers"
                            else "a list of integers", json.dumps(value)[:60]))
    return value


def read_summary(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise InputError("%s: missing file" % path)
    except (OSError, UnicodeDecodeError) as e:
        raise InputError("%s: cannot read: %s" % (path, e))
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError("%s:%d:%d: invalid JSON: %s"
                         % (path, e.lineno, e.colno, e.msg))
    if not isinstance(doc, dict):
        raise InputError("%s: expected a JSON object at the top" % path)
    top = [("testbed", "str"), ("ranks", "int"), ("grid", "list of integers"),
           ("cost_source", "str"), ("measure_seconds", "number"),
           ("wall_seconds", "number"), ("correlations", "list")]
    for key, kind in top:
        if key not in doc:
            raise InputError("%s: missing key '%s'" % (path, key))
        _json_type(path, "'%s'" % key, doc[key], kind)
    entries = [("kernel", "str"), ("impl", "str"), ("dim", "int"),
               ("bytes", "int"), ("spearman", "number or null"),
               ("orderings", "int"), ("best_measured", "str"),
               ("best_objective", "str")]
    correlations = {}
    for i, c in enumerate(doc["correlations"]):
        where = "correlations[%d]" % i
        if not isinstance(c, dict):
            raise InputError("%s: key %s: expected an object" % (path, where))
        for key, kind in entries:
            if key not in c:
                raise InputError("%s: key %s: missing '%s'" % (path, where, key))
            _json_type(path, "%s.%s" % (where, key), c[key], kind)
        k = (c["kernel"], c["impl"], c["dim"], c["bytes"])
        if k in correlations:
            raise InputError("%s: key %s: a second entry for %s"
                             % (path, where, row_title(k, True)))
        correlations[k] = c
    doc["correlations_by_key"] = correlations
    return doc


# ---------------------------------------------------------------- numbers

def average_ranks(values, tolerance=0.0):
    """Ranks 1..n; tied values get the average of the ranks they span. With
    a relative tolerance, sorted values up to (1 + tolerance) times the
    first of a run tie with it."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and (
                values[order[j + 1]] == values[order[i]] or
                values[order[j + 1]] <= values[order[i]] * (1.0 + tolerance)):
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def spearman(xs, ys, y_tolerance=0.0):
    """Spearman's rho with average ranks for ties (the Pearson correlation
    of the ranks); None for fewer than 2 points or a constant side.
    y_tolerance: ys within that relative difference count as ties (times
    too close to order)."""
    if len(xs) != len(ys) or len(xs) < 2:
        return None
    rx, ry = average_ranks(xs), average_ranks(ys, y_tolerance)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    rho = sxy / math.sqrt(sxx * syy)
    return max(-1.0, min(1.0, rho))


def tie_groups(names, values):
    """Groups (lists of names, in input order) of two or more equal values."""
    groups = {}
    for n, v in zip(names, values):
        groups.setdefault(v, []).append(n)
    return [g for g in groups.values() if len(g) > 1]


def verdict(rho, names, objectives, seconds):
    """(text, causes): the plain-words verdict of one Spearman row."""
    n = len(names)
    noisy = n >= 2 and max(seconds) / min(seconds) - 1.0 < NOISE_SPREAD
    spread = (max(seconds) / min(seconds) - 1.0) if n >= 2 else 0.0
    if rho is not None and rho >= AGREE_RHO and n >= MIN_ORDERINGS:
        if noisy:
            return ("agrees (caveat: measured times within 5%% of each other, "
                    "spread %.1f%%, so the ranking may be noise)" % (100 * spread),
                    [])
        return "agrees", []
    causes = []
    if n < MIN_ORDERINGS:
        causes.append("fewer than %d orderings (%d)" % (MIN_ORDERINGS, n))
    if noisy:
        causes.append("measured times within 5%% of each other (spread %.1f%%): "
                      "the ranking is noise" % (100 * spread))
    for values, all_equal, tied in ((objectives, "all objectives equal", "objective ties: "),
                                    (seconds, "all measured times equal", "measured ties: ")):
        if n >= 2 and len(set(values)) == 1:
            causes.append(all_equal)
        else:
            ties = tie_groups(names, values)
            if ties:
                causes.append(tied + "; ".join(" = ".join(g) for g in ties))
    if n >= MIN_ORDERINGS and len(set(objectives)) > 1:
        # Where the model goes wrong: the fastest ordering's place among
        # the predictions.
        fastest = min(range(n), key=lambda i: seconds[i])
        place = 1 + sum(1 for v in objectives if v < objectives[fastest])
        if place > 1:
            causes.append("the fastest measured, %s, is predicted %d of %d"
                          % (names[fastest], place, n))
    if not causes and rho is None:
        causes.append("rho undefined")
    text = "does not agree"
    if causes:
        text += ": " + "; ".join(causes)
    return text, causes


# ---------------------------------------------------------------- formatting

def fmt_bytes(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            v = n / scale
            return ("%d %s" % (v, unit)) if n % scale == 0 else ("%.3g %s" % (v, unit))
    return "%d B" % n


def fmt_seconds(s):
    if s is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale:
            return "%.4g %s" % (s / scale, unit)
    if s == 0:
        return "0 s"
    return "%.4g ns" % (s / 1e-9)


def fmt_num(v, spec="%.4g"):
    return "—" if v is None else spec % v


def fmt_rho(v):
    if v is None:
        return "—"
    v = round(v, 3)
    return "%.3f" % (0.0 if v == 0 else v)


def fmt_speedup(v):
    return "—" if v is None else "%.2f×" % v


def is_matmul(kernel, dim):
    return kernel in MATMUL_KERNELS


def fmt_dim(dim):
    """A fibre collective's dimension; -1: every dimension in turn."""
    return "all dims" if dim < 0 else "dim %d" % dim


def row_title(key, with_impl):
    """'allreduce dim 1, 1 MiB', 'mm3d n=512' (impl after the kernel when
    asked: 'allreduce native dim 1, 1 MiB')."""
    if len(key) == 4:
        kernel, impl, dim, size = key
    else:
        (kernel, dim, size), impl = key, None
    name = kernel + (" " + impl if with_impl and impl else "")
    if is_matmul(kernel, dim):
        return "%s n=%d" % (name, size)
    return "%s %s, %s" % (name, fmt_dim(dim), fmt_bytes(size))


def kernel_sort_key(key):
    kernel = key[0]
    rank = KNOWN_KERNELS.index(kernel) if kernel in KNOWN_KERNELS else len(KNOWN_KERNELS)
    return (rank, kernel) + tuple(key[1:])


def impl_sort_key(impl):
    order = list(IMPL_COLOURS)
    return (order.index(impl) if impl in order else len(order), impl)


def md_escape(text):
    return text.replace("|", "\\|").replace("\n", " ")


# ---------------------------------------------------------------- analysis

class Data:
    def __init__(self, out):
        self.out = out
        self.orderings = read_orderings(os.path.join(out, "orderings.csv"))
        self.by_name = {o["name"]: o for o in self.orderings}
        self.names = [o["name"] for o in self.orderings]
        self.kernels = read_kernels(os.path.join(out, "kernels.csv"), self.orderings)
        self.summary = read_summary(os.path.join(out, "summary.json"))
        self.rows = sorted(self.kernels, key=kernel_sort_key)  # with impl
        groups = {}
        for k in self.rows:
            groups.setdefault((k[0], k[2], k[3]), []).append(k[1])
        self.groups = sorted(groups, key=kernel_sort_key)  # without impl
        self.group_impls = {g: sorted(v, key=impl_sort_key) for g, v in groups.items()}
        self.impls = sorted({k[1] for k in self.rows}, key=impl_sort_key)
        self._speedups()
        self._correlations()

    def _speedups(self):
        """speedup[key][ordering]: the CSV's value, else identity's seconds
        over this one's; warns when the CSV disagrees with that by > 1%."""
        self.speedup = {}
        for key in self.rows:
            cells = self.kernels[key]
            base = cells.get("identity", (None, None, None))[0]
            out = {}
            for name, (secs, given, _, _) in cells.items():
                mine = base / secs if base is not None else None
                if given is not None and mine is not None and \
                        abs(given / mine - 1.0) > 0.01:
                    warn("kernels.csv: %s %s: speedup_vs_identity %.4g but "
                         "identity's seconds / this one's is %.4g"
                         % (name, row_title(key, True), given, mine))
                out[name] = given if given is not None else mine
            self.speedup[key] = out

    def _correlations(self):
        """One entry per row of kernels.csv or summary.json's correlations:
        the summary's and the recomputed rho, the verdict and notes."""
        by_key = self.summary["correlations_by_key"]
        self.corr = []
        for key in sorted(set(self.rows) | set(by_key), key=kernel_sort_key):
            s = by_key.get(key)
            c = {"key": key, "summary": s, "notes": []}
            if key in self.kernels:
                cells = self.kernels[key]
                # The row's own prediction where kernels.csv gives one.
                def predicted(n):
                    given = cells[n][2]
                    return given if given is not None else self.by_name[n]["objective"]
                names = [n for n in self.names
                         if n in cells and self.by_name[n]["ok"] and predicted(n) is not None]
                objs = [predicted(n) for n in names]
                secs = [cells[n][0] for n in names]
                c.update(names=names, objectives=objs, seconds=secs,
                         computed=spearman(objs, secs), n=len(names))
                c["best_measured"] = min(names, key=lambda n: cells[n][0]) if names else ""
                loads = [cells[n][3] for n in names]
                c["links_rho"] = (spearman(loads, secs)
                                  if names and None not in loads else None)
                c["best_objective"] = min(names, key=predicted) if names else ""
            else:
                c.update(names=None, computed=None, n=s["orderings"], links_rho=None)
                c["notes"].append("not in kernels.csv")
                warn("summary.json: correlation for %s has no rows in kernels.csv"
                     % row_title(key, True))
            if s is not None:
                rho = s["spearman"]
                if c["names"] is not None:
                    # null is "not given" (the recomputed rho stands in),
                    # not a disagreement.
                    if rho is not None and (c["computed"] is None or
                                            abs(rho - c["computed"]) > 5e-3):
                        c["notes"].append("summary.json says rho %s, recomputed %s"
                                          % (fmt_rho(rho), fmt_rho(c["computed"])))
                        warn("%s: summary.json's spearman %s, recomputed from the "
                             "CSVs %s" % (row_title(key, True), fmt_rho(rho),
                                          fmt_rho(c["computed"])))
                    if s["orderings"] != c["n"]:
                        c["notes"].append("summary.json counts %d orderings, the "
                                          "CSVs %d" % (s["orderings"], c["n"]))
                        warn("%s: summary.json counts %d orderings, the CSVs %d"
                             % (row_title(key, True), s["orderings"], c["n"]))
                c["rho"] = rho if rho is not None else c["computed"]
                c["rho_source"] = "summary" if rho is not None else "computed"
                if s["best_measured"]:
                    c["best_measured"] = s["best_measured"]
                if s["best_objective"]:
                    c["best_objective"] = s["best_objective"]
            else:
                c["rho"] = c["computed"]
                c["rho_source"] = "computed"
            c.setdefault("best_measured", "")
            c.setdefault("best_objective", "")
            if c["names"] is not None:
                c["verdict"], c["causes"] = verdict(c["rho"], c["names"],
                                                    c["objectives"], c["seconds"])
            else:
                rho = c["rho"]
                if rho is not None and rho >= AGREE_RHO and c["n"] >= MIN_ORDERINGS:
                    c["verdict"], c["causes"] = "agrees", []
                elif c["n"] < MIN_ORDERINGS:
                    c["verdict"] = "does not agree: fewer than %d orderings (%d)" % (
                        MIN_ORDERINGS, c["n"])
                    c["causes"] = [c["verdict"]]
                else:
                    c["verdict"], c["causes"] = "does not agree", []
            links = c["links_rho"]
            noise = any(cause.startswith("measured times within") for cause in c["causes"])
            if (c["verdict"].startswith("does not agree") and links is not None
                    and links >= AGREE_RHO and c["n"] >= MIN_ORDERINGS and not noise):
                cause = ("the link load ranks them with rho %s: contention on links "
                         "that nodes or racks share, which pair costs do not see"
                         % fmt_rho(links))
                c["causes"].append(cause)
                c["verdict"] += ("; " if ":" in c["verdict"] else ": ") + cause
            self.corr.append(c)


# ---------------------------------------------------------------- plots

def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _grid(n, panel_width):
    ncols = max(1, min(n, 2 if panel_width > 6 else 3 if n <= 9 else 4))
    nrows = (n + ncols - 1) // ncols
    return ncols, nrows


def _empty_figure(plt, path, text):
    fig = plt.figure(figsize=(6, 2))
    fig.text(0.5, 0.5, text, ha="center", va="center", fontsize=12)
    fig.savefig(path, format="png", dpi=100)
    plt.close(fig)


def _seconds_axis(ax, log):
    """The y axis in seconds, engineering units (2 ms, 500 µs); on a log
    scale ticks at 1, 2 and 5 of every decade so that short ranges still get
    labels."""
    from matplotlib.ticker import EngFormatter, LogLocator, NullFormatter
    if log:
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(EngFormatter(unit="s", sep=" "))


def _wants_log(values):
    values = [v for v in values if v is not None and v > 0]
    return len(values) >= 2 and max(values) / min(values) > LOG_SPREAD


def plot_time(data, path):
    plt = _pyplot()
    if not data.groups:
        _empty_figure(plt, path, "no kernel measurements")
        return
    names = data.names
    panel_w = max(4.0, 1.2 + 0.55 * len(names) * max(1, len(data.impls)) ** 0.5)
    ncols, nrows = _grid(len(data.groups), panel_w)
    fig, axes = plt.subplots(nrows, ncols, figsize=(panel_w * ncols, 3.8 * nrows + 0.6),
                             squeeze=False)
    handles = {}
    for i, g in enumerate(data.groups):
        ax = axes[i // ncols][i % ncols]
        impls = data.group_impls[g]
        width = 0.8 / len(impls)
        values = []
        for j, impl in enumerate(impls):
            cells = data.kernels[(g[0], impl, g[1], g[2])]
            xs = [x for x, n in enumerate(names) if n in cells]
            ys = [cells[names[x]][0] for x in xs]
            values += ys
            colour = IMPL_COLOURS.get(impl, "C%d" % (j + 2))
            bars = ax.bar([x - 0.4 + width * (j + 0.5) for x in xs], ys, width,
                          color=colour, label=impl)
            handles.setdefault(impl, bars)
        _seconds_axis(ax, _wants_log(values))
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels([n if data.by_name[n]["ok"] else n + "\n(skipped)"
                            for n in names], rotation=40, ha="right", fontsize=8)
        ax.set_xlim(-0.6, len(names) - 0.4)
        ax.set_title(row_title(g, False), fontsize=10)
        ax.set_ylabel("seconds (slowest rank, median)", fontsize=8)
        ax.tick_params(axis="y", labelsize=8)
        ax.grid(axis="y", alpha=0.3)
    for i in range(len(data.groups), nrows * ncols):
        axes[i // ncols][i % ncols].axis("off")
    height = 3.8 * nrows + 0.6
    fig.tight_layout()
    # A band of 0.6 inch on top for the title and the legend beside it.
    fig.subplots_adjust(top=1 - 0.6 / height)
    fig.legend([handles[k] for k in data.impls], data.impls, loc="upper right",
               bbox_to_anchor=(1 - 0.01, 1 - 0.08 / height), ncol=len(data.impls),
               fontsize=9)
    fig.text(0.01, 1 - 0.15 / height, "Time per ordering", fontsize=12, va="top")
    fig.savefig(path, format="png", dpi=100)
    plt.close(fig)


def plot_scatter(data, path):
    plt = _pyplot()
    rows = [c for c in data.corr if c["names"] is not None]
    if not rows:
        _empty_figure(plt, path, "no kernel measurements")
        return
    ncols, nrows = _grid(len(rows), 4.6)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.9 * nrows),
                             squeeze=False)
    for i, c in enumerate(rows):
        ax = axes[i // ncols][i % ncols]
        xs, ys = c["objectives"], c["seconds"]
        ax.scatter(xs, ys, color=IMPL_COLOURS.get(c["key"][1], "C2"), zorder=3)
        points = {}
        for n, x, y in zip(c["names"], xs, ys):
            points.setdefault((x, y), []).append(n)
        for (x, y), ns in points.items():
            ax.annotate(", ".join(ns), (x, y), xytext=(4, 3),
                        textcoords="offset points", fontsize=7)
        if _wants_log(xs):
            ax.set_xscale("log")
        _seconds_axis(ax, _wants_log(ys))
        ax.margins(x=0.25, y=0.15)
        rho = c["rho"]
        rho_text = ("ρ = %s" % fmt_rho(rho)) if rho is not None else "ρ undefined"
        if c["rho_source"] == "computed" and rho is not None:
            rho_text += " (computed)"
        ax.set_title("%s\n%s, n = %d" % (row_title(c["key"], True), rho_text, c["n"]),
                     fontsize=9)
        ax.set_xlabel("predicted cost (row's prediction, else objective)", fontsize=8)
        ax.set_ylabel("seconds", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for i in range(len(rows), nrows * ncols):
        axes[i // ncols][i % ncols].axis("off")
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
    plt.close(fig)


def plot_speedup(data, path):
    """A heat-map table: rows (kernel, impl, dim, bytes), columns orderings,
    cells the speed-up over identity (green faster, red slower, grey none)."""
    plt = _pyplot()
    import numpy as np
    if not data.rows:
        _empty_figure(plt, path, "no kernel measurements")
        return
    names = data.names
    values = np.full((len(data.rows), len(names)), np.nan)
    for r, key in enumerate(data.rows):
        for col, n in enumerate(names):
            v = data.speedup[key].get(n)
            if v is not None:
                values[r, col] = math.log2(v)
    finite = values[np.isfinite(values)]
    limit = max(float(np.max(np.abs(finite))) if finite.size else 0.0, math.log2(1.25))
    cmap = plt.get_cmap("RdYlGn").copy()
    cmap.set_bad("#dddddd")
    fig, ax = plt.subplots(figsize=(2.8 + 0.95 * len(names), 1.4 + 0.42 * len(data.rows)))
    image = ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=-limit,
                      vmax=limit, aspect="auto")
    for r, key in enumerate(data.rows):
        for col, n in enumerate(names):
            v = data.speedup[key].get(n)
            if v is None:
                text = "skipped" if not data.by_name[n]["ok"] else "—"
            else:
                text = "%.2f×" % v
            ax.text(col, r, text, ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=40, ha="right", fontsize=8)
    ax.set_yticks(range(len(data.rows)))
    ax.set_yticklabels([row_title(k, True) for k in data.rows], fontsize=8)
    ax.set_xticks([x - 0.5 for x in range(1, len(names))], minor=True)
    ax.set_yticks([y - 0.5 for y in range(1, len(data.rows))], minor=True)
    ax.grid(which="minor", color="white", linewidth=1.5)
    ax.tick_params(which="minor", length=0)
    ax.set_title("Speed-up over identity (identity's seconds / this ordering's)",
                 fontsize=10)
    bar = fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02)
    if limit < 1.0:  # within 2x: ticks in between
        nice = [1 / 2, 2 / 3, 0.8, 1, 1.25, 1.5, 2]
    else:
        nice = [1 / 16, 1 / 8, 1 / 4, 1 / 2, 1, 2, 4, 8, 16]
    ticks = [math.log2(v) for v in nice if abs(math.log2(v)) <= limit + 1e-9]
    bar.set_ticks(ticks)
    bar.set_ticklabels(["%.3g×" % (2 ** t) for t in ticks])
    bar.ax.tick_params(labelsize=7)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
    plt.close(fig)


# ---------------------------------------------------------------- report

def table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(md_escape(str(x)) for x in r) + " |")
    return lines


def heatmaps(data):
    """heatmap-*.png in OUT: orderings.csv's order, then the others by name."""
    files = [os.path.basename(p) for p in glob.glob(os.path.join(data.out, "heatmap-*.png"))]
    def key(f):
        n = f[len("heatmap-"):-len(".png")]
        return (data.names.index(n) if n in data.names else len(data.names), f)
    return sorted(files, key=key)


def write_report(data, path):
    s = data.summary
    out = ["# Ordering comparison: %s" % md_escape(s["testbed"]), ""]
    out += table(["", ""], [
        ("Testbed", s["testbed"]),
        ("Ranks", s["ranks"]),
        ("Grid", " x ".join(str(q) for q in s["grid"])),
        ("Cost source", s["cost_source"]),
        ("Measurement of the costs", "%.3g s (MPI_Wtime: simulated under SMPI)"
         % s["measure_seconds"]),
        ("Run (compare)", "%.3g s of real time" % s["wall_seconds"]),
    ])
    out += ["", "## Orderings", "",
            "Objective: the model's predicted cost of the grid's fibres under the "
            "ordering (lower is better).", ""]
    rows = []
    for o in data.orderings:
        limited = "" if o["limited"] is None else ("yes" if o["limited"] else "no")
        rows.append((o["name"], o["algorithm"], o["status"], fmt_num(o["objective"]),
                     fmt_num(o["ratio"], "%.3f"), fmt_seconds(o["relabel"]), limited))
    out += table(["ordering", "algorithm", "status", "objective", "vs identity",
                  "relabel", "time-limited"], rows)

    out += ["", "## Kernels", "",
            "Seconds: median over repetitions of the slowest rank; speed-up: "
            "identity's seconds / this ordering's. Bold: the fastest ordering of "
            "the column.", ""]
    if not data.groups:
        out += ["No kernel measurements.", ""]
    for g in data.groups:
        impls = data.group_impls[g]
        header = ["ordering"]
        for impl in impls:
            header += [impl, impl + " speed-up"]
        best = {}
        for impl in impls:
            cells = data.kernels[(g[0], impl, g[1], g[2])]
            best[impl] = min(cells, key=lambda n: cells[n][0])
        rows = []
        for n in data.names:
            row, any_cell = [n], False
            for impl in impls:
                key = (g[0], impl, g[1], g[2])
                cell = data.kernels[key].get(n)
                if cell is None:
                    row += ["skipped" if not data.by_name[n]["ok"] else "—", ""]
                    continue
                any_cell = True
                secs = fmt_seconds(cell[0])
                row += ["**%s**" % secs if best[impl] == n else secs,
                        fmt_speedup(data.speedup[key].get(n))]
            if any_cell or not data.by_name[n]["ok"]:
                rows.append(row)
        out += ["### %s" % row_title(g, False), ""] + table(header, rows) + [""]

    out += ["## Predicted against measured", "",
            "Spearman's rank correlation between the predicted cost (kernels.csv's "
            "predicted column: for a fibre collective the worst fibre cost of its "
            "dimension; else the ordering's objective) and the measured "
            "seconds over the orderings that ran (ties get average ranks). "
            "rho: summary.json's, or recomputed when it has none; recomputed: "
            "from the CSVs. Verdict: \"agrees\" when rho >= %.1f over at least %d "
            "orderings, otherwise \"does not agree\" with the causes that can be "
            "detected (fewer than %d orderings, measured times within %d%% of "
            "each other, ties). Link load: the rho of the load on links that "
            "nodes or racks share (kernels.csv's link_load: what every fibre of "
            "the dimension sends through them at once), when it is given." % (
                AGREE_RHO, MIN_ORDERINGS, MIN_ORDERINGS, round(100 * NOISE_SPREAD)), ""]
    rows = []
    for c in data.corr:
        kernel, impl, dim, size = c["key"]
        matmul = is_matmul(kernel, dim)
        text = c["verdict"]
        if c["notes"]:
            text += " (note: %s)" % "; ".join(c["notes"])
        rows.append((kernel, impl, "—" if matmul else ("all" if dim < 0 else dim),
                     ("n=%d" % size) if matmul else fmt_bytes(size), c["n"],
                     fmt_rho(c["rho"]), fmt_rho(c["computed"]), fmt_rho(c["links_rho"]),
                     c["best_measured"], c["best_objective"], text))
    if rows:
        out += table(["kernel", "impl", "dim", "size", "orderings", "rho",
                      "recomputed", "link load rho", "best measured", "best objective",
                      "verdict"], rows)
    else:
        out += ["No correlations."]
    out += ["", "## Plots", "",
            "Time per ordering (bars per implementation; log scale where the "
            "times spread over more than 10x):", "",
            "![Time per ordering](time_per_ordering.png)", "",
            "Objective against measured seconds, one panel per kernel row:", "",
            "![Predicted against measured](predicted_vs_measured.png)", "",
            "Speed-up over identity (green faster, red slower, grey not run):", "",
            "![Speed-up over identity](speedup.png)", ""]
    maps = heatmaps(data)
    if maps:
        out += ["## Heat maps", ""]
        for f in maps:
            out += ["### %s" % f[len("heatmap-"):-len(".png")], "",
                    "![%s](%s)" % (f, f), ""]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out).rstrip("\n") + "\n")


# ---------------------------------------------------------------- main

def write_outputs(data):
    writers = {"time_per_ordering.png": plot_time,
               "predicted_vs_measured.png": plot_scatter,
               "speedup.png": plot_speedup,
               "report.md": write_report}
    mask = os.umask(0)
    os.umask(mask)
    temps = []
    try:
        for name in OUTPUTS:
            fd, tmp = tempfile.mkstemp(dir=data.out, prefix="." + name + ".",
                                       suffix=".tmp")
            os.close(fd)
            temps.append((tmp, os.path.join(data.out, name)))
            writers[name](data, tmp)
            os.chmod(tmp, 0o666 & ~mask)
        for tmp, final in temps:
            os.replace(tmp, final)
        temps = []
    finally:
        for tmp, _ in temps:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print("usage: harness_plot.py OUT", file=sys.stderr)
        return 1 if len(argv) != 2 else 0
    out = argv[1]
    if not os.path.isdir(out):
        print("harness_plot: %s: not a directory" % out, file=sys.stderr)
        return 1
    try:
        data = Data(out)
    except InputError as e:
        print("harness_plot: %s" % e, file=sys.stderr)
        return 1
    try:
        write_outputs(data)
    except Exception as e:  # no partial output: the temporaries are gone
        print("harness_plot: %s: writing the outputs failed: %s: %s"
              % (out, type(e).__name__, e), file=sys.stderr)
        return 1
    for name in OUTPUTS:
        print(os.path.join(out, name))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
