package longconv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/extract"
	"mneme/internal/apptest"
	"mneme/memory"
)

func TestReadLoCoMo(t *testing.T) {
	at := func(y int, m time.Month, d, h, min int) time.Time { return time.Date(y, m, d, h, min, 0, 0, time.UTC) }
	turn := func(id, speaker, content string, when time.Time) Turn {
		return Turn{ID: id, Role: "user", Speaker: speaker, Content: content, At: when}
	}
	want := Data{
		Format: FormatLoCoMo,
		Conversations: []Conversation{
			{ID: "conv-1", User: "conv-1", Sessions: []Session{
				{ID: "conv-1:session_1", Turns: []Turn{
					turn("D1:1", "Ana", "I started learning the cello.", at(2023, time.May, 8, 13, 56)),
					turn("D1:2", "Ben", "Nice! Here is my new kite. [photo: a photo of a red kite on a beach]", at(2023, time.May, 8, 13, 57)),
					turn("D1:3", "Ana", "My cello teacher is called Rosa.", at(2023, time.May, 8, 13, 58)),
				}},
				{ID: "conv-1:session_2", Turns: []Turn{
					turn("D2:1", "Ben", "The bakery on Elm Street finally opened.", at(2023, time.June, 3, 9, 5)),
					turn("D2:2", "Ana", "I tried their rye bread on Saturday.", at(2023, time.June, 3, 9, 6)),
				}},
				{ID: "conv-1:session_10", Turns: []Turn{
					turn("D10:1", "Ana", "My sister moved to Porto last week.", at(2023, time.July, 1, 19, 40)),
				}},
			}},
			{ID: "conv-2", User: "conv-2", Sessions: []Session{
				{ID: "conv-2:session_1", Turns: []Turn{
					turn("D1:1", "Dev", "Happy new year, Cleo!", at(2022, time.December, 31, 23, 30)),
					turn("D1:2", "Cleo", "Same to you. I am running a marathon in spring.", at(2022, time.December, 31, 23, 31)),
				}},
			}},
		},
		Questions: []Question{
			{ID: "conv-1-q0", Conversation: "conv-1", Query: "What instrument is Ana learning?", Category: CategorySingleHop, Evidence: []string{"D1:1"}},
			{ID: "conv-1-q1", Conversation: "conv-1", Query: "When did Ana try the rye bread?", Category: CategoryTemporal, Evidence: []string{"D2:2"}},
			{ID: "conv-1-q2", Conversation: "conv-1", Query: "Who teaches Ana, and where did her sister move?", Category: CategoryMultiHop, Evidence: []string{"D1:3"}},
			{ID: "conv-1-q5", Conversation: "conv-1", Query: "What does Ben fly on the beach?", Category: CategoryOpenDomain, Evidence: []string{"D1:2"}},
			{ID: "conv-2-q0", Conversation: "conv-2", Query: "What is Cleo training for?", Category: CategorySingleHop, Evidence: []string{"D1:2"}},
		},
		LeftOut:         map[string]int{LeftOutAdversarial: 2, LeftOutNoEvidence: 1},
		SkippedEvidence: 2,
	}
	got, err := Open("testdata/locomo")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Open (-want +got):\n%s", diff)
	}
	cs, qs, err := Read("testdata/locomo")
	if err != nil || !cmp.Equal(cs, want.Conversations) || !cmp.Equal(qs, want.Questions) {
		t.Errorf("Read differs from Open: %v", err)
	}
}

func TestOpenTellsTheFormats(t *testing.T) {
	for dir, format := range map[string]string{"testdata/locomo": FormatLoCoMo, "testdata/mia": FormatCRI, "testdata": FormatCRI} {
		d, err := Open(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if d.Format != format {
			t.Errorf("%s: format %q, want %q", dir, d.Format, format)
		}
	}
}

func TestReadLoCoMoRefusesBadData(t *testing.T) {
	// sample builds a one-sample file from a conversation's extra members
	// and its qa list.
	sample := func(id, conversation, qa string) string {
		return `[{"sample_id": "` + id + `", "conversation": {` + conversation + `}, "qa": [` + qa + `]}]`
	}
	const (
		speakers = `"speaker_a": "Ana", "speaker_b": "Ben"`
		dated    = `"session_1_date_time": "1:56 pm on 8 May, 2023"`
		oneTurn  = `"session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "hello"}]`
		good     = speakers + ", " + dated + ", " + oneTurn
		question = `{"question": "q?", "answer": "a", "evidence": ["D1:1"], "category": 4}`
	)
	tests := map[string]struct{ file, says string }{
		"not JSON":              {`[{"sample_id": "conv-1",`, "unexpected end"},
		"not a list":            {`{"sample_id": "conv-1"}`, "cannot unmarshal"},
		"no samples":            {`[]`, "no samples"},
		"no sample id":          {sample("", good, question), "sample_id"},
		"repeated sample id":    {strings.Replace(sample("conv-1", good, question), "}]}]", "}]}, "+sample("conv-1", good, question)[1:], 1), "repeated"},
		"no speaker_b":          {sample("conv-1", `"speaker_a": "Ana", `+dated+", "+oneTurn, question), "no speaker_b"},
		"no sessions":           {sample("conv-1", speakers+", "+dated, question), "no session_N"},
		"session without date":  {sample("conv-1", speakers+", "+oneTurn, question), "no session_1_date_time"},
		"unreadable date":       {sample("conv-1", speakers+`, "session_1_date_time": "8 May 2023", `+oneTurn, question), "want a date like"},
		"empty session":         {sample("conv-1", speakers+", "+dated+`, "session_1": []`, question), "no turns"},
		"turn without dia_id":   {sample("conv-1", speakers+", "+dated+`, "session_1": [{"speaker": "Ana", "text": "hi"}]`, question), "dia_id"},
		"repeated dia_id":       {sample("conv-1", speakers+", "+dated+`, "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "a"}, {"speaker": "Ben", "dia_id": "D1:1", "text": "b"}]`, question), "repeated"},
		"a third speaker":       {sample("conv-1", speakers+", "+dated+`, "session_1": [{"speaker": "Eve", "dia_id": "D1:1", "text": "hi"}]`, question), `speaker "Eve"`},
		"turn without text":     {sample("conv-1", speakers+", "+dated+`, "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": ""}]`, question), "no text"},
		"question without text": {sample("conv-1", good, `{"question": "", "evidence": ["D1:1"], "category": 4}`), "conv-1-q0 has no text"},
		"unknown category":      {sample("conv-1", good, `{"question": "q?", "evidence": ["D1:1"], "category": 7}`), "category 7"},
		"no category":           {sample("conv-1", good, `{"question": "q?", "evidence": ["D1:1"]}`), "category 0"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "locomo10.json"), []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Open(dir)
			if err == nil {
				t.Fatal("Open accepted it")
			}
			if !strings.Contains(err.Error(), tt.says) {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
		})
	}
	// The same file with its defects mended is read.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "locomo10.json"), []byte(sample("conv-1", good, question)), 0o644); err != nil {
		t.Fatal(err)
	}
	if d, err := Open(dir); err != nil || len(d.Questions) != 1 {
		t.Errorf("a well-formed file: %v, %+v", err, d)
	}
}

// TestLoadLoCoMo writes a LoCoMo conversation through the real write
// pipeline: each turn is stored under its speaker's name, a shared photo
// by its caption, in a session of its own conversation, dated when it was
// said.
func TestLoadLoCoMo(t *testing.T) {
	f := apptest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	d, err := Open("testdata/locomo")
	if err != nil {
		t.Fatal(err)
	}
	admin := memory.Principal{Tenant: f.Tenant, Kind: memory.KindAdmin, ID: "admin", Roles: []string{"admin"}}
	for _, c := range d.Conversations {
		f.AddUser(t, c.User)
		l, err := Load(ctx, f.App.Service, extract.NewRules(nil), f.Tenant, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.IDs) != c.Turns() {
			t.Fatalf("%s: %d of %d turns stored (%d skipped, %d refused)", c.ID, len(l.IDs), c.Turns(), l.Skipped, l.Refused)
		}
		for _, s := range c.Sessions {
			for _, turn := range s.Turns {
				m, err := f.App.Service.Get(ctx, admin, l.IDs[turn.ID])
				if err != nil {
					t.Fatalf("%s turn %s: %v", c.ID, turn.ID, err)
				}
				if m.Content != turn.Speaker+": "+turn.Content || m.SessionID != s.ID || m.UserID != c.User || !m.ValidFrom.Equal(turn.At) {
					t.Errorf("%s turn %s (%s, %s) stored as %+v", c.ID, turn.ID, s.ID, turn.At, m)
				}
			}
		}
	}
	kite := d.Conversations[0].Sessions[0].Turns[1]
	if kite.Speaker+": "+kite.Content != "Ben: Nice! Here is my new kite. [photo: a photo of a red kite on a beach]" {
		t.Errorf("photo turn %+v", kite)
	}
}
