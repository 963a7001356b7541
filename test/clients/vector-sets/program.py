"""A program written for Redis 8 vector sets with redis-py, unchanged whatever it talks to.

Debian's python3-redis is 4.3.4, older than redis-py's vector-set commands (r.vset(), redis-py 6), so the
program sends them with execute_command, as a program for that version would; RESP2 (redis-py 4 has no
RESP3). Usage: python3 program.py <port>; prints one line per call. test/clients/vector-sets.test.ts
runs it against the dev stack's vector side port and compares with its output against Redis 8.8.0.
"""
import json
import struct
import sys

import redis

r = redis.Redis(host="127.0.0.1", port=int(sys.argv[1]))


def show(label, value):
    def plain(v):
        if isinstance(v, bytes):
            try:
                return v.decode()
            except UnicodeDecodeError:
                return v.hex()
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v

    print(label, json.dumps(plain(value)))


DOCS = [
    ("d1", [0.9, 0.1, 0.3, 0.7, 0.2, 0.8, 0.1, 0.4], {"lang": "en", "words": 120, "score": 0.5}),
    ("d2", [0.8, 0.2, 0.4, 0.6, 0.1, 0.9, 0.2, 0.3], {"lang": "fr", "words": 300, "score": 0.75}),
    ("d3", [0.1, 0.9, 0.8, 0.2, 0.7, 0.1, 0.6, 0.2], {"lang": "en", "words": 80, "score": 0.25}),
    ("d4", [0.2, 0.8, 0.9, 0.1, 0.6, 0.3, 0.7, 0.1], {"lang": "de", "words": 1000, "score": 1.0}),
    ("d5", [0.7, 0.3, 0.2, 0.8, 0.3, 0.7, 0.2, 0.5], {"lang": "en", "words": 450, "score": 0.9}),
]
QUERY = [0.85, 0.15, 0.3, 0.7, 0.15, 0.85, 0.1, 0.4]


def values(v):
    return ["VALUES", len(v), *v]


try:
    r.delete("docs")
    for name, vector, attrs in DOCS:
        show("VADD " + name, r.execute_command("VADD", "docs", "REDUCE", 4, *values(vector), name, "Q8", "SETATTR", json.dumps(attrs)))
    # FP32: the vector as little-endian float32 bytes.
    blob = struct.pack("<8f", *QUERY)
    show("VADD FP32", r.execute_command("VADD", "docs", "REDUCE", 4, "FP32", blob, "d6", "Q8"))
    show("VCARD", r.execute_command("VCARD", "docs"))
    show("VDIM", r.execute_command("VDIM", "docs"))
    info = r.execute_command("VINFO", "docs")
    fields = dict(zip(info[0::2], info[1::2]))
    show("VINFO", [[k, fields[k.encode()]] for k in ["quant-type", "hnsw-m", "vector-dim", "projection-input-dim", "size", "attributes-count"]])
    show("VSIM", r.execute_command("VSIM", "docs", *values(QUERY), "COUNT", 3))
    show("VSIM FILTER arithmetic", r.execute_command("VSIM", "docs", *values(QUERY), "FILTER", ".words / 100 + .score * 4 > 5"))
    show("VSIM FILTER not", r.execute_command("VSIM", "docs", *values(QUERY), "FILTER", 'not (.lang == "en") || .words % 40 == 0'))
    show("VSIM WITHSCORES", r.execute_command("VSIM", "docs", "FP32", blob, "WITHSCORES", "COUNT", 3))
    show("VSIM WITHATTRIBS", r.execute_command("VSIM", "docs", "ELE", "d2", "WITHATTRIBS", "COUNT", 2))
    show("VEMB", r.execute_command("VEMB", "docs", "d1"))
    show("VEMB RAW", r.execute_command("VEMB", "docs", "d1", "RAW"))
    # The graph's levels are random in Redis; level 0 (the last) of a small set links every other element.
    show("VLINKS level 0", sorted(r.execute_command("VLINKS", "docs", "d1")[-1]))
    links = r.execute_command("VLINKS", "docs", "d1", "WITHSCORES")[-1]
    show("VLINKS WITHSCORES level 0", sorted(zip(links[0::2], links[1::2])))
    show("VISMEMBER", r.execute_command("VISMEMBER", "docs", "d3"))
    show("VREM", r.execute_command("VREM", "docs", "d3"))
    show("VRANGE", r.execute_command("VRANGE", "docs", "-", "+", 10))
    show("VEMB missing", r.execute_command("VEMB", "docs", "nope"))
finally:
    r.delete("docs")
