package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"mneme/client"
	"mneme/internal/apptest"
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
