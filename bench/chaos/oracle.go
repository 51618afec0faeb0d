package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"sync"
	"time"
)

// demo is what the run takes from seed/demo.json.
type demo struct {
	tenant   string
	adminKey string
	agents   map[string]string // id → key
	users    map[string]string // id → key
	grants   []grant
}

type grant struct {
	ID             string   `json:"id"`
	Grantee        string   `json:"grantee"`
	Source         string   `json:"source"`
	Types          []string `json:"types"`
	Kinds          []string `json:"kinds"`
	MaxSensitivity string   `json:"max_sensitivity"`
}

func loadDemo(path string) (demo, error) {
	var raw struct {
		Tenant string `json:"tenant"`
		Keys   []struct {
			Key, Kind, ID string
		} `json:"api_keys"`
		Grants []grant `json:"grants"`
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return demo{}, err
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return demo{}, fmt.Errorf("%s: %w", path, err)
	}
	d := demo{tenant: raw.Tenant, agents: map[string]string{}, users: map[string]string{}, grants: raw.Grants}
	for _, k := range raw.Keys {
		switch k.Kind {
		case "agent":
			d.agents[k.ID] = k.Key
		case "user":
			d.users[k.ID] = k.Key
		case "admin":
			d.adminKey = k.Key
		}
	}
	if d.adminKey == "" || len(d.agents) == 0 {
		return demo{}, fmt.Errorf("%s: no admin or agent keys", path)
	}
	return d, nil
}

var ranks = map[string]int{"public": 0, "internal": 1, "confidential": 2, "restricted": 3}

// embargoKind is the kind the policy variant hides from its own author.
const embargoKind = "embargo"

// span is when something may have been in force: from the start of the
// request that made it until the end of the one that undid it. A change
// not acknowledged stays in force to the end (the oracle may only widen
// what it accepts, never narrow it on a guess).
type span struct{ from, to time.Time }

func (s span) overlaps(a, b time.Time) bool { return !s.from.After(b) && !s.to.Before(a) }

var forever = time.Unix(math.MaxInt32, 0)

// write is one memory the run sent, found again by its marker.
type write struct {
	marker  string
	user    string
	acked   bool // acknowledged: created, in a synchronous answer or a done job
	deleted bool // its delete was acknowledged
	maybe   bool // its delete was sent but not acknowledged
}

// oracle holds what the run was told and what each principal may read.
type oracle struct {
	mu      sync.Mutex
	grants  []grantSpan
	embargo []span // when the variant was surely in force: activation's end .. rollback's start
	writes  map[string]*write
	erased  map[string]string // user → marker prefix of their content
}

type grantSpan struct {
	g grant
	span
}

func newOracle(d demo) *oracle {
	o := &oracle{writes: map[string]*write{}, erased: map[string]string{}}
	for _, g := range d.grants {
		o.grants = append(o.grants, grantSpan{g: g, span: span{time.Time{}, forever}})
	}
	return o
}

// grantOpened records a grant create sent at start; it returns the index
// to close it with.
func (o *oracle) grantOpened(g grant, start time.Time) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.grants = append(o.grants, grantSpan{g: g, span: span{start, forever}})
	return len(o.grants) - 1
}

func (o *oracle) grantClosed(i int, end time.Time) {
	o.mu.Lock()
	o.grants[i].to = end
	o.mu.Unlock()
}

func (o *oracle) embargoed(from, to time.Time) {
	o.mu.Lock()
	o.embargo = append(o.embargo, span{from, to})
	o.mu.Unlock()
}

func (o *oracle) sent(marker, user string) *write {
	o.mu.Lock()
	defer o.mu.Unlock()
	w := &write{marker: marker, user: user}
	o.writes[marker] = w
	return w
}

func (o *oracle) ack(w *write)           { o.mu.Lock(); w.acked = true; o.mu.Unlock() }
func (o *oracle) deleteSent(w *write)    { o.mu.Lock(); w.maybe = true; o.mu.Unlock() }
func (o *oracle) deleteAcked(w *write)   { o.mu.Lock(); w.deleted = true; o.mu.Unlock() }
func (o *oracle) userErased(u, p string) { o.mu.Lock(); o.erased[u] = p; o.mu.Unlock() }

// forgetOneAck drops one acknowledged, undeleted write of a user still
// present, as if the store had never been asked: the run must then fail.
func (o *oracle) forgetOneAck() (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var ms []string
	for m, w := range o.writes {
		if w.acked && !w.deleted && !w.maybe && o.erased[w.user] == "" {
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return "", false
	}
	sort.Strings(ms)
	delete(o.writes, ms[0])
	return ms[0], true
}

// readMemory is what a read answer shows of a memory.
type readMemory struct {
	ID          string `json:"id"`
	Tenant      string `json:"tenant"`
	UserID      string `json:"user_id"`
	AgentID     string `json:"agent_id"`
	Type        string `json:"type"`
	Kind        string `json:"kind"`
	Sensitivity string `json:"sensitivity"`
	Status      string `json:"status"`
	Content     string `json:"content"`
}

type principal struct {
	kind, id, key string
}

// allowed says whether p may have been shown m by a read that ran from
// start to end, under the default rules and the grants and policy variant
// the admin changed meanwhile.
func (o *oracle) allowed(tenant string, p principal, m readMemory, start, end time.Time) (bool, string) {
	if m.Tenant != tenant {
		return false, "another tenant"
	}
	if _, ok := ranks[m.Sensitivity]; !ok {
		return false, "unknown sensitivity " + m.Sensitivity
	}
	switch p.kind {
	case "admin":
		return true, ""
	case "user":
		if m.UserID != p.id {
			return false, "user reads another user's memory"
		}
		if ranks[m.Sensitivity] > ranks["internal"] {
			return false, "user reads above the ceiling"
		}
		return true, ""
	case "agent":
		o.mu.Lock()
		defer o.mu.Unlock()
		if m.AgentID == p.id && (m.Kind != embargoKind || !o.surelyEmbargoed(start, end)) {
			return true, ""
		}
		if m.UserID != "" && m.AgentID == "user:"+m.UserID {
			return true, "" // what the user said about themselves
		}
		for _, g := range o.grants {
			if g.g.Grantee != p.id || !g.overlaps(start, end) {
				continue
			}
			if (g.g.Source == "*" || g.g.Source == m.AgentID) && contains(g.g.Types, m.Type) &&
				(len(g.g.Kinds) == 0 || contains(g.g.Kinds, m.Kind)) && ranks[m.Sensitivity] <= ranks[g.g.MaxSensitivity] {
				return true, ""
			}
		}
		return false, "agent reads without rule or grant"
	}
	return false, "unknown principal kind " + p.kind
}

var markerRE = regexp.MustCompile(`\[(zq[0-9a-z]+u[0-9]+x[0-9]+)\]`)

// surelyEmbargoed: the policy variant was in force for the whole read.
func (o *oracle) surelyEmbargoed(start, end time.Time) bool {
	for _, s := range o.embargo {
		if !s.from.After(start) && !s.to.Before(end) {
			return true
		}
	}
	return false
}
