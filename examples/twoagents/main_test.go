package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"mneme/client"
	"mneme/internal/apptest"
	"mneme/seed"
)

func TestTheOrderBotReadsTheNoteThroughTheGrant(t *testing.T) {
	f := apptest.Start(t)
	env := map[string]string{
		"MNEME_URL": f.URL, "SUPPORT_KEY": f.Keys["support-bot"], "ORDER_KEY": f.Keys["order-bot"], "ADMIN_KEY": f.Keys[apptest.Admin],
	}
	o, err := scenario(context.Background(), env["MNEME_URL"], env["SUPPORT_KEY"], env["ORDER_KEY"], env["ADMIN_KEY"])
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Before.Memories) != 0 || strings.Contains(o.Before.Context, "concierge") {
		t.Errorf("before the grant the order bot recalled %+v", o.Before.Memories)
	}
	ids := func(rs []client.Recalled) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Memory.ID)
		}
		return out
	}(o.After.Memories)
	if !slices.Contains(ids, o.Note.ID) || !strings.Contains(o.After.Context, "left with the building's concierge") {
		t.Errorf("after the grant the order bot recalled %v, want the note %s", ids, o.Note.ID)
	}
	if slices.Contains(ids, o.Secret.ID) || strings.Contains(o.After.Context, "dispute") {
		t.Errorf("the confidential note came through a grant up to internal: %v", ids)
	}

	// The command itself, as a reader would run it, in a tenant of its own.
	g := apptest.Start(t)
	var out bytes.Buffer
	getenv := func(k string) string {
		return map[string]string{"MNEME_URL": g.URL, "SUPPORT_KEY": g.Keys["support-bot"], "ORDER_KEY": g.Keys["order-bot"], "ADMIN_KEY": g.Keys[apptest.Admin]}[k]
	}
	if err := run(context.Background(), getenv, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "before the grant: 0 memories") || !strings.Contains(out.String(), "concierge") {
		t.Errorf("output:\n%s", out.String())
	}
}

// TestOnTheDemoDataAndAgain runs the scenario as the README does, against
// the demo tenant where Alice has many memories, twice: each run shows the
// note only after the grant, and leaves no grant behind.
func TestOnTheDemoDataAndAgain(t *testing.T) {
	f := apptest.Start(t)
	ds, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := f.App.LoadDemo(ctx); err != nil {
		t.Fatalf("load demo: %v", err)
	}
	key := ds.KeyOf()
	admin := client.New(f.URL, key["admin"], nil)
	list := func() []client.Grant {
		t.Helper()
		set, err := admin.ListGrants(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return set.Grants
	}
	// Grants like the scenario's left by an earlier version of it, which
	// did not withdraw its grant, in a database tests reuse.
	for _, g := range list() {
		if g.Grantee == "order-bot" && g.Source == "support-bot" && slices.Equal(g.Kinds, []string{"delivery_note"}) {
			if err := admin.DeleteGrant(ctx, g.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	grants := func() []string {
		var ids []string
		for _, g := range list() {
			ids = append(ids, g.ID)
		}
		slices.Sort(ids)
		return ids
	}
	inForce := grants()
	for _, run := range []string{"first", "second"} {
		o, err := scenario(ctx, f.URL, key["support-bot"], key["order-bot"], key["admin"])
		if err != nil {
			t.Fatal(err)
		}
		ids := func(rs []client.Recalled) []string {
			var out []string
			for _, r := range rs {
				out = append(out, r.Memory.ID)
			}
			return out
		}
		if slices.Contains(ids(o.Before.Memories), o.Note.ID) {
			t.Errorf("%s run: the note came before the grant", run)
		}
		if after := ids(o.After.Memories); !slices.Contains(after, o.Note.ID) || slices.Contains(after, o.Secret.ID) {
			t.Errorf("%s run: after the grant the order bot recalled %v, want the note %s and not the secret %s:\n%s", run, after, o.Note.ID, o.Secret.ID, o.After.Context)
		}
		if got := grants(); !slices.Equal(got, inForce) {
			t.Errorf("%s run: grants %v after it, want %v", run, got, inForce)
		}
	}

	// The command as the README runs it against `make run`: no key given,
	// the demo's.
	var out bytes.Buffer
	getenv := func(k string) string { return map[string]string{"MNEME_URL": f.URL}[k] }
	if err := run(ctx, getenv, &out); err != nil {
		t.Fatalf("without keys: %v", err)
	}
	if !strings.Contains(out.String(), "left with the building's concierge") || strings.Contains(out.String(), "dispute") {
		t.Errorf("without keys, output:\n%s", out.String())
	}
	if got := grants(); !slices.Equal(got, inForce) {
		t.Errorf("grants %v after the run without keys, want %v", got, inForce)
	}
}

// TestKeysDefaultToTheDemos: a key not given is the demo tenant's key of
// its principal, which `make run` seeds; one given is used as it is.
func TestKeysDefaultToTheDemos(t *testing.T) {
	ds, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	demo := ds.KeyOf()
	for _, c := range []struct {
		name string
		env  map[string]string
		want [3]string
	}{
		{"none given", nil, [3]string{demo["support-bot"], demo["order-bot"], demo["admin"]}},
		{"all given", map[string]string{"SUPPORT_KEY": "mn_t_s", "ORDER_KEY": "mn_t_o", "ADMIN_KEY": "mn_t_a"}, [3]string{"mn_t_s", "mn_t_o", "mn_t_a"}},
		{"the admin's given", map[string]string{"ADMIN_KEY": "mn_t_a"}, [3]string{demo["support-bot"], demo["order-bot"], "mn_t_a"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, o, a, err := keys(func(k string) string { return c.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if got := [3]string{s, o, a}; got != c.want || s == "" || o == "" || a == "" {
				t.Errorf("keys = %q, want %q", got, c.want)
			}
		})
	}
}
