package shared

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mneme/memory"
)

type recordingWriter struct{ got []memory.NewMemory }

func (w *recordingWriter) Write(_ context.Context, _ memory.Principal, in []memory.NewMemory) ([]memory.WriteResult, error) {
	w.got = in
	return make([]memory.WriteResult, len(in)), nil
}

func TestNewMemory(t *testing.T) {
	team := memory.ScopeRef{Kind: memory.ScopeTeam, ID: "sales"}
	tests := []struct {
		name    string
		d       Draft
		want    memory.NewMemory
		invalid bool
	}{
		{
			name: "rule of a team",
			d:    Draft{Scope: team, Key: "approval_threshold", Type: memory.TypeSemantic, Kind: "rule", Content: "Orders above 50k CNY need approval."},
			want: memory.NewMemory{Scope: &team, Key: "approval_threshold", Type: memory.TypeSemantic, Kind: "rule", Content: "Orders above 50k CNY need approval."},
		},
		{
			name: "procedure with triggers from a document",
			d: Draft{Scope: team, Type: memory.TypeProcedural, Content: "Photograph the damage, then open a claim.",
				Triggers: []string{" Damaged item ", "破损"}, Document: "handbook.md"},
			want: memory.NewMemory{Scope: &team, Type: memory.TypeProcedural, Content: "Photograph the damage, then open a claim.",
				Source: "kb:handbook.md", Entities: []memory.Entity{
					{ID: "document:handbook.md", Kind: EntityDocument, Name: "handbook.md"},
					{ID: "trigger:damaged item", Kind: EntityTrigger, Name: "Damaged item"},
					{ID: "trigger:破损", Kind: EntityTrigger, Name: "破损"},
				}},
		},
		{name: "no scope", d: Draft{Type: memory.TypeSemantic, Content: "x"}, invalid: true},
		{name: "user scope", d: Draft{Scope: memory.ScopeRef{Kind: memory.ScopeUser}, Type: memory.TypeSemantic, Content: "x"}, invalid: true},
		{name: "blank trigger", d: Draft{Scope: team, Type: memory.TypeProcedural, Content: "x", Triggers: []string{" "}}, invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NewMemory(tt.d)
			if tt.invalid {
				var ie *memory.InvalidError
				if !errors.As(err, &ie) {
					t.Fatalf("NewMemory = %v, want an invalid-argument error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("NewMemory (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteIsOneBatch(t *testing.T) {
	w := &recordingWriter{}
	s, err := New(w)
	if err != nil {
		t.Fatal(err)
	}
	tenant := memory.ScopeRef{Kind: memory.ScopeTenant}
	drafts := []Draft{
		{Scope: tenant, Key: "a", Type: memory.TypeSemantic, Content: "Rule A."},
		{Scope: tenant, Key: "b", Type: memory.TypeSemantic, Content: "Rule B."},
	}
	if _, err := s.Write(context.Background(), memory.Principal{Tenant: "acme", Kind: memory.KindAdmin, ID: "root"}, drafts); err != nil {
		t.Fatal(err)
	}
	if len(w.got) != 2 || w.got[0].Key != "a" || w.got[1].Key != "b" {
		t.Errorf("written %+v, want both drafts in order in one write", w.got)
	}
	if _, err := s.Write(context.Background(), memory.Principal{}, []Draft{drafts[0], {Type: memory.TypeSemantic}}); err == nil {
		t.Error("a batch with a draft without scope was written")
	}
}

func TestNewNeedsAWriter(t *testing.T) {
	if _, err := New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
}
