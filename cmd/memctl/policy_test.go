package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
)

// TestPolicyCommands walks an admin's round trip: export the bundled policy,
// edit it, test, push, diff, simulate, replay, activate, read the decision
// log, roll back; and the rejections of a policy that may not run.
func TestPolicyCommands(t *testing.T) {
	f := apptest.Start(t)
	memctl := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		getenv := func(name string) string {
			switch name {
			case "MNEME_URL":
				return f.URL
			case "MNEME_API_KEY":
				return f.Keys[apptest.Admin]
			}
			return ""
		}
		err := run(context.Background(), args, getenv, &out, &errOut)
		return out.String(), err
	}
	must := func(args ...string) string {
		t.Helper()
		out, err := memctl(args...)
		if err != nil {
			t.Fatalf("memctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}

	dir := t.TempDir()
	if out := must("policy", "export", "0", dir); !strings.Contains(out, "modules written") {
		t.Fatalf("export printed %q", out)
	}
	authz := filepath.Join(dir, "authz.rego")
	src, err := os.ReadFile(authz)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(src), "\tknown_sensitivity\n}", "\tknown_sensitivity\n\tnot secret_plan\n}", 1) +
		"\nsecret_plan if input.resource.kind == \"secret-plan\"\n\ndenials contains \"secret plans are never read\" if secret_plan\n"
	if err := os.WriteFile(authz, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	must("policy", "test", dir)
	var pushed struct{ Revision policyadmin.PolicyRevision }
	if err := json.Unmarshal([]byte(must("policy", "push", "-m", "no secret plans", dir)), &pushed); err != nil || pushed.Revision.Number < 1 {
		t.Fatalf("push: %+v, %v", pushed, err)
	}
	n := strconv.FormatInt(pushed.Revision.Number, 10)
	if out := must("policy", "list"); !strings.Contains(out, "no secret plans") {
		t.Errorf("list lacks the revision: %s", out)
	}
	if out := must("policy", "diff", "0", n); !strings.Contains(out, "+secret_plan if input.resource.kind == \"secret-plan\"") {
		t.Errorf("diff:\n%s", out)
	}
	input := `{"principal":{"kind":"admin","id":"admin"},"action":"read","resource":{"user_id":"alice","type":"semantic","kind":"secret-plan","sensitivity":"internal"}}`
	var sim policyadmin.Simulation
	if err := json.Unmarshal([]byte(must("policy", "simulate", n, input, "explain")), &sim); err != nil || sim.Allow || len(sim.Explanation) == 0 {
		t.Errorf("simulate: %+v, %v", sim, err)
	}
	if err := json.Unmarshal([]byte(must("policy", "simulate", dir, input)), &sim); err != nil || sim.Allow {
		t.Errorf("simulate a directory: %+v, %v", sim, err)
	}

	// A read of a secret plan, allowed now, then replayed against the draft.
	r := f.Do(t, "order-bot", "POST", "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Kind: "secret-plan", Content: "Launch in October"})
	var plan memory.Memory
	r.Decode(t, &plan)
	if r := f.Do(t, apptest.Admin, "GET", "/v1/memories/"+plan.ID, nil); r.Status != 200 {
		t.Fatalf("admin read the plan: %d", r.Status)
	}
	var rep policyadmin.ReplayReport
	for range 50 { // the log is written asynchronously
		if err := json.Unmarshal([]byte(must("policy", "replay", n, "100")), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.AllowToDeny > 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if rep.AllowToDeny == 0 || rep.Changes[0].Decision.Resource.ID != plan.ID {
		t.Errorf("replay: %+v", rep)
	}
	// The same draft, from the directory: checked as a push, never stored.
	var inline policyadmin.ReplayReport
	if err := json.Unmarshal([]byte(must("policy", "replay", dir, "100")), &inline); err != nil {
		t.Fatal(err)
	}
	if inline.AllowToDeny == 0 || inline.Check == nil || inline.Check.Digest != pushed.Revision.Digest {
		t.Errorf("replay of the directory: %+v (check %+v)", inline, inline.Check)
	}
	if out := must("policy", "list"); strings.Count(out, `"number"`) != 2 {
		t.Errorf("an inline replay became a revision:\n%s", out)
	}

	must("policy", "activate", n)
	if r := f.Do(t, apptest.Admin, "GET", "/v1/memories/"+plan.ID, nil); r.Status != 404 {
		t.Errorf("admin read the plan under revision %s: %d", n, r.Status)
	}
	var out string
	for range 50 { // the log is written asynchronously
		if out = must("decisions", "result=deny", "principal=admin:admin", "limit=1"); strings.Contains(out, plan.ID) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(out, plan.ID) || !strings.Contains(out, `"policy_revision": `+n) {
		t.Errorf("decisions: %s", out)
	}
	var st policyadmin.PolicyState
	if err := json.Unmarshal([]byte(must("policy", "rollback")), &st); err != nil || st.Active != 0 {
		t.Errorf("rollback: %+v, %v", st, err)
	}
	if out := must("policy", "show"); !strings.Contains(out, `"active": 0`) {
		t.Errorf("show: %s", out)
	}

	// Rejections name their code and never become a revision.
	bad := filepath.Join(t.TempDir(), "authz.rego")
	for _, tc := range []struct{ src, code string }{
		{edited + "\nphone_home if http.send({\"method\": \"GET\", \"url\": \"http://127.0.0.1:1/\"})\n", "policy_forbidden_builtin"},
		{strings.Replace(edited, "default allow := false", "default allow := ", 1), "policy_parse_error"},
	} {
		if err := os.WriteFile(bad, []byte(tc.src), 0o644); err != nil {
			t.Fatal(err)
		}
		files := []string{bad}
		for _, name := range []string{"grants.rego", "roles.rego", "scope.rego"} {
			files = append(files, filepath.Join(dir, name))
		}
		if _, err := memctl(append([]string{"policy", "push"}, files...)...); err == nil || !strings.Contains(err.Error(), tc.code) {
			t.Errorf("push: %v, want %s", err, tc.code)
		}
		if _, err := memctl("policy", "replay", bad); err == nil || !strings.Contains(err.Error(), tc.code) {
			t.Errorf("replay: %v, want %s", err, tc.code)
		}
	}
	if out := must("policy", "list"); strings.Count(out, `"number"`) != 2 {
		t.Errorf("rejected pushes became revisions:\n%s", out)
	}

	// Grants change.
	var g memory.Grant
	if err := json.Unmarshal([]byte(must("grants", "add", `{"grantee":"support-bot","source":"order-bot","types":["episodic"],"max_sensitivity":"internal"}`)), &g); err != nil {
		t.Fatal(err)
	}
	if out := must("grants", "change", g.ID, `{"kinds":["order"]}`); !strings.Contains(out, `"order"`) {
		t.Errorf("grants change: %s", out)
	}

	// The audit trail holds what the admin did above.
	if out := must("audit", "action=policy.", "actor=admin:admin", "limit=1"); !strings.Contains(out, `"error": "policy_parse_error"`) {
		t.Errorf("audit: %s, want the rejected push last", out)
	}
	if out := must("audit", "action=policy.rollback"); !strings.Contains(out, `"target": "policy:0"`) {
		t.Errorf("audit of the rollback: %s", out)
	}
	if out := must("audit", "action=grant.update"); !strings.Contains(out, `"target": "grant:`+g.ID+`"`) {
		t.Errorf("audit of grant changes: %s", out)
	}
	if _, err := memctl("audit", "limit"); err == nil {
		t.Error("a filter without a value was accepted")
	}
	if _, err := memctl("policy", "frobnicate"); err == nil {
		t.Error("an unknown policy command succeeded")
	}
}
