package usernames

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// source knows users' names and counts the lookups.
type source struct {
	names   map[string]string
	err     error
	lookups int
}

func (s *source) UserName(_ context.Context, _, user string) (string, error) {
	s.lookups++
	return s.names[user], s.err
}

func (s *source) UserNames(_ context.Context, _ string, limit int) (map[string]string, error) {
	s.lookups++
	users := map[string]string{}
	for id, name := range s.names {
		if len(users) < limit {
			users[id] = name
		}
	}
	return users, s.err
}

func TestCache(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	src := &source{names: map[string]string{"u1": "Ethan Zhou"}}
	c := New(src, func() time.Time { return now })
	ctx := context.Background()
	steps := []struct {
		name    string
		do      func()
		want    string
		lookups int
	}{
		{"read once", nil, "Ethan Zhou", 1},
		{"kept within the TTL", func() { now = now.Add(TTL - time.Second) }, "Ethan Zhou", 1},
		{"read again after it", func() { src.names["u1"] = "Ethan Chen"; now = now.Add(time.Second) }, "Ethan Chen", 2},
		{"read again once forgotten", func() { src.names["u1"] = "Ethan Wu"; c.Forget("t", "u1") }, "Ethan Wu", 3},
		{"no name", func() { delete(src.names, "u1"); c.Forget("t", "u1") }, "", 4},
	}
	for _, st := range steps {
		if st.do != nil {
			st.do()
		}
		got, err := c.UserName(ctx, "t", "u1")
		if err != nil || got != st.want || src.lookups != st.lookups {
			t.Errorf("%s: %q, %v after %d lookups; want %q after %d", st.name, got, err, src.lookups, st.want, st.lookups)
		}
	}
	src.err = errors.New("down")
	c.Forget("t", "u1")
	if _, err := c.UserName(ctx, "t", "u1"); err == nil {
		t.Error("a failed read: no error")
	}
}

// Person knows the user by name and the tenant's other named users; a
// tenant with more than MaxNamed is read against none of them.
func TestCachePerson(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	src := &source{names: map[string]string{"u1": "Ethan Zhou", "u2": "Alice Wang"}}
	c := New(src, func() time.Time { return now })
	ctx := context.Background()
	who, err := c.Person(ctx, "t", "u1")
	if err != nil || who.Name != "Ethan Zhou" || len(who.Others) != 2 || !who.NamesOther("what does Alice prefer?") || who.NamesOther("what does Ethan prefer?") {
		t.Fatalf("Person = %+v, %v", who, err)
	}
	n := src.lookups
	if _, err := c.Person(ctx, "t", "u1"); err != nil || src.lookups != n {
		t.Errorf("read again within the TTL: %d lookups, want %d", src.lookups, n)
	}
	c.Forget("t", "u2")
	if _, err := c.Person(ctx, "t", "u1"); err != nil || src.lookups != n+1 {
		t.Errorf("after Forget: %d lookups, want the users read again (%d)", src.lookups, n+1)
	}
	for i := range MaxNamed {
		src.names[fmt.Sprintf("x%d", i)] = "X"
	}
	now = now.Add(TTL)
	if who, err := c.Person(ctx, "t", "u1"); err != nil || who.Name != "Ethan Zhou" || len(who.Others) != 0 {
		t.Errorf("a tenant of more than MaxNamed: %d others, %v; want the name and none", len(who.Others), err)
	}
}
