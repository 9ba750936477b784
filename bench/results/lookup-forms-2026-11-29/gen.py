#!/usr/bin/env python3
# Generates pgbench scripts for the lookup floor candidates.
import subprocess, random, os, re, sys, json
V1, V2 = "mirrorql_same_v1", "mirrorql_same_v2"
COLS = "consensus_timestamp, message, running_hash, sequence_number, running_hash_version, chunk_num, chunk_total, payer_account_id, valid_start_timestamp, topic_id, initial_transaction_id"
COLSM = ", ".join("m." + c.strip() for c in COLS.split(","))
def q(db, sql):
    out = subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", db, "-AtF", "|", "-c", sql], check=True, capture_output=True, text=True).stdout
    return [l.split("|") for l in out.strip().split("\n") if l]
topic, n = map(int, q(V2, "select topic_id, max(upper(sequence_number_range)) - 1 from topic_message_lookup group by 1 order by 2 desc limit 1")[0])
def parts(table):
    ps = []
    for name, b in q(V2, f"select c.relname, pg_get_expr(c.relpartbound, c.oid) from pg_inherits i join pg_class c on c.oid=i.inhrelid where i.inhparent='{table}'::regclass"):
        m = re.match(r"FOR VALUES FROM \('?(-?\d+|MINVALUE)'?\) TO \('?(-?\d+|MAXVALUE)'?\)", b)
        if not m: continue
        lo = -2**63 if m.group(1) == "MINVALUE" else int(m.group(1))
        hi = 2**63-1 if m.group(2) == "MAXVALUE" else int(m.group(2))
        ps.append((lo, hi, name))
    return sorted(ps)
mparts, tparts = parts("topic_message"), parts("transaction")
def find(ps, ts):
    for lo, hi, name in ps:
        if lo <= ts < hi: return (lo, hi, name)
    raise Exception("no partition for %d" % ts)
def within(p, col):
    lo, hi, _ = p; s = ""
    if lo != -2**63: s += f" AND {col} >= {lo}"
    if hi != 2**63-1: s += f" AND {col} < {hi}"
    return s
rng = random.Random(48)
NS = 8
out = "/tmp/wtfloor/scripts"
os.makedirs(out, exist_ok=True)
meta = {"topic": topic, "n": n, "mparts": len(mparts), "tparts": len(tparts)}
def arr(xs): return "{" + ",".join(map(str, xs)) + "}"
for k in (1, 4, 8):
    sets = []
    for s in range(NS):
        seqs = rng.sample(range(1, n + 1), k)
        rows = dict((int(a), int(b)) for a, b in q(V1, f"select sequence_number, consensus_timestamp from topic_message where topic_id={topic} and sequence_number = any('{arr(seqs)}')"))
        sets.append([(sq, rows[sq]) for sq in seqs])
    forms = {}
    def put(form, i, body, defs=None):
        forms.setdefault(form, []).append((body, defs or {}))
    for i, keys in enumerate(sets):
        seqs = [a for a, _ in keys]; tss = [b for _, b in keys]
        # v1
        if k == 1:
            put("seq_v1", i, f"SELECT {COLS} FROM topic_message WHERE topic_id = {topic} AND sequence_number = {seqs[0]};")
            put("ts_v1", i, f"SELECT {COLSM} FROM transaction AS t JOIN topic_message AS m ON m.topic_id = t.entity_id AND m.consensus_timestamp = t.consensus_timestamp WHERE t.consensus_timestamp = {tss[0]} AND t.result = 22 AND t.type = 27 LIMIT 2;")
        else:
            put("seq_v1", i, f"SELECT {COLSM} FROM unnest('{arr([topic]*k)}'::bigint[], '{arr(seqs)}'::bigint[]) AS k(topic_id, sequence_number) JOIN topic_message AS m ON m.topic_id = k.topic_id AND m.sequence_number = k.sequence_number;")
            put("ts_v1", i, f"SELECT {COLSM} FROM unnest('{arr(tss)}'::bigint[]) AS k(consensus_timestamp) JOIN transaction AS t ON t.consensus_timestamp = k.consensus_timestamp JOIN topic_message AS m ON m.topic_id = t.entity_id AND m.consensus_timestamp = t.consensus_timestamp WHERE t.result = 22 AND t.type = 27;")
        # v2 current: by seq, grouped by partition
        groups = {}
        for sq, ts in keys:
            groups.setdefault(find(mparts, ts), []).append(sq)
        stmts = []
        for p, sqs in groups.items():
            if len(sqs) == 1:
                stmts.append(f"SELECT {COLS} FROM topic_message WHERE topic_id = {topic} AND sequence_number = {sqs[0]}{within(p, 'consensus_timestamp')};")
            else:
                stmts.append(f"SELECT {COLSM} FROM unnest('{arr([topic]*len(sqs))}'::bigint[], '{arr(sqs)}'::bigint[]) AS k(topic_id, sequence_number) JOIN topic_message AS m ON m.topic_id = k.topic_id AND m.sequence_number = k.sequence_number{within(p, 'm.consensus_timestamp')};")
        body = "\n".join(stmts)
        if len(stmts) > 1: body = "\\startpipeline\n" + body + "\n\\endpipeline"
        put("seq_v2cur", i, body)
        stmts = []
        for ts in tss:
            tp, mp = find(tparts, ts), find(mparts, ts)
            stmts.append(f"SELECT {COLSM} FROM transaction AS t JOIN topic_message AS m ON m.topic_id = t.entity_id AND m.consensus_timestamp = t.consensus_timestamp{within(mp, 'm.consensus_timestamp')} WHERE t.consensus_timestamp = {ts}{within(tp, 't.consensus_timestamp')} AND t.result = 22 AND t.type = 27 LIMIT 2;")
        body = "\n".join(stmts)
        if len(stmts) > 1: body = "\\startpipeline\n" + body + "\n\\endpipeline"
        put("ts_v2cur", i, body)
        if k == 1: continue
        # v1 with parameters (as the service sends it)
        put("seq_v1p", i, f"SELECT {COLSM} FROM unnest(:t{i}::bigint[], :s{i}::bigint[]) AS k(topic_id, sequence_number) JOIN topic_message AS m ON m.topic_id = k.topic_id AND m.sequence_number = k.sequence_number;",
            {f"t{i}": arr([topic]*k), f"s{i}": arr(seqs)})
        put("ts_v1p", i, f"SELECT {COLSM} FROM unnest(:ts{i}::bigint[]) AS k(consensus_timestamp) JOIN transaction AS t ON t.consensus_timestamp = k.consensus_timestamp JOIN topic_message AS m ON m.topic_id = t.entity_id AND m.consensus_timestamp = t.consensus_timestamp WHERE t.result = 22 AND t.type = 27;",
            {f"ts{i}": arr(tss)})
        # A: unnest of (topic, seq, lo, hi), lateral read of the parent bounded per key
        los = [find(mparts, ts)[0] for ts in tss]; his = [find(mparts, ts)[1] for ts in tss]
        put("seq_lateral", i, f"SELECT {COLSM} FROM unnest(:t{i}::bigint[], :s{i}::bigint[], :lo{i}::bigint[], :hi{i}::bigint[]) AS k(topic_id, sequence_number, lo, hi) CROSS JOIN LATERAL (SELECT {COLS} FROM topic_message WHERE topic_id = k.topic_id AND sequence_number = k.sequence_number AND consensus_timestamp >= k.lo AND consensus_timestamp < k.hi) AS m;",
            {f"t{i}": arr([topic]*k), f"s{i}": arr(seqs), f"lo{i}": arr(los), f"hi{i}": arr(his)})
        # A2: fixed arity 8, OR of (seq, bounds) arms, padded with the last key
        pk = list(zip(seqs, los, his)); pk += [pk[-1]] * (8 - len(pk))
        arms = " OR ".join(f"(sequence_number = :s{i}_{j} AND consensus_timestamp >= :lo{i}_{j} AND consensus_timestamp < :hi{i}_{j})" for j in range(8))
        d = {f"t{i}": topic}
        for j, (a, b, c) in enumerate(pk): d[f"s{i}_{j}"], d[f"lo{i}_{j}"], d[f"hi{i}_{j}"] = a, b, c
        put("seq_or8", i, f"SELECT {COLS} FROM topic_message WHERE topic_id = :t{i} AND ({arms});", d)
        # A3: = ANY of the keys' sequence numbers, pruned by an OR of the keys' partitions' bounds (fixed arity 8)
        rarms = " OR ".join(f"(consensus_timestamp >= :lo{i}_{j} AND consensus_timestamp < :hi{i}_{j})" for j in range(8))
        d = {f"t{i}": topic, f"s{i}": arr(seqs)}
        for j, (a, b, c) in enumerate(pk): d[f"lo{i}_{j}"], d[f"hi{i}_{j}"] = b, c
        put("seq_anyor8", i, f"SELECT {COLS} FROM topic_message WHERE topic_id = :t{i} AND sequence_number = ANY(:s{i}::bigint[]) AND ({rarms});", d)
        # B1: lateral by timestamp, the key prunes both tables
        put("ts_lateral", i, f"SELECT {COLSM} FROM unnest(:ts{i}::bigint[]) AS k(ts) CROSS JOIN LATERAL (SELECT {COLSM} FROM transaction AS t JOIN topic_message AS m ON m.topic_id = t.entity_id AND m.consensus_timestamp = t.consensus_timestamp AND m.consensus_timestamp = k.ts WHERE t.consensus_timestamp = k.ts AND t.result = 22 AND t.type = 27 LIMIT 2) AS m;",
            {f"ts{i}": arr(tss)})
        # B2: = ANY($1) on both parents
        put("ts_any", i, f"SELECT {COLSM} FROM transaction AS t JOIN topic_message AS m ON m.topic_id = t.entity_id AND m.consensus_timestamp = t.consensus_timestamp AND m.consensus_timestamp = ANY(:ts{i}::bigint[]) WHERE t.consensus_timestamp = ANY(:ts{i}::bigint[]) AND t.result = 22 AND t.type = 27;",
            {f"ts{i}": arr(tss)})
        # B3: fixed arity 8 IN list of parameters, padded with the last key
        pt = tss + [tss[-1]] * (8 - len(tss))
        lst = ", ".join(f":ts{i}_{j}" for j in range(8))
        d = {f"ts{i}_{j}": v for j, v in enumerate(pt)}
        put("ts_in8", i, f"SELECT {COLSM} FROM transaction AS t JOIN topic_message AS m ON m.topic_id = t.entity_id AND m.consensus_timestamp = t.consensus_timestamp AND m.consensus_timestamp IN ({lst}) WHERE t.consensus_timestamp IN ({lst}) AND t.result = 22 AND t.type = 27;", d)
    for form, scripts in forms.items():
        dd = f"{out}/{form}_k{k}"
        os.makedirs(dd, exist_ok=True)
        defs = {}
        for i, (body, d) in enumerate(scripts):
            open(f"{dd}/s{i}.sql", "w").write(body + "\n")
            defs.update(d)
        open(f"{dd}/defs", "w").write("\n".join(f"{a}={b}" for a, b in defs.items()) + ("\n" if defs else ""))
        meta[f"{form}_k{k}"] = sum(b.count(";") for b, _ in scripts) / len(scripts)
json.dump(meta, open(f"{out}/meta.json", "w"), indent=1)
print(meta)
