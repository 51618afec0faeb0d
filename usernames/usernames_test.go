package usernames

import (
	"context"
	"errors"
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
