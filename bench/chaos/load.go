package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// load drives the agents, users and the admin through the proxy and checks
// every read answer against the oracle as it comes.
type load struct {
	base   string
	d      demo
	o      *oracle
	rec    *recorder
	cfg    config
	logf   func(string, ...any)
	client *http.Client
	runID  string
	admin  principal
	agents []principal
	users  []*chaosUser
	seq    atomic.Int64

	embargoRev int64

	mu         sync.Mutex
	own        map[string][]*ownWrite // agent → its acknowledged writes, for deletes
	violations []string
	reads      int
	shown      int
	outcomes   map[string]int
	eraseFails []string
}

// chaosUser is a user the run registered. Operations on it hold mu for
// reading; an erase takes it for writing, so that nothing about the user
// is in flight while it is forgotten.
type chaosUser struct {
	principal
	marker  string // every content about the user carries it
	mu      sync.RWMutex
	retired bool
}

type ownWrite struct {
	w  *write
	id string
}

const chaosAgents, chaosUsers = 4, 16

func newLoad(base string, d demo, o *oracle, rec *recorder, cfg config, logf func(string, ...any)) *load {
	b := make([]byte, 3)
	rand.Read(b)
	return &load{
		base: base, d: d, o: o, rec: rec, cfg: cfg, logf: logf,
		client: &http.Client{Timeout: 30 * time.Second},
		runID:  fmt.Sprintf("%x", b),
		admin:  principal{kind: "admin", id: "admin", key: d.adminKey},
		own:    map[string][]*ownWrite{}, outcomes: map[string]int{},
	}
}

// do sends one request and records it; out, when given, receives a 2xx body.
func (l *load) do(ctx context.Context, kind string, p principal, method, path string, body any, hdr map[string]string, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, l.base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+p.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	c := call{kind: kind, start: time.Now()}
	resp, err := l.client.Do(req)
	if err != nil {
		c.end, c.detail = time.Now(), err.Error()
		l.rec.add(c)
		return 0, err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	c.end, c.status = time.Now(), resp.StatusCode
	if err != nil {
		c.status, c.detail = 0, err.Error()
		l.rec.add(c)
		return 0, err
	}
	if c.status >= 300 {
		c.detail = fmt.Sprintf("%s %s as %s:%s (replica %s): %s", method, path, p.kind, p.id, resp.Header.Get(replicaHeader), raw)
	}
	l.rec.add(c)
	if c.status >= 300 {
		return c.status, fmt.Errorf("%s %s: %d %s", method, path, c.status, tail(string(raw), 300))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return c.status, fmt.Errorf("%s %s: decode: %w", method, path, err)
		}
	}
	return c.status, nil
}

// must retries an administrative call until it succeeds or a minute passed.
func (l *load) must(ctx context.Context, kind string, p principal, method, path string, body, out any) error {
	var err error
	for range 60 {
		if _, err = l.do(ctx, kind, p, method, path, body, nil, out); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return err
}

// setup registers the run's agents and users with keys and pushes the
// policy variant the admin later activates and rolls back.
func (l *load) setup(ctx context.Context) error {
	for _, id := range []string{"support-bot", "order-bot", "finance-bot"} {
		if k, ok := l.d.agents[id]; ok {
			l.agents = append(l.agents, principal{kind: "agent", id: id, key: k})
		}
	}
	issue := func(kind, id string, extra map[string]any) (string, error) {
		body := map[string]any{"kind": kind, "id": id}
		for k, v := range extra {
			body[k] = v
		}
		if err := l.must(ctx, "setup", l.admin, "POST", "/v1/principals", body, nil); err != nil {
			return "", err
		}
		var key struct {
			Secret string `json:"secret"`
		}
		err := l.must(ctx, "setup", l.admin, "POST", "/v1/keys", map[string]string{"owner_kind": kind, "owner_id": id}, &key)
		return key.Secret, err
	}
	for i := range chaosAgents {
		id := fmt.Sprintf("cx-%s-a%d", l.runID, i)
		k, err := issue("agent", id, map[string]any{"team": "chaos"})
		if err != nil {
			return err
		}
		l.agents = append(l.agents, principal{kind: "agent", id: id, key: k})
	}
	for i := range chaosUsers {
		id := fmt.Sprintf("cx-%s-u%d", l.runID, i)
		k, err := issue("user", id, nil)
		if err != nil {
			return err
		}
		l.users = append(l.users, &chaosUser{principal: principal{kind: "user", id: id, key: k}, marker: fmt.Sprintf("zq%su%dx", l.runID, i)})
	}
	var rev struct {
		Modules []struct {
			Name   string `json:"name"`
			Source string `json:"source"`
		} `json:"modules"`
	}
	if err := l.must(ctx, "setup", l.admin, "GET", "/v1/policy/revisions/0", nil, &rev); err != nil {
		return err
	}
	const own = "\tinput.resource.agent_id == input.principal.id\n}"
	found := false
	for i, m := range rev.Modules {
		if m.Name == "authz.rego" || strings.HasSuffix(m.Name, "/authz.rego") {
			at := strings.Index(m.Source, `permits contains "agent reads its own memory" if {`)
			if at < 0 || !strings.Contains(m.Source[at:], own) {
				return fmt.Errorf("authz.rego: the rule an agent reads its own memory by is not where the variant expects it")
			}
			j := at + strings.Index(m.Source[at:], own)
			rev.Modules[i].Source = m.Source[:j] + "\tinput.resource.agent_id == input.principal.id\n\tinput.resource.kind != \"" + embargoKind + "\"\n}" + m.Source[j+len(own):]
			found = true
		}
	}
	if !found {
		return fmt.Errorf("revision 0 has no authz.rego")
	}
	var pushed struct {
		Revision struct {
			Number int64 `json:"number"`
		} `json:"revision"`
	}
	if err := l.must(ctx, "setup", l.admin, "PUT", "/v1/policy", map[string]any{"message": "agents do not read their own embargo notes", "modules": rev.Modules}, &pushed); err != nil {
		return err
	}
	l.embargoRev = pushed.Revision.Number
	l.logf("run %s: %d agents, %d users, policy variant is revision %d", l.runID, len(l.agents), len(l.users), l.embargoRev)
	return nil
}

// run drives the workers and the admin until ctx ends, then waits for
// what is in flight.
func (l *load) run(ctx context.Context) {
	var wg sync.WaitGroup
	for i := range l.cfg.workers {
		wg.Add(1)
		go func() { defer wg.Done(); l.worker(ctx, i) }()
	}
	wg.Add(1)
	go func() { defer wg.Done(); l.adminLoop(ctx) }()
	wg.Wait()
}

// pickUser holds a live user for reading; the caller releases it.
func (l *load) pickUser(r *mrand.Rand) *chaosUser {
	for range 8 {
		u := l.users[r.IntN(len(l.users))]
		if u.mu.TryRLock() {
			if !u.retired {
				return u
			}
			u.mu.RUnlock()
		}
	}
	return nil
}

var sensitivities = []string{"public", "internal", "internal", "confidential"}

var topics = []string{
	"prefers deliveries to dock %d before noon",
	"asked about invoice batch %d and its due date",
	"reported that parcel %d arrived with a torn label",
	"wants quotes for %d boxes of printer toner",
	"agreed to a call about contract renewal number %d",
	"needs %d safety helmets for the new site",
}

func (l *load) content(u *chaosUser, n int64, r *mrand.Rand) (string, string) {
	marker := fmt.Sprintf("%s%d", u.marker, n)
	return fmt.Sprintf("Customer %s; ref %d [%s]", fmt.Sprintf(topics[r.IntN(len(topics))], 100+r.IntN(900)), n, marker), marker
}

func (l *load) worker(ctx context.Context, i int) {
	r := mrand.New(mrand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
	var sess *openSession
	for ctx.Err() == nil {
		// What is in flight finishes even after the run's end: a write
		// half done would be neither acknowledged nor known lost.
		op := context.Background()
		x := r.IntN(100)
		switch {
		case x < 18:
			l.writeSync(op, r)
		case x < 28:
			l.writeAsync(op, r)
		case x < 34:
			l.ingest(op, r)
		case x < 42:
			sess = l.sessionStep(op, r, sess)
		case x < 70:
			l.recall(op, r)
		case x < 92:
			l.list(op, r)
		default:
			l.deleteOwn(op, r)
		}
		time.Sleep(time.Duration(5+r.IntN(20)) * time.Millisecond)
	}
}

type writeAnswer struct {
	ID      string `json:"id"`
	Outcome string `json:"outcome"`
}

func (l *load) countOutcome(o string) {
	l.mu.Lock()
	l.outcomes[o]++
	l.mu.Unlock()
}

func (l *load) writeSync(ctx context.Context, r *mrand.Rand) {
	u := l.pickUser(r)
	if u == nil {
		return
	}
	defer u.mu.RUnlock()
	n := l.seq.Add(1)
	text, marker := l.content(u, n, r)
	var p principal
	body := map[string]any{"user_id": u.id, "type": "episodic", "kind": "note", "content": text, "sensitivity": "internal"}
	kind := "write.user"
	if r.IntN(3) > 0 {
		p = l.agents[r.IntN(len(l.agents))]
		body["sensitivity"] = sensitivities[r.IntN(len(sensitivities))]
		body["type"] = []string{"episodic", "semantic"}[r.IntN(2)]
		if r.IntN(5) == 0 {
			body["kind"] = embargoKind
		}
		kind = "write.agent"
	} else {
		p = u.principal
	}
	w := l.o.sent(marker, u.id)
	var ans writeAnswer
	if _, err := l.do(ctx, kind, p, "POST", "/v1/memories", body, nil, &ans); err != nil {
		return
	}
	l.countOutcome("sync " + ans.Outcome)
	if ans.Outcome == "created" {
		l.o.ack(w)
		if p.kind == "agent" && body["kind"] == "note" {
			l.mu.Lock()
			l.own[p.id] = append(l.own[p.id], &ownWrite{w: w, id: ans.ID})
			l.mu.Unlock()
		}
	}
}

type job struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Memories []struct {
		ID      string `json:"id"`
		Outcome string `json:"outcome"`
	} `json:"memories"`
}

// submit sends a queued write or ingestion with an idempotency key,
// resending it with the same key while the answer is a failure, then
// waits for the job.
func (l *load) submit(ctx context.Context, kind string, p principal, path string, body any, key string) (job, bool) {
	var j job
	accepted := false
	for range 10 {
		if _, err := l.do(ctx, kind, p, "POST", path, body, map[string]string{"Idempotency-Key": key}, &j); err == nil {
			accepted = true
			break
		}
		time.Sleep(time.Second)
	}
	if !accepted {
		return j, false
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if j.Status == "done" || j.Status == "failed" {
			return j, true
		}
		time.Sleep(300 * time.Millisecond)
		l.do(ctx, "job.get", p, "GET", "/v1/jobs/"+url.PathEscape(j.ID), nil, nil, &j)
	}
	return j, false
}

func (l *load) writeAsync(ctx context.Context, r *mrand.Rand) {
	u := l.pickUser(r)
	if u == nil {
		return
	}
	defer u.mu.RUnlock()
	n := l.seq.Add(1)
	text, marker := l.content(u, n, r)
	p := l.agents[r.IntN(len(l.agents))]
	w := l.o.sent(marker, u.id)
	body := map[string]any{"user_id": u.id, "type": "episodic", "kind": "note", "content": text, "sensitivity": "internal"}
	j, ok := l.submit(ctx, "write.async", p, "/v1/memories?async=true", body, "cx-"+marker)
	if !ok || j.Status != "done" || len(j.Memories) != 1 {
		l.countOutcome("async " + j.Status)
		return
	}
	l.countOutcome("async " + j.Memories[0].Outcome)
	if o := j.Memories[0].Outcome; o == "created" || o == "duplicate" {
		l.o.ack(w)
		l.mu.Lock()
		l.own[p.id] = append(l.own[p.id], &ownWrite{w: w, id: j.Memories[0].ID})
		l.mu.Unlock()
	}
}

// ingest sends turns that carry the user's marker but not a write marker:
// what the extractor makes of them is not counted, only erased with the user.
func (l *load) ingest(ctx context.Context, r *mrand.Rand) {
	u := l.pickUser(r)
	if u == nil {
		return
	}
	defer u.mu.RUnlock()
	n := l.seq.Add(1)
	p := l.agents[r.IntN(len(l.agents))]
	turns := []map[string]string{
		{"role": "user", "content": fmt.Sprintf("Remember that my project code is %si%d and my budget is %dk CNY.", u.marker, n, 10+r.IntN(90))},
		{"role": "assistant", "content": "Noted."},
	}
	body := map[string]any{"user_id": u.id, "turns": turns}
	if r.IntN(2) == 0 {
		l.do(ctx, "ingest.sync", p, "POST", "/v1/ingest?sync=true", body, nil, nil)
		return
	}
	j, _ := l.submit(ctx, "ingest.async", p, "/v1/ingest", body, fmt.Sprintf("cx-%si%d", u.marker, n))
	l.countOutcome("ingest " + j.Status)
}

type openSession struct {
	id    string
	user  *chaosUser
	agent principal
	turns int
	// closeLost is set when a close got no answer (a 503 or a broken
	// connection): it may have closed the session all the same.
	closeLost bool
}

func (l *load) sessionStep(ctx context.Context, r *mrand.Rand, s *openSession) *openSession {
	if s == nil {
		u := l.pickUser(r)
		if u == nil {
			return nil
		}
		u.mu.RUnlock()
		s = &openSession{id: fmt.Sprintf("cx-s-%d", l.seq.Add(1)), user: u, agent: l.agents[r.IntN(len(l.agents))]}
	}
	u := s.user
	if !u.mu.TryRLock() {
		return s
	}
	defer u.mu.RUnlock()
	if u.retired {
		return nil
	}
	if s.turns >= 2 {
		var res struct {
			Memories []readMemory `json:"memories"`
		}
		kind := "session.close"
		if s.closeLost {
			kind = kindCloseRetry
		}
		st, err := l.do(ctx, kind, s.agent, "POST", "/v1/sessions/"+s.id+"/close", map[string]any{}, nil, &res)
		if err == nil {
			start := time.Now()
			l.checkAnswer("session.close", s.agent, u.id, res.Memories, start, start)
		}
		if err == nil || st == 404 || st == 409 {
			return nil
		}
		s.closeLost = s.closeLost || st == 0 || st == 503
		return s
	}
	turn := fmt.Sprintf("I prefer parcels wrapped twice, note %sc%d.", u.marker, l.seq.Add(1))
	body := map[string]any{"user_id": u.id, "turns": []map[string]string{{"role": "user", "content": turn}}}
	if _, err := l.do(ctx, "session.turns", s.agent, "POST", "/v1/sessions/"+s.id+"/turns", body, nil, nil); err == nil {
		s.turns++
	}
	return s
}

// reader picks who reads about u: an agent, the user themself or the admin.
func (l *load) reader(r *mrand.Rand, u *chaosUser) (principal, string) {
	switch x := r.IntN(10); {
	case x < 6:
		return l.agents[r.IntN(len(l.agents))], "agent"
	case x < 9:
		return u.principal, "user"
	default:
		return l.admin, "admin"
	}
}

var queries = []string{"deliveries before noon", "invoice due date", "torn label parcel", "printer toner quote", "contract renewal call", "safety helmets", "budget", "project code"}

func (l *load) recall(ctx context.Context, r *mrand.Rand) {
	u := l.pickUser(r)
	if u == nil {
		return
	}
	defer u.mu.RUnlock()
	p, who := l.reader(r, u)
	var res struct {
		Memories []struct {
			Memory readMemory `json:"memory"`
		} `json:"memories"`
	}
	start := time.Now()
	if _, err := l.do(ctx, "recall."+who, p, "POST", "/v1/recall", map[string]any{"user_id": u.id, "query": queries[r.IntN(len(queries))], "k": 10}, nil, &res); err != nil {
		return
	}
	ms := make([]readMemory, len(res.Memories))
	for i, m := range res.Memories {
		ms[i] = m.Memory
	}
	l.checkAnswer("recall", p, u.id, ms, start, time.Now())
}

func (l *load) list(ctx context.Context, r *mrand.Rand) {
	u := l.pickUser(r)
	if u == nil {
		return
	}
	defer u.mu.RUnlock()
	p, who := l.reader(r, u)
	var page struct {
		Memories []readMemory `json:"memories"`
	}
	start := time.Now()
	if _, err := l.do(ctx, "list."+who, p, "GET", "/v1/memories?limit=100&user_id="+url.QueryEscape(u.id), nil, nil, &page); err != nil {
		return
	}
	l.checkAnswer("list", p, u.id, page.Memories, start, time.Now())
}

// checkAnswer holds every memory of a read answer against the oracle.
func (l *load) checkAnswer(what string, p principal, user string, ms []readMemory, start, end time.Time) {
	var bad []string
	for _, m := range ms {
		if m.UserID != user {
			bad = append(bad, fmt.Sprintf("%s as %s:%s about %s returned memory %s about %s", what, p.kind, p.id, user, m.ID, m.UserID))
			continue
		}
		if ok, why := l.o.allowed(l.d.tenant, p, m, start, end); !ok {
			bad = append(bad, fmt.Sprintf("%s as %s:%s returned memory %s (agent %s, %s/%s, %s): %s", what, p.kind, p.id, m.ID, m.AgentID, m.Type, m.Kind, m.Sensitivity, why))
		}
	}
	l.mu.Lock()
	l.reads++
	l.shown += len(ms)
	l.violations = append(l.violations, bad...)
	l.mu.Unlock()
}

func (l *load) deleteOwn(ctx context.Context, r *mrand.Rand) {
	p := l.agents[r.IntN(len(l.agents))]
	l.mu.Lock()
	ws := l.own[p.id]
	if len(ws) == 0 {
		l.mu.Unlock()
		return
	}
	k := r.IntN(len(ws))
	ow := ws[k]
	l.own[p.id] = append(ws[:k:k], ws[k+1:]...)
	l.mu.Unlock()
	var u *chaosUser
	for _, x := range l.users {
		if x.id == ow.w.user {
			u = x
		}
	}
	if u == nil || !u.mu.TryRLock() {
		return
	}
	defer u.mu.RUnlock()
	if u.retired {
		return
	}
	l.o.deleteSent(ow.w)
	if _, err := l.do(ctx, "delete", p, "DELETE", "/v1/memories/"+url.PathEscape(ow.id), nil, nil, nil); err == nil {
		l.o.deleteAcked(ow.w)
	}
}
