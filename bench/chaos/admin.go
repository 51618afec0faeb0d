package main

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"slices"
	"time"
)

// adminLoop changes grants and the policy every second or so, and erases
// users at even intervals through the run.
func (l *load) adminLoop(ctx context.Context) {
	r := mrand.New(mrand.NewPCG(99, uint64(time.Now().UnixNano())))
	erasures := max(2, int(l.cfg.duration/time.Minute))
	every := l.cfg.duration / time.Duration(erasures+1)
	nextErase := time.Now().Add(every)
	erased := 0
	type openGrant struct {
		id string
		// indexes are the oracle's grants it stands for: creating a grant
		// the tenant has already answers with that one.
		indexes []int
		// retry: a delete of it got no answer, and may have applied.
		retry bool
	}
	var grants []openGrant
	var embargoFrom time.Time // zero: the variant is not surely active
	rollbackStart := time.Time{}
	for step := 0; ctx.Err() == nil; step++ {
		op := context.Background()
		if time.Now().After(nextErase) && erased < erasures {
			l.erase(op, l.users[erased])
			erased++
			nextErase = nextErase.Add(every)
			continue
		}
		switch step % 4 {
		case 0, 2:
			if len(grants) > 2 || (len(grants) > 0 && r.IntN(2) == 0) {
				g, kind := grants[0], "grant.delete"
				if g.retry {
					kind = kindGrantDeleteRetry
				}
				// A retry's 404 says the lost attempt deleted it; the oracle
				// takes it as closed only now, which allows more, not less.
				status, err := l.do(op, kind, l.admin, "DELETE", "/v1/grants/"+url.PathEscape(g.id), nil, nil, nil)
				switch {
				case err == nil, g.retry && status == 404:
					for _, i := range g.indexes {
						l.o.grantClosed(i, time.Now())
					}
					grants = grants[1:]
				case status == 0 || status == 503:
					grants[0].retry = true
				}
				break
			}
			agents := l.agents[3:] // the run's own agents
			grantee := r.IntN(len(agents))
			g := grant{Grantee: agents[grantee].id, Types: []string{"episodic"}, MaxSensitivity: "internal"}
			if r.IntN(3) == 0 || len(agents) < 2 {
				g.Source = "*"
			} else { // another agent: a grant of one's own memories is refused
				g.Source = agents[(grantee+1+r.IntN(len(agents)-1))%len(agents)].id
			}
			if r.IntN(2) == 0 {
				g.Kinds = []string{"note"}
			}
			i := l.o.grantOpened(g, time.Now())
			var made grant
			body := map[string]any{"grantee": g.Grantee, "source": g.Source, "types": g.Types, "max_sensitivity": g.MaxSensitivity}
			if g.Kinds != nil {
				body["kinds"] = g.Kinds
			}
			if _, err := l.do(op, "grant.create", l.admin, "POST", "/v1/grants", body, nil, &made); err == nil {
				if j := slices.IndexFunc(grants, func(o openGrant) bool { return o.id == made.ID }); j >= 0 {
					grants[j].indexes = append(grants[j].indexes, i)
				} else {
					grants = append(grants, openGrant{id: made.ID, indexes: []int{i}})
				}
			}
		case 1:
			if embargoFrom.IsZero() {
				if _, err := l.do(op, "policy.activate", l.admin, "POST", fmt.Sprintf("/v1/policy/revisions/%d/activate", l.embargoRev), map[string]any{}, nil, nil); err == nil {
					embargoFrom = time.Now()
				}
			}
		case 3:
			if !embargoFrom.IsZero() {
				start := time.Now()
				if rollbackStart.IsZero() {
					rollbackStart = start
				}
				if _, err := l.do(op, "policy.rollback", l.admin, "POST", "/v1/policy/rollback", map[string]any{"revision": 0}, nil, nil); err == nil {
					l.o.embargoed(embargoFrom, rollbackStart)
					embargoFrom, rollbackStart = time.Time{}, time.Time{}
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(500+r.IntN(1000)) * time.Millisecond):
		}
	}
	if !embargoFrom.IsZero() {
		end := rollbackStart
		if end.IsZero() {
			end = forever
		}
		l.o.embargoed(embargoFrom, end)
	}
}

// erase waits until nothing about u is in flight, retires it and erases it,
// resending the erase until it is acknowledged.
func (l *load) erase(ctx context.Context, u *chaosUser) {
	u.mu.Lock()
	u.retired = true
	u.mu.Unlock()
	l.o.userErased(u.id, u.marker)
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if _, err := l.do(ctx, "user.erase", l.admin, "DELETE", "/v1/users/"+url.PathEscape(u.id), nil, nil, nil); err == nil {
			l.logf("erased user %s", u.id)
			return
		}
		time.Sleep(time.Second)
	}
	l.mu.Lock()
	l.eraseFails = append(l.eraseFails, u.id)
	l.mu.Unlock()
}
