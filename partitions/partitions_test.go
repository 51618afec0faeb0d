package partitions

import (
	"context"
	"errors"
	"testing"
	"time"
)

// counter counts calls and answers sizes[tenant/user], or err.
type counter struct {
	sizes map[string]int
	calls int
	err   error
}

func (c *counter) PartitionSize(_ context.Context, tenant, userID string) (int, error) {
	c.calls++
	return c.sizes[tenant+"/"+userID], c.err
}

func TestSizesReuseACountForTheTTL(t *testing.T) {
	c := &counter{sizes: map[string]int{"t1/alice": 7, "t1/": 40, "t2/alice": 3}}
	clock := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	s, err := New(Options{Counter: c, TTL: 10 * time.Second, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	steps := []struct {
		name         string
		advance      time.Duration
		tenant, user string
		want, calls  int
	}{
		{"first count", 0, "t1", "alice", 7, 1},
		{"reused", 9 * time.Second, "t1", "alice", 7, 1},
		{"shared knowledge is its own partition", 0, "t1", "", 40, 2},
		{"another tenant is its own partition", 0, "t2", "alice", 3, 3},
		{"counted again after the TTL", 2 * time.Second, "t1", "alice", 7, 4},
	}
	for _, st := range steps {
		clock = clock.Add(st.advance)
		n, err := s.PartitionSize(ctx, st.tenant, st.user)
		if err != nil || n != st.want || c.calls != st.calls {
			t.Errorf("%s: got %d, %v after %d counts; want %d after %d", st.name, n, err, c.calls, st.want, st.calls)
		}
	}
}

func TestSizesDoNotRememberAFailure(t *testing.T) {
	c := &counter{sizes: map[string]int{"t/u": 5}, err: errors.New("neo4j away")}
	s, err := New(Options{Counter: c})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PartitionSize(context.Background(), "t", "u"); err == nil {
		t.Fatal("a failed count returned no error")
	}
	c.err = nil
	if n, err := s.PartitionSize(context.Background(), "t", "u"); err != nil || n != 5 || c.calls != 2 {
		t.Fatalf("after the store came back: %d, %v after %d counts; want 5 after 2", n, err, c.calls)
	}
}

func TestNewNeedsACounter(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without a Counter succeeded")
	}
}

func TestForgetCountsAgain(t *testing.T) {
	c := &counter{sizes: map[string]int{"t1/": 0, "t1/alice": 5}}
	s, err := New(Options{Counter: c})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, user := range []string{"", "alice"} {
		if _, err := s.PartitionSize(ctx, "t1", user); err != nil {
			t.Fatal(err)
		}
	}
	c.sizes["t1/"], c.sizes["t1/alice"] = 10_000, 6 // a bulk load of shared knowledge, one more of alice's
	s.Forget("t1", "")
	if n, _ := s.PartitionSize(ctx, "t1", ""); n != 10_000 {
		t.Errorf("after Forget the shared partition has %d, want the new count 10000", n)
	}
	if n, _ := s.PartitionSize(ctx, "t1", "alice"); n != 5 {
		t.Errorf("alice's partition, not forgotten, has %d, want the cached 5", n)
	}
	if c.calls != 3 {
		t.Errorf("%d counts, want 3 (two first ones, one after Forget)", c.calls)
	}
}
