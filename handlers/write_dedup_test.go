package handlers_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mneme/client"
	"mneme/internal/apptest"
	"mneme/memory"
)

// Concurrent writes of one fact for one user: the dedup search runs under
// the write's user lock, so exactly one write creates the memory and every
// other one reinforces it.
func TestConcurrentRepeatsCreateOnce(t *testing.T) {
	f := apptest.Start(t)
	const writers = 8
	outcomes := make([]client.Memory, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Near-identical, not equal: case, spacing and punctuation differ.
			content := "Dana asked for her invoice 4711 to be sent again"
			if i%2 == 1 {
				content = "  dana asked for her invoice 4711 to be sent again!"
			}
			w, err := f.Client(t, "support-bot").Add(t.Context(), client.NewMemory{
				UserID: "dana", Type: client.TypeEpisodic, Content: content,
			})
			if err != nil || len(w.Memories) != 1 || len(w.Results) != 1 {
				t.Errorf("write %d: %+v, %v", i, w, err)
				return
			}
			outcomes[i] = w.Memories[0]
			outcomes[i].Outcome = w.Results[0].Outcome
		}()
	}
	wg.Wait()
	created, reinforced := 0, 0
	ids := map[string]bool{}
	for _, m := range outcomes {
		switch m.Outcome {
		case client.OutcomeCreated:
			created++
		case client.OutcomeReinforced:
			reinforced++
		}
		ids[m.ID] = true
	}
	if created != 1 || reinforced != writers-1 || len(ids) != 1 {
		t.Fatalf("%d created, %d reinforced, %d ids; want 1, %d, 1", created, reinforced, len(ids), writers-1)
	}
	stored := list(t, f, "support-bot", "user_id=dana")
	if len(stored) != 1 || stored[0].EvidenceCount != writers {
		t.Errorf("stored %d memories (evidence %v), want 1 with evidence %d", len(stored), evidence(stored), writers)
	}
}

func evidence(ms []client.Memory) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.EvidenceCount
	}
	return out
}

// The same writes made synchronously for one user and through the queue
// for another end the same: outcome, status and reason per write, and the
// same memories in the graph. Among them a repeat, chit-chat, an inference
// and a preference that becomes active in its second session.
func TestAsyncWritesEndLikeSyncOnes(t *testing.T) {
	f := apptest.Start(t)
	writes := []client.NewMemory{
		{Type: client.TypeEpisodic, Content: "%s reported that the invoice PDF is blank"},
		{Type: client.TypeEpisodic, Content: "%s reported that the invoice PDF is blank."},
		{Type: client.TypeEpisodic, Content: "Thanks a lot!"},
		{Type: client.TypeSemantic, Kind: "fact", Source: memory.SourceInferred, Content: "%s probably works in the purchasing department of Acme"},
		{SessionID: "s-1", Type: client.TypeProfile, Kind: "preference", Key: "drink", Content: "%s prefers green tea without sugar."},
		{SessionID: "s-1", Type: client.TypeProfile, Kind: "preference", Key: "drink", Content: "%s prefers green tea without sugar"},
		{SessionID: "s-2", Type: client.TypeProfile, Kind: "preference", Key: "drink", Content: "%s prefers green tea, without sugar."},
		{Type: client.TypeSemantic, Kind: "budget", Key: "budget", Content: "%s's purchasing budget is 100k"},
		{Type: client.TypeSemantic, Kind: "budget", Key: "budget", Content: "%s's purchasing budget is 150k"},
		{Type: client.TypeSemantic, Kind: "budget", Key: "budget", Content: "%s's purchasing budget is 150k."},
	}
	as := func(user string, n client.NewMemory) client.NewMemory {
		n.UserID = user
		n.Content = strings.ReplaceAll(n.Content, "%s", user)
		if n.SessionID != "" { // a session id belongs to one user
			n.SessionID += "-" + user
		}
		return n
	}
	type outcome struct{ Outcome, Status, Reason, Ref string }

	// Synchronously, one write after the other, for erin.
	var syncOut []outcome
	syncIDs := map[string]string{}
	for i, n := range writes {
		// A batch of one: its results carry the reasons.
		got := writeBatch(t, f, "support-bot", as("erin", n))
		res := got.Results[0]
		syncOut = append(syncOut, outcome{res.Outcome, res.Status, res.Reason, ref(syncIDs, res.ID, i)})
	}

	// Through the queue, one job per write, for frank; the jobs of one user
	// apply in order, in one batch or several.
	var jobs []string
	for i, n := range writes {
		st, err := f.Client(t, "support-bot").AddAsync(t.Context(), as("frank", n))
		// A worker may apply a job before the answer reads its status back.
		if err != nil || st.ID == "" || st.Status != memory.JobQueued && st.Status != memory.JobRunning && st.Status != memory.JobDone {
			t.Fatalf("async write %d: %+v, %v; want a queued (or already done) job", i, st, err)
		}
		jobs = append(jobs, st.ID)
	}
	var asyncOut []outcome
	asyncIDs := map[string]string{}
	for i, id := range jobs {
		st := waitJob(t, f, "support-bot", id)
		if st.Status != memory.JobDone || len(st.Memories) != 1 {
			t.Fatalf("job %d = %+v, want done with one memory", i, st)
		}
		m := st.Memories[0]
		asyncOut = append(asyncOut, outcome{m.Outcome, m.Status, m.Reason, ref(asyncIDs, m.ID, i)})
	}
	if d := cmp.Diff(syncOut, asyncOut); d != "" {
		t.Errorf("outcomes (-sync +async):\n%s", d)
	}

	// The graph holds the same memories for both users.
	type stored struct {
		Type, Kind, Key, Status string
		Evidence, Version       int
	}
	graphOf := func(user string) []stored {
		var out []stored
		for _, m := range list(t, f, "support-bot", "user_id="+user+"&limit=100") {
			out = append(out, stored{m.Type, m.Kind, m.Key, m.Status, m.EvidenceCount, m.Version})
		}
		return out
	}
	sortStored := func(xs []stored) {
		slices.SortFunc(xs, func(a, b stored) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	}
	sg, ag := graphOf("erin"), graphOf("frank")
	sortStored(sg)
	sortStored(ag)
	if len(sg) == 0 {
		t.Fatal("the synchronous writes stored nothing")
	}
	if d := cmp.Diff(sg, ag); d != "" {
		t.Errorf("graph (-sync +async):\n%s", d)
	}
	// And what they store is what the pipeline promises.
	want := []outcome{
		{client.OutcomeCreated, client.StatusActive, "", "#0"},
		{client.OutcomeReinforced, client.StatusActive, "", "#0"},
		{client.OutcomeSkipped, "", memory.ReasonChitChat, ""},
		{client.OutcomeCreated, client.StatusCandidate, memory.ReasonInferred, "#3"},
		{client.OutcomeCreated, client.StatusCandidate, memory.ReasonThreshold, "#4"},
		{client.OutcomeReinforced, client.StatusCandidate, memory.ReasonThreshold, "#4"},
		{client.OutcomeReinforced, client.StatusActive, "", "#4"},
		{client.OutcomeCreated, client.StatusActive, "", "#7"},
		{client.OutcomeCreated, client.StatusActive, "", "#8"},
		{client.OutcomeReinforced, client.StatusActive, "", "#8"},
	}
	if d := cmp.Diff(want, syncOut); d != "" {
		t.Errorf("sync outcomes (-want +got):\n%s", d)
	}
}

// ref names a memory id by the index of the write that first returned it,
// so that two runs with different ids compare.
func ref(seen map[string]string, id string, i int) string {
	if id == "" {
		return ""
	}
	if r, ok := seen[id]; ok {
		return r
	}
	seen[id] = fmt.Sprintf("#%d", i)
	return seen[id]
}

// Two facts whose numbers differ only by a decimal comma are two memories:
// "1,5%" is not "15%". A thousands comma is only how a number is grouped:
// "1,500" repeats "1500".
func TestDecimalCommaIsAnotherNumber(t *testing.T) {
	f := apptest.Start(t)
	c := f.Client(t, "support-bot")
	write := func(user, content string) client.WriteResult {
		t.Helper()
		w, err := c.Add(t.Context(), client.NewMemory{UserID: user, Type: client.TypeSemantic, Kind: "note", Content: content})
		if err != nil || len(w.Results) != 1 {
			t.Fatalf("write %q: %+v, %v", content, w, err)
		}
		return w.Results[0]
	}
	for _, tt := range []struct {
		user, first, second, want string
	}{
		{"dana", "Dana's discount is 1,5%.", "Dana's discount is 15%.", client.OutcomeCreated},
		{"erik", "Erik's parcel weighs 2,5 kg.", "Erik's parcel weighs 25 kg.", client.OutcomeCreated},
		{"fay", "Fay ordered 2,00 cartons.", "Fay ordered 200 cartons.", client.OutcomeCreated},
		{"gus", "Gus's budget is 1,500 USD.", "Gus's budget is 1500 USD.", client.OutcomeReinforced},
	} {
		t.Run(tt.user, func(t *testing.T) {
			first := write(tt.user, tt.first)
			second := write(tt.user, tt.second)
			if first.Outcome != client.OutcomeCreated || second.Outcome != tt.want {
				t.Fatalf("outcomes %q then %q, want created then %q", first.Outcome, second.Outcome, tt.want)
			}
			var contents []string
			for _, m := range list(t, f, "support-bot", "user_id="+tt.user) {
				contents = append(contents, m.Content)
			}
			slices.Sort(contents)
			want := []string{tt.first, tt.second}
			if tt.want == client.OutcomeReinforced {
				want = want[:1]
			}
			slices.Sort(want)
			if diff := cmp.Diff(want, contents); diff != "" {
				t.Errorf("stored contents (-want +got):\n%s", diff)
			}
		})
	}
}

// A write body naming another tenant or another author than the caller is
// refused, 403 forbidden, with a message that names the refused field, on
// every form of the write; naming the caller's own tenant is no refusal.
func TestWriteNamingAnotherPrincipalSaysWhichField(t *testing.T) {
	f := apptest.Start(t)
	mem := func(extra string) string {
		return `{"user_id":"alice","type":"semantic","kind":"note","content":"Alice asked about field refusals"` + extra + `}`
	}
	for _, tt := range []struct {
		name, path, body, field string
	}{
		{"another tenant", "/v1/memories", mem(`,"tenant":"globex"`), "tenant"},
		{"another tenant, queued", "/v1/memories?async=true", mem(`,"tenant":"globex"`), "tenant"},
		{"another tenant in a batch", "/v1/memories", `{"memories":[` + mem("") + `,` + mem(`,"tenant":"globex"`) + `]}`, "tenant"},
		{"another agent", "/v1/memories", mem(`,"agent_id":"finance-bot"`), "agent_id"},
		{"own tenant", "/v1/memories", mem(`,"tenant":"` + f.Tenant + `"`), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := f.Do(t, "support-bot", http.MethodPost, tt.path, []byte(tt.body))
			if tt.field == "" {
				expectResponse(t, tt.name, r, http.StatusCreated)
				return
			}
			expectResponse(t, tt.name, r, http.StatusForbidden, "forbidden")
			var e struct{ Message string }
			r.Decode(t, &e)
			if !strings.HasPrefix(e.Message, tt.field+": names another ") {
				t.Errorf("message %q, want one that names %s", e.Message, tt.field)
			}
		})
	}
}
