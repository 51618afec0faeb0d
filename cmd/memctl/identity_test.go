package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"mneme/app"
	"mneme/identity"
	"mneme/internal/apptest"
	"mneme/internal/testenv"
	"mneme/memory"
)

// onboarded is a tenant made from nothing: memctl tenant create, then its
// admin registers an agent and a user and gives each a key.
type onboarded struct {
	*apptest.Fixture
	keyIDs []string
}

func onboard(t *testing.T, f *apptest.Fixture, extra string) onboarded {
	t.Helper()
	tenant := testenv.Tenant(t)
	memctl := func(key string, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		getenv := func(name string) string {
			switch name {
			case "MNEME_URL":
				return f.URL
			case "MNEME_API_KEY":
				return key
			}
			return toolEnv(name)
		}
		if err := run(context.Background(), args, getenv, &out, &errOut); err != nil {
			t.Fatalf("memctl %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
		}
		return out.String()
	}
	out := memctl("", "tenant", "create", tenant)
	_, adminKey, ok := strings.Cut(out, "admin key (shown once, store it now): ")
	adminKey = strings.TrimSpace(adminKey)
	if !ok || !strings.HasPrefix(adminKey, "mn_"+tenant+"_") {
		t.Fatalf("tenant create printed %q", out)
	}
	o := onboarded{Fixture: &apptest.Fixture{URL: f.URL, App: f.App, Tenant: tenant, Keys: map[string]string{"admin": adminKey}}}
	memctl(adminKey, "principal", "create", "agent", "helper-bot", "team=support")
	if out := memctl(adminKey, "principal", "create", "user", "dana", "name=Dana Li"); !strings.Contains(out, `"name": "Dana Li"`) && !strings.Contains(out, `"name":"Dana Li"`) {
		t.Errorf("principal create with a name printed %q", out)
	}
	if out := memctl(adminKey, "principal", "change", "user", "dana", "name=Dana Wu"); !strings.Contains(out, `"name": "Dana Wu"`) && !strings.Contains(out, `"name":"Dana Wu"`) {
		t.Errorf("principal change of a name printed %q", out)
	}
	memctl(adminKey, "principal", "create", "agent", extra)
	for _, who := range [][2]string{{"agent", "helper-bot"}, {"user", "dana"}} {
		// Keys through REST itself, as the README's curl does.
		r := o.Do(t, "admin", http.MethodPost, "/v1/keys", identity.NewKey{OwnerKind: who[0], OwnerID: who[1]})
		if r.Status != http.StatusCreated {
			t.Fatalf("create key for %s: %d %s", who[1], r.Status, r.Body)
		}
		var issued identity.IssuedKey
		r.Decode(t, &issued)
		if issued.Key.Status != identity.StatusActive || !strings.HasPrefix(issued.Secret, issued.Key.Prefix) {
			t.Fatalf("issued key %+v", issued.Key)
		}
		o.Keys[who[1]] = issued.Secret
		o.keyIDs = append(o.keyIDs, issued.Key.ID)
	}
	// Creating the same tenant again is refused.
	var errOut bytes.Buffer
	err := run(context.Background(), []string{"tenant", "create", tenant}, toolEnv, &bytes.Buffer{}, &errOut)
	if err == nil || !strings.Contains(err.Error(), "tenant exists") {
		t.Errorf("second tenant create = %v", err)
	}
	return o
}

// toolEnv is the environment of memctl's commands that open the stores:
// the test's key secret, and the embedder the test stores are built for.
func toolEnv(name string) string {
	switch name {
	case "MNEME_KEY_SECRET":
		return testenv.KeySecret()
	case "MNEME_EMBEDDER":
		return app.EmbedderBuiltin
	case "MNEME_EMBED_DIM":
		return strconv.Itoa(testenv.EmbeddingDimension)
	}
	return os.Getenv(name)
}

// TestOnboarding starts two tenants from nothing and shows that their keys
// work and that neither sees anything of the other by any read path.
func TestOnboarding(t *testing.T) {
	f := apptest.Start(t)
	a := onboard(t, f, "only-in-a")
	b := onboard(t, f, "only-in-b")

	for _, who := range []string{"admin", "helper-bot", "dana"} {
		r := a.Do(t, who, http.MethodGet, "/v1/whoami", nil)
		var p memory.Principal
		r.Decode(t, &p)
		if r.Status != http.StatusOK || p.Tenant != a.Tenant || p.ID != who {
			t.Errorf("whoami as %s: %d %+v", who, r.Status, p)
		}
	}
	r := a.Do(t, "helper-bot", http.MethodPost, "/v1/memories", memory.NewMemory{
		UserID: "dana", Type: memory.TypeSemantic, Key: "contact_channel", Content: "Dana prefers e-mail over phone calls",
	})
	if r.Status != http.StatusCreated {
		t.Fatalf("agent write: %d %s", r.Status, r.Body)
	}
	var m memory.Memory
	r.Decode(t, &m)
	recall := func(fx *apptest.Fixture, who string) []memory.Recalled {
		r := fx.Do(t, who, http.MethodPost, "/v1/recall", memory.RecallRequest{UserID: "dana", Query: "How does Dana want to be contacted? e-mail or phone"})
		if r.Status != http.StatusOK {
			t.Fatalf("recall as %s: %d %s", who, r.Status, r.Body)
		}
		var res memory.RecallResult
		r.Decode(t, &res)
		return res.Memories
	}
	for _, who := range []string{"helper-bot", "dana"} {
		if got := recall(a.Fixture, who); len(got) == 0 || got[0].Memory.ID != m.ID {
			t.Errorf("recall as %s in tenant a: %d memories, want %s first", who, len(got), m.ID)
		}
	}

	// Tenant b, with principals of the same names, sees nothing of a.
	for _, who := range []string{"admin", "helper-bot", "dana"} {
		if got := recall(b.Fixture, who); len(got) != 0 {
			t.Errorf("recall as b's %s: %d memories of a", who, len(got))
		}
		for _, path := range []string{"/v1/memories/" + m.ID, "/v1/memories/" + m.ID + "/history"} {
			if r := b.Do(t, who, http.MethodGet, path, nil); r.Status != http.StatusNotFound {
				t.Errorf("b's %s GET %s: %d, want 404", who, path, r.Status)
			}
		}
		r := b.Do(t, who, http.MethodGet, "/v1/memories?user_id=dana", nil)
		if r.Status == http.StatusOK && strings.Contains(string(r.Body), m.ID) {
			t.Errorf("b's %s lists a's memory", who)
		}
	}
	r = b.Do(t, "admin", http.MethodGet, "/v1/principals", nil)
	var ps struct{ Principals []identity.Principal }
	r.Decode(t, &ps)
	var ids []string
	for _, p := range ps.Principals {
		ids = append(ids, p.Kind+":"+p.ID)
	}
	slices.Sort(ids)
	if want := []string{"admin:admin", "agent:helper-bot", "agent:only-in-b", "user:dana"}; !slices.Equal(ids, want) {
		t.Errorf("b's principals = %v, want %v", ids, want)
	}
	r = b.Do(t, "admin", http.MethodGet, "/v1/keys", nil)
	var ks struct{ Keys []identity.Key }
	r.Decode(t, &ks)
	for _, k := range ks.Keys {
		if slices.Contains(a.keyIDs, k.ID) {
			t.Errorf("b lists a's key %s", k.ID)
		}
	}
	if len(ks.Keys) != 3 {
		t.Errorf("b has %d keys, want its admin's and two", len(ks.Keys))
	}
	for _, req := range []struct{ method, path string }{
		{http.MethodGet, "/v1/principals/agent/only-in-a"},
		{http.MethodDelete, "/v1/principals/agent/only-in-a"},
		{http.MethodGet, "/v1/keys/" + a.keyIDs[0]},
		{http.MethodDelete, "/v1/keys/" + a.keyIDs[0]},
		{http.MethodPost, "/v1/keys/" + a.keyIDs[0] + "/rotate"},
	} {
		if r := b.Do(t, "admin", req.method, req.path, nil); r.Status != http.StatusNotFound {
			t.Errorf("b's admin %s %s: %d, want 404", req.method, req.path, r.Status)
		}
	}
	// a's keys still work after all that.
	if r := a.Do(t, "helper-bot", http.MethodGet, "/v1/memories/"+m.ID, nil); r.Status != http.StatusOK {
		t.Errorf("a's agent reads its memory: %d", r.Status)
	}
	// Keys carry their tenant: a's key names a, and only a.
	raw, _ := json.Marshal(a.Keys)
	if strings.Contains(string(raw), "mn_"+b.Tenant) {
		t.Error("a key of a names b")
	}
}
