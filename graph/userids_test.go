package graph

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mneme/internal/testenv"
	"mneme/memory"
	"mneme/userids"
)

// TestCaseTwinUsersRefused writes about carol, then about ids that differ
// from hers only by case, through each write path that can make a user:
// every one is refused naming carol and leaves no second user behind.
func TestCaseTwinUsersRefused(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	if _, err := s.CreateMemories(testCtx(t), []memory.Memory{newMemory(tenant, "carol", "carol likes tea")}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		write func(user string) error
	}{
		{"batch", func(user string) error {
			_, err := s.CreateMemories(testCtx(t), []memory.Memory{newMemory(tenant, "zed", "zed likes coffee"), newMemory(tenant, user, "likes coffee")})
			return err
		}},
		{"deduplicated", func(user string) error {
			_, err := s.WriteDeduped(testCtx(t), dedupWrite(tenant, newMemory(tenant, user, "likes cocoa")))
			return err
		}},
		{"reinforcement", func(user string) error {
			m, err := s.CreateMemories(testCtx(t), []memory.Memory{newMemory(tenant, "carol", "carol likes juice")})
			if err != nil {
				return err
			}
			_, err = s.ReinforceMemory(testCtx(t), tenant, m[0].ID, memory.Reinforcement{UserID: user, At: m[0].CreatedAt})
			return err
		}},
	} {
		for _, user := range []string{"Carol", "CAROL", "caroL"} {
			t.Run(tt.name+"/"+user, func(t *testing.T) {
				err := tt.write(user)
				var conflict *userids.CaseConflictError
				if !errors.As(err, &conflict) || !errors.Is(err, memory.ErrConflict) {
					t.Fatalf("write about %s = %v, want a CaseConflictError", user, err)
				}
				if want := (userids.CaseConflictError{ID: user, Existing: "carol"}); *conflict != want {
					t.Errorf("conflict %+v, want %+v", *conflict, want)
				}
			})
		}
	}
	rows := query(t, `MATCH (u:User {tenant: $tenant}) RETURN u.id AS id, u.id_fold AS fold, u._created AS created ORDER BY id`, map[string]any{"tenant": tenant})
	want := []map[string]any{{"id": "carol", "fold": "CAROL", "created": nil}}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("users (-want +got):\n%s", d)
	}
	// carol herself, and a user of another name, are written about.
	if _, err := s.CreateMemories(testCtx(t), []memory.Memory{newMemory(tenant, "carol", "carol likes milk"), newMemory(tenant, "carola", "carola likes milk")}); err != nil {
		t.Errorf("write about carol and carola: %v", err)
	}
}
