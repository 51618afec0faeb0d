package handlers_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"mneme/client"
	"mneme/internal/apptest"
	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/queue"
)

// TestEraseUserEverywhere erases a user who has memories in every status and
// version, entities, sessions and whatever the Redis places hold, then looks
// for them through every read API and by scanning Neo4j and Redis.
func TestEraseUserEverywhere(t *testing.T) {
	f := apptest.Start(t)
	tok := func() string {
		var b [6]byte
		_, _ = rand.Read(b[:])
		return "zq" + hex.EncodeToString(b[:])
	}
	// A user id of this test alone, so that the scans can look for it.
	const bot = "order-bot"
	user := "carol-" + tok()[2:]
	f.AddUser(t, user)
	// Every string below that holds a token is content to be forgotten.
	secret, company, trait, spoken := tok(), tok(), tok(), tok()
	tokens := []string{secret, company, trait, spoken}
	session, open := "sess-"+tok(), "open-"+tok()

	create := func(who string, n client.NewMemory) client.Memory {
		t.Helper()
		return create(t, f, who, n)
	}
	c := f.Client(t, bot)
	ents := []client.Entity{{ID: "co-" + company, Kind: "company", Name: "Company " + company}}
	budget := create(bot, client.NewMemory{UserID: user, Type: client.TypeSemantic, Key: "budget", SessionID: session,
		Content: "Carol's budget for " + secret + " is 100k", Entities: ents})
	budget2, err := c.Update(t.Context(), budget.ID, 0, client.UpdateRequest{Content: ptrTo("Carol's budget for " + secret + " is 150k")})
	if err != nil {
		t.Fatalf("update: %v", err)
	}
	episode := create(bot, client.NewMemory{UserID: user, Type: client.TypeEpisodic, SessionID: session,
		Content: "Carol asked about order " + secret, Entities: ents})
	own := create(user, client.NewMemory{UserID: user, Type: client.TypeProfile, Content: "I collect " + trait + " stamps"})
	keep := create(bot, client.NewMemory{UserID: "bob", Type: client.TypeSemantic, Content: "Bob prefers trains"})
	ids := []string{budget.ID, budget2.ID, episode.ID, own.ID}

	// An open session in working memory (Redis), with turns that hold content.
	appendTurns(t, f, bot, open, client.AppendRequest{UserID: user, Turns: []client.Turn{
		{Role: memory.RoleUser, Content: "My new address is " + spoken + " street"},
		{Role: memory.RoleAssistant, Content: "Noted, " + spoken + " street."},
	}})
	// An ingested conversation: the extractor writes what it finds.
	ingested := ingest(t, f, bot, client.IngestRequest{UserID: user, Turns: []client.Turn{
		{Role: memory.RoleUser, Content: "Remember that my budget for " + secret + " is 200k"},
	}})
	if len(ingested.Memories) == 0 {
		t.Fatalf("ingest stored nothing: %+v", ingested)
	}
	for _, m := range ingested.Memories {
		ids = append(ids, m.ID)
	}

	// A queued write the workers cannot apply (no handler knows its kind):
	// it is retried, then dead-lettered, where it waits for the erase. The
	// test waits for that: a worker drops a job it retries once the erase
	// has fenced its user, and the queue would have nothing left to count.
	held, _ := json.Marshal(map[string]string{"content": "queued note about " + secret})
	heldJob, err := f.App.Queue.Enqueue(t.Context(), memory.Job{
		Kind: "held-by-the-erase-test", Tenant: f.Tenant, UserID: user, Payload: held,
		Principal: memory.Principal{Tenant: f.Tenant, Kind: memory.KindAgent, ID: bot},
	})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		st, err := f.App.Queue.Status(t.Context(), f.Tenant, heldJob.ID)
		if err == nil && st.Status == memory.JobFailed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the held job was not dead-lettered: %+v, %v", st, err)
		}
	}

	// Recall once, so that whatever a recall leaves behind (access counts,
	// the recall log) exists before the erase.
	recall(t, f, bot, client.RecallRequest{UserID: user, Query: "budget " + secret})

	// "Forget me", by the user themself.
	receipt, err := f.Client(t, user).DeleteUser(t.Context(), user)
	if err != nil {
		t.Fatalf("erase: %v", err)
	}
	want := map[string]int64{
		// both budget versions, the episode, the profile, what ingestion
		// stored (which superseded the budget: one more version)
		memory.PlaceGraphMemories: int64(len(ids)),
		memory.PlaceGraphSessions: 1, // the graph's Session node of the written memories
		memory.PlaceGraphUsers:    2, // the User node, and the Agent node Carol wrote her profile as
		"sessions":                1, // the open session in Redis
		"queue":                   1, // the held write
	}
	for place, n := range want {
		if receipt.Counts[place] != n {
			t.Errorf("receipt %s = %d, want %d (receipt %v)", place, receipt.Counts[place], n, receipt.Counts)
		}
	}
	if receipt.Counts[memory.PlaceGraphEntities] < 1 { // at least the company only they mentioned
		t.Errorf("receipt %s = %d, want at least 1", memory.PlaceGraphEntities, receipt.Counts[memory.PlaceGraphEntities])
	}
	// The test put something in every place there is: each must have
	// erased it.
	for _, e := range f.App.Erasers {
		if n, ok := receipt.Counts[e.Place()]; !ok || n < 1 {
			t.Errorf("receipt %s = %d (listed %v), want at least 1: %v", e.Place(), n, ok, receipt.Counts)
		}
	}
	if receipt.Tenant != f.Tenant || receipt.UserID != user || receipt.ErasedAt.IsZero() {
		t.Errorf("receipt = %+v", receipt)
	}

	// Right after the erase, before anyone asks about the user again:
	// Neo4j and Redis hold no content of the user and no key or value names
	// them, their API keys and registration included.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if tombstones := checkGraphForgot(t, ctx, f, user, append(tokens, session)); tombstones != len(ids)+1 {
		t.Errorf("%d tombstones, want %d (one per memory, one for the user)", tombstones, len(ids)+1)
	}
	scanRedis(t, ctx, f.App.Redis, append(tokens, user))

	// Idempotent: again, by an admin, every place counts zero but the
	// decision log, which held this erase's own decision (about the user).
	again, err := f.Client(t, apptest.Admin).DeleteUser(t.Context(), user)
	if err != nil || len(again.Counts) != len(receipt.Counts) {
		t.Fatalf("second erase: %v, %v", again.Counts, err)
	}
	for place, n := range again.Counts {
		if want := map[string]int64{"decision_log": 1}[place]; n != want {
			t.Errorf("second erase: %s = %d, want %d", place, n, want)
		}
	}

	// Nothing of the user through any read API, for anyone; the user's own
	// key went with the erase.
	for _, who := range []string{bot, apptest.Admin, user, apptest.Analyst} {
		as := f.Client(t, who)
		gone, code := http.StatusNotFound, "not_found"
		if who == user {
			gone, code = http.StatusUnauthorized, "unauthenticated"
		}
		_, err := as.Session(t.Context(), open)
		wantAPIError(t, who+" gets the session", err, gone, code)
		for _, id := range ids {
			_, err := as.Get(t.Context(), id)
			wantAPIError(t, who+" gets "+id, err, gone, code)
			_, err = as.History(t.Context(), id)
			wantAPIError(t, who+" reads the history of "+id, err, gone, code)
		}
		for _, o := range []client.ListOptions{{UserID: user}, {UserID: user, Status: client.StatusSuperseded}, {Limit: 500}} {
			page, err := as.List(t.Context(), o)
			if who == user {
				wantAPIError(t, who+" lists", err, http.StatusUnauthorized, "unauthenticated")
				continue
			}
			if err != nil {
				t.Fatalf("%s lists %+v: %v", who, o, err)
			}
			listed, _ := json.Marshal(page)
			for _, tk := range tokens {
				if strings.Contains(string(listed), tk) {
					t.Errorf("%s lists %+v: still shows %s", who, o, tk)
				}
			}
		}
		for _, q := range []string{"budget " + secret, "order " + secret, trait + " stamps", company} {
			res, err := as.Recall(t.Context(), client.RecallRequest{UserID: user, Query: q})
			switch {
			case who == user:
				wantAPIError(t, who+" recalls", err, http.StatusUnauthorized, "unauthenticated")
			case err != nil:
				t.Errorf("%s recalls %q: %v", who, q, err)
			case len(res.Memories) != 0:
				t.Errorf("%s recalls %q: %d memories", who, q, len(res.Memories))
			}
		}
	}
	if _, err := c.Get(t.Context(), keep.ID); err != nil {
		t.Errorf("another user's memory: %v", err)
	}

	// Still no content anywhere after all those requests (which the
	// decision log, say, records under the user's id, as it should).
	checkGraphForgot(t, ctx, f, "", append(tokens, session))
	scanRedis(t, ctx, f.App.Redis, tokens)
}

// checkGraphForgot reads every node of the fixture's tenant and fails the
// test for each that holds one of the tokens or names the user: its id, its
// user_id, or a property equal to the user id or ending in ":" and it. It
// returns how many tombstones there are.
func checkGraphForgot(t *testing.T, ctx context.Context, f *apptest.Fixture, user string, tokens []string) (tombstones int) {
	t.Helper()
	nodes, err := f.App.Store.TenantNodes(ctx, f.Tenant)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Labels[0] == "Tombstone" {
			tombstones++
		}
		for k, v := range n.Props {
			s := fmt.Sprint(v)
			for _, tk := range tokens {
				if strings.Contains(s, tk) {
					t.Errorf("Neo4j %v %v: %s holds %s", n.Labels, n.Props["id"], k, tk)
				}
			}
			// The user's API keys and registration go with the rest.
			if user != "" && (s == user || strings.HasSuffix(s, ":"+user)) {
				t.Errorf("Neo4j %v %v: %s names the user %s", n.Labels, n.Props["id"], k, user)
			}
		}
	}
	return tombstones
}

// scanRedis reads every key of the database and fails the test when a key
// or value holds one of the tokens. Keys are read a SCAN page at a time,
// in two pipelines: their types, then their values.
func scanRedis(t *testing.T, ctx context.Context, rdb redis.UniversalClient, tokens []string) {
	t.Helper()
	check := func(key, what string, vals ...string) {
		for _, v := range vals {
			for _, tk := range tokens {
				if strings.Contains(v, tk) {
					t.Errorf("Redis %s (%s) holds %s", key, what, tk)
				}
			}
		}
	}
	// Every node of a cluster is scanned.
	all, err := testenv.ScanKeys(ctx, rdb, "*")
	if err != nil {
		t.Fatalf("SCAN: %v", err)
	}
	keys := len(all)
	for len(all) > 0 {
		page := all[:min(len(all), 1000)]
		all = all[len(page):]
		types := make([]*redis.StatusCmd, len(page))
		pipe := rdb.Pipeline()
		for i, key := range page {
			check(key, "key", key)
			types[i] = pipe.Type(ctx, key)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatalf("TYPE: %v", err)
		}
		reads := make([]func() []string, len(page))
		pipe = rdb.Pipeline()
		for i, key := range page {
			switch typ := types[i].Val(); typ {
			case "string":
				c := pipe.Get(ctx, key)
				reads[i] = func() []string { return []string{c.Val()} }
			case "list":
				c := pipe.LRange(ctx, key, 0, -1)
				reads[i] = c.Val
			case "set":
				c := pipe.SMembers(ctx, key)
				reads[i] = c.Val
			case "zset":
				c := pipe.ZRange(ctx, key, 0, -1)
				reads[i] = c.Val
			case "hash":
				c := pipe.HGetAll(ctx, key)
				reads[i] = func() (vals []string) {
					for k, v := range c.Val() {
						vals = append(vals, k, v)
					}
					return vals
				}
			case "stream":
				c := pipe.XRange(ctx, key, "-", "+")
				reads[i] = func() (vals []string) {
					for _, m := range c.Val() {
						vals = append(vals, fmt.Sprint(m.Values))
					}
					return vals
				}
			case "none": // expired between SCAN and TYPE
			default:
				t.Errorf("Redis %s has type %s, which this scan cannot read", key, typ)
			}
		}
		// A key that expired meanwhile answers nil; the others their values.
		if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("reading values: %v", err)
		}
		for i, key := range page {
			if reads[i] != nil {
				check(key, types[i].Val(), reads[i]()...)
			}
		}
	}
	t.Logf("scanned %d Redis keys", keys)
}

// TestEraseUserWhileAWriteIsApplied: a worker has taken a user's queued
// write and is about to apply it when the user is erased. The write must
// not bring the user back: the erase fences it, the graph refuses it, and
// afterwards no API, Neo4j node or Redis key holds anything of it. A write
// accepted after the erase is a new start and is applied.
func TestEraseUserWhileAWriteIsApplied(t *testing.T) {
	f := apptest.StartLogged(t, io.Discard) // its queue workers are not started: the test runs its own
	const bot = "order-bot"
	var b [6]byte
	_, _ = rand.Read(b[:])
	secret := "zq" + hex.EncodeToString(b[:])
	user := "dana-" + secret[2:]

	// A pool whose handler reports the jobs it took and applies them only
	// when the test releases it.
	taken, release := make(chan []memory.Job, 4), make(chan struct{})
	type applied struct {
		res []memory.JobResult
		err error
	}
	results := make(chan applied, 4)
	pool := queue.NewPool(f.App.Queue, queue.PoolOptions{Backoff: 10 * time.Millisecond, LeaseTTL: 2 * time.Second})
	pool.Handle(memory.JobMemories, func(ctx context.Context, jobs []memory.Job) ([]memory.JobResult, error) {
		taken <- jobs
		<-release
		res, err := f.App.Service.ApplyMemoryJobs(ctx, jobs)
		results <- applied{res, err}
		return res, err
	})
	if err := pool.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = pool.Stop(ctx)
	})
	// A test that fails before it releases the worker must not hold the
	// pool's Stop for ever (cleanups run last first: this one before Stop).
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(free)

	c := f.Client(t, bot)
	write := func(content string) client.Job {
		t.Helper()
		st, err := c.AddAsync(t.Context(), client.NewMemory{
			UserID: user, Type: client.TypeSemantic, Key: "plan", Content: content,
			Entities: []client.Entity{{ID: "co-" + secret, Kind: "company", Name: "Company " + secret}},
		})
		// A worker may have taken it before the answer was written.
		if err != nil || st.Status != memory.JobQueued && st.Status != memory.JobRunning {
			t.Fatalf("async write: %+v, %v", st, err)
		}
		return st
	}
	job := write("Dana plans to buy " + secret + " next spring")
	select {
	case jobs := <-taken:
		if len(jobs) != 1 || jobs[0].ID != job.ID {
			t.Fatalf("the worker took %+v, want job %s", jobs, job.ID)
		}
	case <-time.After(time.Minute):
		t.Fatal("no worker took the write")
	}

	receipt, err := f.Client(t, apptest.Admin).DeleteUser(t.Context(), user)
	if err != nil {
		t.Fatalf("erase: %v", err)
	}
	// The job the worker holds was still in the queue; nothing was in the
	// graph yet.
	want := map[string]int64{"queue": 1, memory.PlaceGraphMemories: 0, memory.PlaceGraphUsers: 0}
	for place, n := range want {
		if receipt.Counts[place] != n {
			t.Errorf("receipt %s = %d, want %d (%v)", place, receipt.Counts[place], n, receipt.Counts)
		}
	}

	free() // the worker goes on with the write it took before the erase
	got := <-results
	if got.err != nil || len(got.res) != 1 || got.res[0].Err != nil {
		t.Fatalf("applying the held job: %+v, %v", got.res, got.err)
	}
	if ms := got.res[0].Memories; len(ms) != 1 || ms[0].Outcome != memory.OutcomeErased {
		t.Errorf("held job's memories %+v, want one with outcome %q", ms, memory.OutcomeErased)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if tombstones := checkGraphForgot(t, ctx, f, user, []string{secret}); tombstones != 1 {
		t.Errorf("%d tombstones, want the user's only", tombstones)
	}
	scanRedis(t, ctx, f.App.Redis, []string{secret, user})
	// The job stays, done, its memory erased: the worker that finished it
	// after the erase left it so.
	if st, err := c.Job(t.Context(), job.ID); err != nil || st.Status != memory.JobDone ||
		!slices.Equal(st.Memories, []client.JobMemory{{Outcome: memory.OutcomeErased}}) {
		t.Errorf("the erased job: %+v, %v; want done, its memory erased", st, err)
	}
	for _, who := range []string{bot, apptest.Admin} {
		if listed, _ := json.Marshal(list(t, f, who, "user_id="+user+"&limit=500")); strings.Contains(string(listed), secret) {
			t.Errorf("%s lists the erased write: %s", who, listed)
		}
	}

	// Writing about the same user id again starts afresh.
	again := write("Dana starts over with " + secret + "-2")
	<-taken
	got = <-results
	if got.err != nil || len(got.res) != 1 || len(got.res[0].Memories) != 1 || got.res[0].Memories[0].Outcome != client.OutcomeCreated {
		t.Fatalf("a write after the erase: %+v, %v; want created", got.res, got.err)
	}
	if _, err := c.Get(t.Context(), got.res[0].Memories[0].ID); err != nil {
		t.Errorf("the new memory: %v", err)
	}
	if st, err := c.Job(t.Context(), again.ID); err != nil || st.ID != again.ID {
		t.Errorf("the new job: %+v, %v", st, err)
	}
}

// TestEraseRunsToItsEndWhenTheCallerHangsUp: a caller who hangs up while a
// user is erased does not cut the erase short. It runs to its end: the
// user's memories are gone, and a write about the user afterwards is a new
// start, not refused as one about a user being erased.
func TestEraseRunsToItsEndWhenTheCallerHangsUp(t *testing.T) {
	f := apptest.Start(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	user := "hang-" + hex.EncodeToString(b[:])
	bot := f.Client(t, "support-bot")
	for n := range 20 {
		batch := make([]client.NewMemory, memory.MaxBatch)
		for i := range batch {
			batch[i] = client.NewMemory{UserID: user, Type: client.TypeEpisodic, Content: fmt.Sprintf("Note %d-%d: the shelves in aisle %d were restocked.", n, i, i)}
		}
		if _, err := bot.Add(t.Context(), batch...); err != nil {
			t.Fatalf("batch %d: %v", n, err)
		}
	}
	// Hang up once the erase is under way (memories have started to go): a
	// caller gone before the handler ran has asked for nothing.
	before := stored(t, f)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := f.Client(t, apptest.Admin).DeleteUser(ctx, user)
		done <- err
	}()
	for start := time.Now(); stored(t, f) == before && time.Since(start) < 30*time.Second; {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil {
		t.Log("the erase ended before the caller hung up; the test proves less")
	}
	deadline := time.Now().Add(time.Minute)
	for {
		left := list(t, f, apptest.Admin, "user_id="+user+"&limit=500")
		_, werr := bot.Add(t.Context(), client.NewMemory{UserID: user, Type: client.TypeEpisodic, Content: "A new start after the erase."})
		if len(left) <= 1 && werr == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the caller hung up: %d memories left, a new write: %v", len(left), werr)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A queued write whose user is erased, before its job ran or after, reads
// as done with each memory's outcome erased, for its sender and admins
// alike: not as a job that never was, which its sender might send again.
// Nothing of what it said, nor the user id, stays in Redis.
func TestErasedUsersJobsSayErased(t *testing.T) {
	f := apptest.StartLogged(t, io.Discard) // its queue workers are not started: the test runs its own
	const bot = "order-bot"
	var b [6]byte
	_, _ = rand.Read(b[:])
	secret := "zq" + hex.EncodeToString(b[:])
	user := "erin-" + secret[2:]
	c := f.Client(t, bot)
	send := func(contents ...string) client.Job {
		t.Helper()
		var ms []client.NewMemory
		for _, content := range contents {
			ms = append(ms, client.NewMemory{UserID: user, Type: client.TypeEpisodic, Kind: "note", Content: content})
		}
		st, err := c.AddAsync(t.Context(), ms...)
		if err != nil || st.Status != memory.JobQueued {
			t.Fatalf("async write: %+v, %v", st, err)
		}
		return st
	}

	// One job runs before the erase.
	ran := send("Erin asked about order " + secret + "-1")
	pool := queue.NewPool(f.App.Queue, queue.PoolOptions{Backoff: 10 * time.Millisecond, LeaseTTL: 2 * time.Second})
	pool.Handle(memory.JobMemories, f.App.Service.ApplyMemoryJobs)
	if err := pool.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var done client.Job
	deadline := time.Now().Add(time.Minute)
	for done.Status != memory.JobDone {
		if time.Now().After(deadline) {
			t.Fatalf("the first job did not run: %+v", done)
		}
		time.Sleep(20 * time.Millisecond)
		var err error
		if done, err = c.Job(t.Context(), ran.ID); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := pool.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if len(done.Memories) != 1 || done.Memories[0].Outcome != client.OutcomeCreated {
		t.Fatalf("the first job: %+v, want one memory created", done)
	}
	// Two more wait in the queue when the user is erased.
	one := send("Erin's parcel " + secret + "-2 is late")
	two := send("Erin prefers "+secret+"-3 boxes", "Erin pays by "+secret+"-4")

	receipt, err := f.Client(t, apptest.Admin).DeleteUser(t.Context(), user)
	if err != nil {
		t.Fatalf("erase: %v", err)
	}
	if receipt.Counts["queue"] != 2 || receipt.Counts[memory.PlaceGraphMemories] != 1 {
		t.Errorf("receipt %v, want 2 queued jobs and 1 memory", receipt.Counts)
	}
	erased := client.JobMemory{Outcome: memory.OutcomeErased}
	for _, tt := range []struct {
		name string
		job  client.Job
		want []client.JobMemory
	}{
		{"the job that ran", ran, []client.JobMemory{{ID: done.Memories[0].ID, Outcome: memory.OutcomeErased}}},
		{"a queued job", one, []client.JobMemory{erased}},
		{"a queued batch", two, []client.JobMemory{erased, erased}},
	} {
		for _, who := range []string{bot, apptest.Admin} {
			st, err := f.Client(t, who).Job(t.Context(), tt.job.ID)
			if err != nil || st.Status != memory.JobDone || st.FinishedAt == nil || st.ErrorCode != "" {
				t.Errorf("%s reads %s: %+v, %v; want done", who, tt.name, st, err)
				continue
			}
			if diff := cmp.Diff(tt.want, st.Memories); diff != "" {
				t.Errorf("%s reads %s: memories (-want +got):\n%s", who, tt.name, diff)
			}
		}
		_, err := f.Client(t, "support-bot").Job(t.Context(), tt.job.ID)
		wantAPIError(t, "another agent reads "+tt.name, err, http.StatusNotFound, "not_found")
	}
	scanRedis(t, t.Context(), f.App.Redis, []string{secret, user})
}
