import sys, collections, statistics
R = collections.defaultdict(list)
for l in open(sys.argv[1]):
    p = l.split()
    if len(p) < 5: continue
    rnd, form, k, mode, tps = p[0], p[1], int(p[2][2:]), p[3], p[4]
    try: R[(form, mode, k)].append(float(tps))
    except ValueError: R[(form, mode, k)].append(float('nan'))
print("| form | plan mode | k | tps (rounds) | keys/s (median) | ÷ v1 | ÷ v2 current |")
print("|---|---|---:|---|---:|---:|---:|")
for (form, mode, k), v in R.items():
    ks = statistics.median(v) * k
    base = form.split("_")[0]
    v1 = statistics.median(R[(base + "_v1", "generic", k)]) * k
    v2 = statistics.median(R[(base + "_v2cur", "generic", k)]) * k
    print(f"| {form} | {mode} | {k} | {', '.join('%.0f' % x for x in v)} | {ks:.0f} | {ks/v1:.3f} | {ks/v2:.3f} |")
