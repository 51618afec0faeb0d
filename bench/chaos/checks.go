package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// finalChecks reads everything back once the load is over and adds every
// check to the report.
func (l *load) finalChecks(ctx context.Context, redisURL string, rep *report) error {
	rep.checkStatuses()
	rep.checkRecovery()

	l.mu.Lock()
	viol, reads, shown := append([]string(nil), l.violations...), l.reads, l.shown
	var outcomes []string
	for k, v := range l.outcomes {
		outcomes = append(outcomes, fmt.Sprintf("%s=%d", k, v))
	}
	eraseFails := append([]string(nil), l.eraseFails...)
	l.mu.Unlock()
	sort.Strings(outcomes)
	rep.facts = append(rep.facts, "write outcomes: "+strings.Join(outcomes, " "))
	rep.add("every recall and list answer within policy", len(viol) == 0, "%d answers, %d memories shown, %d outside policy%s", reads, shown, len(viol), sample(viol))

	// Everything stored, as the admin lists it: every user, every status.
	var all []readMemory
	cursor := ""
	for {
		var page struct {
			Memories   []readMemory `json:"memories"`
			NextCursor string       `json:"next_cursor"`
		}
		path := "/v1/memories?limit=500"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		if err := l.must(ctx, "final.list", l.admin, "GET", path, nil, &page); err != nil {
			return err
		}
		all = append(all, page.Memories...)
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	// Only this run's writes: a reused -dir keeps earlier runs' memories.
	count := map[string]int{}
	for _, m := range all {
		for _, sm := range markerRE.FindAllStringSubmatch(m.Content, -1) {
			if strings.HasPrefix(sm[1], "zq"+l.runID+"u") {
				count[sm[1]]++
			}
		}
	}

	l.o.mu.Lock()
	var lost, dup, unknown, undeleted []string
	acked, maybe := 0, 0
	for m, n := range count {
		w, ok := l.o.writes[m]
		switch {
		case !ok:
			unknown = append(unknown, m)
		case n > 1:
			dup = append(dup, fmt.Sprintf("%s×%d", m, n))
		case w.deleted && n > 0:
			undeleted = append(undeleted, m)
		}
	}
	for m, w := range l.o.writes {
		if !w.acked {
			maybe++
			continue
		}
		acked++
		if w.deleted || w.maybe || l.o.erased[w.user] != "" {
			continue
		}
		if count[m] == 0 {
			lost = append(lost, m)
		}
	}
	erased := map[string]string{}
	for u, p := range l.o.erased {
		erased[u] = p
	}
	l.o.mu.Unlock()
	sort.Strings(unknown)
	sort.Strings(lost)
	rep.facts = append(rep.facts, fmt.Sprintf("stored memories listed by the admin: %d; writes sent %d, acknowledged %d, unacknowledged %d", len(all), acked+maybe, acked, maybe))
	rep.add("acknowledged writes present", len(lost) == 0, "%d acknowledged writes, %d missing%s", acked, len(lost), sample(lost))
	rep.add("no write stored twice", len(dup) == 0, "%d duplicated%s", len(dup), sample(dup))
	rep.add("every stored write was sent and is known to the oracle", len(unknown) == 0, "%d unknown%s", len(unknown), sample(unknown))
	rep.add("acknowledged deletes stay deleted", len(undeleted) == 0, "%d present%s", len(undeleted), sample(undeleted))

	// Erased users: nothing in the graph, in their export, or in Redis.
	var found []string
	for _, m := range all {
		for u, p := range erased {
			if strings.Contains(m.Content, p) || m.UserID == u {
				found = append(found, fmt.Sprintf("neo4j memory %s about %s", m.ID, m.UserID))
			}
		}
	}
	for u, p := range erased {
		body, status, err := l.raw(ctx, "final.export", "/v1/users/"+url.PathEscape(u)+"/export")
		if err != nil {
			return err
		}
		if status == http.StatusOK && strings.Contains(body, p) {
			found = append(found, "export of "+u)
		}
	}
	keys, hits, err := scanRedis(ctx, redisURL, erased)
	if err != nil {
		return err
	}
	found = append(found, hits...)
	names := make([]string, 0, len(erased))
	for u := range erased {
		names = append(names, u)
	}
	sort.Strings(names)
	rep.add("erase acknowledged", len(eraseFails) == 0 && len(erased) > 0, "%d users erased (%s), %d never acknowledged", len(erased), strings.Join(names, ", "), len(eraseFails))
	rep.add("erased users' content found nowhere", len(found) == 0, "%d memories listed and %d Redis keys scanned, %d found%s", len(all), keys, len(found), sample(found))
	return nil
}

// raw GETs path as the admin and returns the body, retrying failures.
func (l *load) raw(ctx context.Context, kind, path string) (string, int, error) {
	var last error
	for range 30 {
		req, _ := http.NewRequestWithContext(ctx, "GET", l.base+path, nil)
		req.Header.Set("Authorization", "Bearer "+l.admin.key)
		c := call{kind: kind, start: time.Now()}
		resp, err := l.client.Do(req)
		if err != nil {
			last = err
			time.Sleep(time.Second)
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		c.end, c.status = time.Now(), resp.StatusCode
		if c.status >= 300 {
			c.detail = string(b)
		}
		l.rec.add(c)
		if err == nil && resp.StatusCode < 500 {
			return string(b), resp.StatusCode, nil
		}
		last = fmt.Errorf("GET %s: %d %v", path, resp.StatusCode, err)
		time.Sleep(time.Second)
	}
	return "", 0, last
}

// scanRedis reads every key of every type and looks for the erased users'
// markers in names and values.
func scanRedis(ctx context.Context, redisURL string, erased map[string]string) (int, []string, error) {
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return 0, nil, err
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	var hits []string
	n := 0
	iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		n++
		var vals []string
		typ, err := rdb.Type(ctx, key).Result()
		if err != nil {
			return n, hits, err
		}
		switch typ {
		case "string":
			v, _ := rdb.Get(ctx, key).Result()
			vals = []string{v}
		case "hash":
			m, _ := rdb.HGetAll(ctx, key).Result()
			for k, v := range m {
				vals = append(vals, k, v)
			}
		case "list":
			vals, _ = rdb.LRange(ctx, key, 0, -1).Result()
		case "set":
			vals, _ = rdb.SMembers(ctx, key).Result()
		case "zset":
			vals, _ = rdb.ZRange(ctx, key, 0, -1).Result()
		case "stream":
			msgs, _ := rdb.XRange(ctx, key, "-", "+").Result()
			for _, m := range msgs {
				for k, v := range m.Values {
					vals = append(vals, k, fmt.Sprint(v))
				}
			}
		}
		for u, p := range erased {
			if strings.Contains(key, p) {
				hits = append(hits, fmt.Sprintf("redis key %s names %s's marker", key, u))
			}
			for _, v := range vals {
				if strings.Contains(v, p) {
					hits = append(hits, fmt.Sprintf("redis %s %s holds %s's content", typ, key, u))
					break
				}
			}
		}
	}
	return n, hits, iter.Err()
}
