package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"mneme/internal/apptest"
	"mneme/memory"
)

// TestCommands drives memctl against the real service as an admin would.
func TestCommands(t *testing.T) {
	f := apptest.Start(t)
	memctl := func(key string, args ...string) (string, error) {
		var out, errOut bytes.Buffer
		getenv := func(name string) string {
			switch name {
			case "MNEME_URL":
				return f.URL
			case "MNEME_API_KEY":
				return key
			}
			return ""
		}
		err := run(context.Background(), args, getenv, &out, &errOut)
		return out.String(), err
	}

	out, err := memctl(f.Keys["admin"], "whoami")
	if err != nil || !strings.Contains(out, `"kind": "admin"`) {
		t.Fatalf("whoami = %q, %v", out, err)
	}

	out, err = memctl(f.Keys["admin"], "grants", "add", `{"grantee":"support-bot","source":"order-bot","types":["episodic"],"max_sensitivity":"internal"}`)
	if err != nil {
		t.Fatalf("grants add: %v", err)
	}
	var g memory.Grant
	if err := json.Unmarshal([]byte(out), &g); err != nil || g.ID == "" || g.Grantee != "support-bot" {
		t.Fatalf("grants add printed %q", out)
	}
	if out, err = memctl(f.Keys["admin"], "grants", "list"); err != nil || !strings.Contains(out, g.ID) {
		t.Fatalf("grants list = %q, %v", out, err)
	}
	if out, err = memctl(f.Keys["admin"], "grants", "remove", g.ID); err != nil || strings.TrimSpace(out) != "ok" {
		t.Fatalf("grants remove = %q, %v", out, err)
	}
	if out, _ = memctl(f.Keys["admin"], "grants", "list"); strings.Contains(out, g.ID) {
		t.Fatalf("grant still listed after remove: %q", out)
	}

	// Erase a user: the receipt counts what went, a second erase counts zeros.
	m := f.Do(t, "order-bot", "POST", "/v1/memories", memory.NewMemory{UserID: "carol", Type: memory.TypeSemantic, Content: "Carol's budget is 100k"})
	if m.Status != http.StatusCreated {
		t.Fatalf("write = %d %s", m.Status, m.Body)
	}
	var created memory.Memory
	m.Decode(t, &created)
	for i, want := range []int64{1, 0} {
		out, err = memctl(f.Keys["admin"], "erase", "carol")
		var r memory.Receipt
		if err != nil || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("erase = %q, %v", out, err)
		}
		if r.Counts[memory.PlaceGraphMemories] != want || r.UserID != "carol" {
			t.Errorf("erase #%d: receipt %+v, want %d memories", i+1, r, want)
		}
	}
	if _, err = memctl(f.Keys["admin"], "get", created.ID); err == nil || !strings.Contains(err.Error(), "not_found") {
		t.Errorf("get after erase: %v, want not_found", err)
	}

	// Delete with a reason: the tombstone keeps it, as the user's export shows.
	m = f.Do(t, "order-bot", "POST", "/v1/memories", memory.NewMemory{UserID: "dan", Type: memory.TypeSemantic, Content: "Dan's budget is 80k"})
	if m.Status != http.StatusCreated {
		t.Fatalf("write = %d %s", m.Status, m.Body)
	}
	m.Decode(t, &created)
	if out, err = memctl(f.Keys["admin"], "delete", created.ID, "Dan", "asked", "by", "mail"); err != nil || !strings.Contains(out, created.ID) {
		t.Fatalf("delete with a reason = %q, %v", out, err)
	}
	var doc struct{ Tombstones []struct{ ID, Reason string } }
	f.Do(t, "admin", "GET", "/v1/users/dan/export", nil).Decode(t, &doc)
	if len(doc.Tombstones) != 1 || doc.Tombstones[0].ID != created.ID || doc.Tombstones[0].Reason != "Dan asked by mail" {
		t.Errorf("tombstones after delete with a reason: %+v", doc.Tombstones)
	}

	// The janitor: a dry run and a run of a fresh tenant change nothing.
	for _, mode := range []string{"dry-run", "run"} {
		out, err = memctl(f.Keys["admin"], "janitor", mode)
		var r memory.SweepReport
		if err != nil || json.Unmarshal([]byte(out), &r) != nil || r.DryRun != (mode == "dry-run") || r.Tenants != 1 {
			t.Errorf("janitor %s = %q, %v", mode, out, err)
		}
	}

	// Errors carry the server's code; usage errors say what is wrong.
	tests := []struct {
		name, key string
		args      []string
		want      string
	}{
		{"agent may not manage grants", f.Keys["support-bot"], []string{"grants", "list"}, "forbidden"},
		{"bad key", "mn_" + f.Tenant + "_nope-nope-nope", []string{"whoami"}, "unauthenticated"},
		{"unknown memory", f.Keys["admin"], []string{"get", "mem_missing"}, "not_found"},
		{"delete unknown memory", f.Keys["admin"], []string{"delete", "mem_missing"}, "not_found"},
		{"agent may not erase a user", f.Keys["support-bot"], []string{"erase", "alice"}, "forbidden"},
		{"agent may not run the janitor", f.Keys["support-bot"], []string{"janitor", "run"}, "forbidden"},
		{"janitor needs a mode", f.Keys["admin"], []string{"janitor"}, "unknown command"},
		{"invalid grant", f.Keys["admin"], []string{"grants", "add", `{"grantee":"x","source":"y","types":[],"max_sensitivity":"internal"}`}, "invalid_argument"},
		{"no key", "", []string{"whoami"}, "API key is needed"},
		{"unknown command", f.Keys["admin"], []string{"frobnicate"}, "unknown command"},
		{"bad list filter", f.Keys["admin"], []string{"list", "user"}, "not name=value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := memctl(tt.key, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("memctl %v: error %v, want it to mention %q", tt.args, err, tt.want)
			}
		})
	}
}

func TestKeysPrintsTheDemoKeys(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), []string{"keys"}, func(string) string { return "" }, &out, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tenant acme", "support-bot", "finance-bot", "admin", "mn_acme_"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("keys output lacks %q:\n%s", want, out.String())
		}
	}
}
