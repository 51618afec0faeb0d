package app_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"mneme/app"
	"mneme/internal/apptest"
	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/policyadmin"
)

// replica starts one more memoryd on the shared Neo4j and Redis, with its
// own policy engine, and returns a fixture for tenant with the given keys.
func replica(t *testing.T, tenant string, keys map[string]string) *apptest.Fixture {
	t.Helper()
	testenv.Neo4j(t)
	cfg := app.Defaults()
	cfg.Neo4j.URI = os.Getenv(testenv.EnvNeo4jURI)
	cfg.Neo4j.User = os.Getenv(testenv.EnvNeo4jUser)
	cfg.Neo4j.Password = os.Getenv(testenv.EnvNeo4jPassword)
	cfg.Neo4j.Database = testenv.Neo4jDatabase()
	cfg.Redis.URL = testenv.RedisURL(t)
	cfg.Identity.KeySecret = testenv.KeySecret()
	cfg.Embedding.Kind, cfg.Embedding.Dim = app.EmbedderBuiltin, testenv.EmbeddingDimension
	cfg.Server.StartTimeout = 30 * time.Second
	cfg.Policy.Timeout = 5 * time.Second
	// The replica shares memoryd's default queue prefix: applying that
	// queue is not this test's business. Its policy listener is.
	cfg.Queue.Workers = false
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("MNEME_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	a, err := app.New(context.Background(), cfg, log)
	if err != nil {
		t.Fatalf("start replica: %v", err)
	}
	stop := a.StartWorkers(context.Background())
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(func() {
		srv.Close()
		// A test may take Redis away from the replica; its workers then
		// stop with an error, which is what they should do.
		if err := stop(); err != nil {
			t.Logf("replica workers: %v", err)
		}
		a.Close(context.Background())
	})
	return &apptest.Fixture{URL: srv.URL, App: a, Tenant: tenant, Keys: keys}
}

// noSecretPlans is revision 0 with one more guard: nobody reads a memory of
// kind "secret-plan".
func noSecretPlans(t *testing.T, f *apptest.Fixture) []policyadmin.PolicyModule {
	t.Helper()
	r := f.Do(t, apptest.Admin, "GET", "/v1/policy/revisions/0", nil)
	want(t, "revision 0", r, http.StatusOK)
	var rev policyadmin.PolicyRevision
	r.Decode(t, &rev)
	for i, m := range rev.Modules {
		if m.Name == "authz.rego" {
			s := strings.Replace(m.Source, "\tknown_sensitivity\n}", "\tknown_sensitivity\n\tnot secret_plan\n}", 1)
			rev.Modules[i].Source = s + "\nsecret_plan if input.resource.kind == \"secret-plan\"\n\ndenials contains \"secret plans are never read\" if secret_plan\n"
		}
	}
	return rev.Modules
}

func want(t *testing.T, step string, r apptest.Response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: status %d, want %d: %.400s", step, r.Status, status, r.Body)
	}
}

// until polls ok every millisecond until it holds or limit passes, and
// returns how long it took.
// pubsubBound is how long a replica may take to hear of a change through
// pub/sub before the test calls it lost.
const pubsubBound = 5 * time.Second

func until(limit time.Duration, ok func() bool) (time.Duration, bool) {
	start := time.Now()
	for {
		if ok() {
			return time.Since(start), true
		}
		if time.Since(start) > limit {
			return time.Since(start), false
		}
		time.Sleep(time.Millisecond)
	}
}

// TestTwoReplicas runs two memoryd on the same Neo4j and Redis: a policy
// activated on one is enforced by the other on its very next request (the
// per-request revision check) and reaches its engine through pub/sub, a
// rollback restores both, a revoked grant's memories are unreadable on the
// very next request on both, and the decision log shows every read with its revisions.
func TestTwoReplicas(t *testing.T) {
	one := apptest.Start(t)
	two := replica(t, one.Tenant, one.Keys)

	// order-bot writes a secret plan and an order about alice.
	r := one.Do(t, "order-bot", "POST", "/v1/memories", map[string]any{"memories": []memory.NewMemory{
		{UserID: "alice", Type: memory.TypeSemantic, Kind: "secret-plan", Content: "The Q3 launch moves to October"},
		{UserID: "alice", Type: memory.TypeEpisodic, Kind: "order", Content: "Alice ordered a standing desk, order 77"},
	}})
	want(t, "write", r, http.StatusCreated)
	var written struct{ Memories []memory.Memory }
	r.Decode(t, &written)
	plan, order := written.Memories[0].ID, written.Memories[1].ID
	readable := func(f *apptest.Fixture, who, id string) bool {
		t.Helper()
		r := f.Do(t, who, "GET", "/v1/memories/"+id, nil)
		if r.Status != http.StatusOK && r.Status != http.StatusNotFound {
			t.Fatalf("GET %s as %s: %d %s", id, who, r.Status, r.Body)
		}
		return r.Status == http.StatusOK
	}
	for _, f := range []*apptest.Fixture{one, two} {
		if !readable(f, apptest.Admin, plan) {
			t.Fatal("the bundled policy hides the plan from an admin")
		}
	}

	// Activation on one.
	r = one.Do(t, apptest.Admin, "PUT", "/v1/policy", policyadmin.NewPolicy{Message: "no secret plans", Modules: noSecretPlans(t, one)})
	want(t, "push", r, http.StatusCreated)
	var pushed struct{ Revision policyadmin.PolicyRevision }
	r.Decode(t, &pushed)
	n := strconv.FormatInt(pushed.Revision.Number, 10)
	r = one.Do(t, apptest.Admin, "POST", "/v1/policy/revisions/"+n+"/activate", nil)
	want(t, "activate", r, http.StatusOK)
	activated := time.Now()
	// Pub/sub alone: replica two's engine loads the revision without any
	// request to it.
	// The bound is generous because the machine may be loaded; how fast the
	// message usually arrives is logged, not asserted.
	pubsub, ok := until(pubsubBound, func() bool {
		got, ok := two.App.Policy.Loaded(one.Tenant)
		return ok && got.Policy == pushed.Revision.Number
	})
	if !ok {
		t.Errorf("pub/sub did not bring revision %s to replica two within %s", n, pubsubBound)
	}
	if readable(two, apptest.Admin, plan) {
		t.Error("replica two does not enforce the activated revision")
	}
	enforced := time.Since(activated)
	t.Logf("activation on one → loaded by two through pub/sub in %s; enforced on two's next request, %s after activation returned", pubsub, enforced)
	if readable(one, apptest.Admin, plan) {
		t.Error("replica one does not enforce the revision it activated")
	}

	// Rollback on two restores both.
	r = two.Do(t, apptest.Admin, "POST", "/v1/policy/rollback", map[string]any{})
	want(t, "rollback", r, http.StatusOK)
	var st policyadmin.PolicyState
	r.Decode(t, &st)
	if st.Active != 0 {
		t.Errorf("rollback activated %d, want 0", st.Active)
	}
	for name, f := range map[string]*apptest.Fixture{"one": one, "two": two} {
		if !readable(f, apptest.Admin, plan) {
			t.Errorf("replica %s still enforces the rolled-back revision", name)
		}
	}

	// A grant shares the order with support-bot on both replicas...
	r = one.Do(t, apptest.Admin, "POST", "/v1/grants", policyadmin.NewGrant{
		Grantee: "support-bot", Source: "order-bot", Types: []string{memory.TypeEpisodic}, Kinds: []string{"order"}, MaxSensitivity: memory.SensitivityInternal,
	})
	want(t, "grant", r, http.StatusCreated)
	var g memory.Grant
	r.Decode(t, &g)
	for name, f := range map[string]*apptest.Fixture{"one": one, "two": two} {
		if !readable(f, "support-bot", order) {
			t.Errorf("replica %s does not apply the new grant", name)
		}
	}
	// ...a change narrows it everywhere at once...
	r = two.Do(t, apptest.Admin, "PATCH", "/v1/grants/"+g.ID, map[string]any{"kinds": []string{"refund"}})
	want(t, "change grant", r, http.StatusOK)
	for name, f := range map[string]*apptest.Fixture{"one": one, "two": two} {
		if readable(f, "support-bot", order) {
			t.Errorf("replica %s does not apply the changed grant", name)
		}
	}
	r = one.Do(t, apptest.Admin, "PATCH", "/v1/grants/"+g.ID, map[string]any{"kinds": []string{}})
	want(t, "widen grant", r, http.StatusOK)
	if !readable(two, "support-bot", order) {
		t.Error("replica two does not apply the widened grant")
	}
	// ...and revoking it on one makes the order unreadable on the very next
	// request on both, without waiting for pub/sub.
	r = one.Do(t, apptest.Admin, "DELETE", "/v1/grants/"+g.ID, nil)
	want(t, "revoke", r, http.StatusNoContent)
	if readable(two, "support-bot", order) {
		t.Error("replica two served a revoked grant's memory on the next request")
	}
	if readable(one, "support-bot", order) {
		t.Error("replica one served a revoked grant's memory on the next request")
	}

	// The decision log has the denied reads with the revisions that decided.
	r = one.Do(t, apptest.Admin, "GET", "/v1/grants", nil)
	want(t, "grants", r, http.StatusOK)
	var set policyadmin.GrantSet
	r.Decode(t, &set)
	var denied []policyadmin.DecisionRecord
	if _, ok := until(3*time.Second, func() bool {
		r := two.Do(t, apptest.Admin, "GET", "/v1/decisions?principal=agent:support-bot&result=deny&action=read", nil)
		want(t, "decisions", r, http.StatusOK)
		var body struct{ Decisions []policyadmin.DecisionRecord }
		r.Decode(t, &body)
		denied = body.Decisions
		return len(denied) >= 3
	}); !ok {
		t.Fatalf("decision log has %d denied reads of support-bot, want 3 (changed grant on both, revoked on both)", len(denied))
	}
	last := denied[0]
	if last.Resource.ID != order || last.GrantRevision != set.Revision || last.PolicyRevision != 0 ||
		len(last.Reasons) == 0 || last.Principal.ID != "support-bot" {
		t.Errorf("newest denied read %+v; want the order, grant revision %d, policy revision 0", last, set.Revision)
	}
	r = one.Do(t, apptest.Admin, "GET", "/v1/decisions?principal=admin&action=read", nil)
	want(t, "admin decisions", r, http.StatusOK)
	if strings.Contains(string(r.Body), "Q3 launch") || strings.Contains(string(r.Body), "standing desk") {
		t.Error("the decision log holds memory content")
	}
	var admins struct{ Decisions []policyadmin.DecisionRecord }
	r.Decode(t, &admins)
	sawRevision := false
	for _, d := range admins.Decisions {
		if d.Resource.ID == plan && d.Result == policyadmin.ResultDeny && d.PolicyRevision == pushed.Revision.Number {
			sawRevision = true
		}
	}
	if !sawRevision {
		t.Errorf("no denied read of the plan by revision %s in the log: %+v", n, admins.Decisions)
	}
}

// TestReplicaWithoutRedisDenies shows that a replica that cannot read the
// revisions answers 503 rather than decide with what it has.
func TestReplicaWithoutRedisDenies(t *testing.T) {
	one := apptest.Start(t)
	lost := replica(t, one.Tenant, one.Keys)
	r := lost.Do(t, apptest.Admin, "GET", "/v1/whoami", nil)
	want(t, "before", r, http.StatusOK)
	if err := lost.App.Redis.Close(); err != nil {
		t.Fatal(err)
	}
	r = lost.Do(t, apptest.Admin, "GET", "/v1/memories", nil)
	want(t, "without Redis", r, http.StatusServiceUnavailable)
}
