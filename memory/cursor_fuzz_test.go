package memory

import (
	"testing"
	"time"
)

// FuzzDecodeCursor checks that any text a client sends as a cursor either
// decodes or is refused with an error, and that a decoded cursor survives
// encoding: the service can hand back what it accepted.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(encodeCursor(Cursor{CreatedAt: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), ID: "m-1"}))
	f.Add(encodeCursor(Cursor{CreatedAt: time.Unix(0, -1).UTC(), ID: "|"}))
	for _, s := range []string{"", "=", "!!!", "MTIz", "MTIzfA", "fGE", "K2F8Yg", "OTIyMzM3MjAzNjg1NDc3NTgwOHxh"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := decodeCursor(s)
		if err != nil {
			if c != (Cursor{}) {
				t.Fatalf("decodeCursor(%q) failed with %v but returned %+v", s, err, c)
			}
			return
		}
		if c.ID == "" {
			t.Fatalf("decodeCursor(%q) = %+v: a cursor without an id", s, c)
		}
		again, err := decodeCursor(encodeCursor(c))
		if err != nil || !again.CreatedAt.Equal(c.CreatedAt) || again.ID != c.ID {
			t.Fatalf("cursor %+v from %q does not round-trip: %+v, %v", c, s, again, err)
		}
	})
}
