"""Measurement only: memoryd's cold start.

Starts memoryd in a tenant of its own on the Neo4j and Redis of the
environment (NEO4J_URI, REDIS_URL, MNEME_KEY_SECRET, as for the tests), with
the builtin embedder at the tests' dimension, and prints:
  - the seconds from exec to /readyz and to the first successful recall,
    once with the tenant empty and once after a restart with 320 memories;
  - after that restart, the latencies of the first N distinct questions
    (English and Chinese, with and without order numbers) against the same N
    asked again, and how many of the first exceed twice the warm P95.

    go build -o /tmp/cs/ ./cmd/memoryd ./cmd/memctl
    MNEME_BIN=/tmp/cs python3 scripts/coldstart.py [N]

Neo4j's plan cache lives in Neo4j: against a Neo4j that served other Mneme
processes it is warm whatever memoryd does, and only a fresh Neo4j shows
the planning cost of new query shapes. The questions are asked as the
tenant's admin.
"""
import json, os, random, subprocess, sys, time, urllib.request, urllib.error, statistics

ADDR = os.environ.get("COLDSTART_ADDR", "127.0.0.1:18931")
BASE = "http://" + ADDR
BIN = os.environ.get("MNEME_BIN", "bin")
MEMORYD, MEMCTL = os.path.join(BIN, "memoryd"), os.path.join(BIN, "memctl")
LOGS = os.environ.get("COLDSTART_LOGS", "/tmp")
N = int(sys.argv[1]) if len(sys.argv) > 1 else 100
env = dict(os.environ, MNEME_ADDR=ADDR, MNEME_EMBEDDER="builtin", MNEME_EMBED_DIM="256",
           MNEME_LOG_LEVEL="info")

def call(method, path, key, body=None, timeout=60):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(BASE + path, data=data, method=method,
                                 headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.status, json.loads(r.read() or b"null")

load0 = os.getloadavg()
tenant = "coldstart%d" % int(time.time())
out = subprocess.run([MEMCTL, "tenant", "create", tenant], env=env, capture_output=True, text=True, check=True).stdout
key = out.strip().split()[-1]
env["MNEME_QUEUE_PREFIX"] = "mneme-coldstart-" + tenant

def start():
    log = open(os.path.join(LOGS, "memoryd-%s-%d.log" % (tenant, time.time_ns())), "w")
    t0 = time.monotonic()
    p = subprocess.Popen([MEMORYD], env=env, stdout=log, stderr=log)
    ready = first = None
    while first is None:
        if p.poll() is not None:
            sys.exit("memoryd exited: see " + log.name)
        if time.monotonic() - t0 > 120:
            stop(p); sys.exit("no successful recall in 120 s: see " + log.name)
        try:
            if ready is None:
                with urllib.request.urlopen(BASE + "/readyz", timeout=5) as r:
                    if r.status == 200:
                        ready = time.monotonic() - t0
            if ready is not None:
                st, _ = call("POST", "/v1/recall", key, {"user_id": "u0", "query": "What is the budget of u0?"})
                if st == 200:
                    first = time.monotonic() - t0
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.02)
    return p, ready, first, log.name

def stop(p):
    p.terminate(); p.wait(timeout=60)

cities = ["Lyon", "Hangzhou", "Berlin", "Suzhou", "Porto", "Ningbo", "Milan", "Osaka", "Lisbon", "Shenzhen"]
goods = ["office chairs", "label printers", "copy paper", "standing desks", "barcode scanners", "ink cartridges"]
p, ready1, first1, log1 = start()
try:
  call("POST", "/v1/principals", key, {"kind": "agent", "id": "bot", "team": "ops"})
  # Memories to find: 20 users x 15 memories, English and Chinese, with entities.
  for u in range(20):
      batch = []
      for i in range(15):
          c, g = cities[(u + i) % len(cities)], goods[(u * 3 + i) % len(goods)]
          so = "SO-%d" % (5000 + u * 100 + i)
          if i % 3 == 2:
              content = "用户u%d的订单%s：%s发往%s仓库。" % (u, so, g, c)
          else:
              content = "Order %s of user u%d: %d %s shipped to the %s warehouse." % (so, u, 10 + i, g, c)
          batch.append({"user_id": "u%d" % u, "type": "episodic", "content": content,
                        "agent_id": "bot", "entities": [{"id": "order:" + so, "kind": "order", "name": so}]})
      batch.append({"user_id": "u%d" % u, "type": "semantic", "key": "budget", "kind": "budget",
                    "agent_id": "bot", "content": "The procurement budget of u%d is %dk euros." % (u, 100 + u)})
      call("POST", "/v1/memories", key, {"memories": batch})
finally:
  stop(p)

rng = random.Random(7)
templates = ["Where did order SO-%d go?", "订单SO-%d发到哪里了？", "How many %s did u%d order for %s?",
             "What is the budget of u%d?", "u%d的采购预算是多少？", "Which warehouse in %s got the %s?",
             "tell me about %s for u%d", "有没有发往%s的%s？"]
qs, seen = [], set()
while len(qs) < N:
    t = rng.randrange(len(templates)); u = rng.randrange(20)
    c, g = rng.choice(cities), rng.choice(goods); so = 5000 + u * 100 + rng.randrange(15)
    q = [templates[0] % so, templates[1] % so, templates[2] % (g, u, c), templates[3] % u, templates[4] % u,
         templates[5] % (c, g), templates[6] % (g, u), templates[7] % (c, g)][t]
    if q not in seen:
        seen.add(q); qs.append(("u%d" % u, q))

p, ready2, first2, log2 = start()
stages = []
def run():
    lat = []
    for user, q in qs:
        t = time.monotonic()
        st, res = call("POST", "/v1/recall", key, {"user_id": user, "query": q})
        lat.append((time.monotonic() - t) * 1000)
        stages.append((q, res["search"]["stages_ms"]))
    return lat
try:
    cold = run()
    warm = run()
finally:
    stop(p)
p95 = lambda xs: sorted(xs)[int(round(0.95 * len(xs))) - 1]
wp95 = p95(warm)
slow = [round(x) for x in cold if x > 2 * wp95]
print("tenant %s; builtin embedder, dim 256; load average %.1f/%.1f/%.1f at start, %.1f/%.1f/%.1f at end"
      % ((tenant,) + load0 + os.getloadavg()))
print("first start (tenant empty):   ready %.2f s, first recall %.2f s after exec" % (ready1, first1))
print("restart (%d memories):        ready %.2f s, first recall %.2f s after exec" % (20 * 16, ready2, first2))
print("first %d distinct questions after restart: P50 %.1f ms, P95 %.1f ms, max %.1f ms" % (N, statistics.median(cold), p95(cold), max(cold)))
print("same %d again (warm):                      P50 %.1f ms, P95 %.1f ms, max %.1f ms" % (N, statistics.median(warm), wp95, max(warm)))
print("cold answers over 2x warm P95 (%.1f ms): %d of %d %s" % (2 * wp95, len(slow), N, slow))
for i, x in enumerate(cold):
    if x > 2 * wp95:
        q, st = stages[i]
        print("  %.0f ms %r: %s" % (x, q, {k: v for k, v in st.items() if v >= 10}))
for name in (log1, log2):
    for line in open(name):
        if "warmed up" in line or "listening" in line.lower():
            print(name.split("/")[-1], line.strip()[:200])
