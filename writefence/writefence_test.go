package writefence

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestBeginWrite: a context carries the earliest start marked on it, in
// UTC; one never marked carries none.
func TestBeginWrite(t *testing.T) {
	bg := context.Background()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("CST", 8*3600))
	tests := []struct {
		name string
		ctx  context.Context
		want time.Time
		ok   bool
	}{
		{"unmarked", bg, time.Time{}, false},
		{"marked", BeginWrite(bg, at), at.UTC(), true},
		{"a later mark is not taken", BeginWrite(BeginWrite(bg, at), at.Add(time.Minute)), at.UTC(), true},
		{"an earlier mark wins", BeginWrite(BeginWrite(bg, at), at.Add(-time.Minute)), at.Add(-time.Minute).UTC(), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Began(tt.ctx)
			if ok != tt.ok || !got.Equal(tt.want) || got.Location() != tt.want.Location() {
				t.Errorf("Began = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestErrUserErased: the refusal names its stable code.
func TestErrUserErased(t *testing.T) {
	var refused interface{ RefusalCode() string }
	if !errors.As(ErrUserErased, &refused) || refused.RefusalCode() != CodeUserErased || CodeUserErased != "user_erased" {
		t.Errorf("ErrUserErased's code is not %q", "user_erased")
	}
}
