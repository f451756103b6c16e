#!/bin/bash
# The SMPI platforms and placements of data/platforms are what generate.py
# writes, and every placement fits its platform.
#   platforms_test.sh GENERATE FILE...   (FILE: every .xml and .hostfile)
set -euo pipefail
generate=$1
shift
status=0
python3 "$generate" --check --dir "$(dirname "$generate")" || status=1

# The hosts are parsed here rather than by generate.py's own code, so that a
# bug there cannot hide itself.
python3 - "$@" <<'EOF' || status=1
import collections
import os
import re
import sys
import xml.etree.ElementTree as ET

def hosts_of(path):
    """{host: cores}: clusters expanded as prefix + radical + suffix."""
    hosts = {}
    for elem in ET.parse(path).iter():
        if elem.tag == "cluster":
            for part in re.split(r"[,;]", elem.get("radical")):
                lo, _, hi = part.strip().partition("-")
                for i in range(int(lo), int(hi or lo) + 1):
                    name = elem.get("prefix", "") + str(i) + elem.get("suffix", "")
                    hosts[name] = int(elem.get("core", "1"))
        elif elem.tag == "host":
            hosts[elem.get("id")] = int(elem.get("core", "1"))
    return hosts

def slots_of(path):
    """Counter of host -> ranks: lines are "host" or "host:count"."""
    slots = collections.Counter()
    with open(path) as f:
        for line in f:
            host, _, count = line.strip().partition(":")
            slots[host] += int(count or 1)
    return slots

files = {os.path.basename(p): p for p in sys.argv[1:]}
platforms = collections.defaultdict(dict)
for name in files:
    m = re.fullmatch(r"(.*?)(-rr|-random)?\.hostfile", name)
    if m:
        platforms[m.group(1)][m.group(2) or "block"] = files[name]

errors = []
for platform, placed in sorted(platforms.items()):
    xml = platform + ".xml"
    if xml not in files:
        errors.append("%s: no %s" % (platform, xml))
        continue
    hosts = hosts_of(files[xml])
    if sorted(placed) != ["-random", "-rr", "block"]:
        errors.append("%s: placements %s, not block, -rr and -random" % (platform, sorted(placed)))
    counts = {}
    for kind, path in sorted(placed.items()):
        slots = slots_of(path)
        counts[kind] = sum(slots.values())
        for host, n in sorted(slots.items()):
            if host not in hosts:
                errors.append("%s: host %s is not in %s" % (os.path.basename(path), host, xml))
            elif n > hosts[host]:
                errors.append("%s: %d ranks on %s, which has %d cores"
                              % (os.path.basename(path), n, host, hosts[host]))
    if len(set(counts.values())) != 1:
        errors.append("%s: rank counts differ: %s" % (platform, counts))
for e in errors:
    print("FAIL: " + e, file=sys.stderr)
print("checked the placements of %d platforms" % len(platforms))
sys.exit(1 if errors else 0)
EOF
exit $status
