package signouts_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/internal/testenv"
	"mneme/signouts"
)

func TestSignOut(t *testing.T) {
	testenv.EachRedis(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := t.Context()
		prefix := testenv.Tenant(t)
		s := signouts.New(rdb, prefix)
		const id = "session-token-1"
		if out, err := s.SignedOut(ctx, id); err != nil || out {
			t.Fatalf("before signing out: %v %v", out, err)
		}
		if err := s.SignOut(ctx, id, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if out, err := s.SignedOut(ctx, id); err != nil || !out {
			t.Errorf("after signing out: %v %v", out, err)
		}
		if out, _ := s.SignedOut(ctx, "session-token-2"); out {
			t.Error("another session is signed out too")
		}
		// Redis holds a digest that expires with the session, never the id.
		sum := sha256.Sum256([]byte(id))
		key := prefix + ":signout:" + hex.EncodeToString(sum[:16])
		if rdb.Exists(ctx, key).Val() != 1 || rdb.Exists(ctx, prefix+":signout:"+id).Val() != 0 {
			t.Fatal("want the digest's key in Redis, not the id's")
		}
		if ttl := rdb.TTL(ctx, key).Val(); ttl <= 59*time.Minute || ttl > time.Hour+2*time.Second {
			t.Errorf("TTL %v, want the session's remaining hour", ttl)
		}
		// A session already expired is not remembered.
		if err := s.SignOut(ctx, "old", time.Now().Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
		if out, _ := s.SignedOut(ctx, "old"); out {
			t.Error("an expired session was remembered")
		}
	})
}
