package rerank

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRerank(t *testing.T) {
	tests := []struct {
		name    string
		status  int
		body    string
		delay   time.Duration
		want    []float64
		wantErr error
	}{
		{name: "scores by index", status: 200, body: `{"results":[{"index":1,"relevance_score":0.9},{"index":0,"relevance_score":0.1}]}`, want: []float64{0.1, 0.9}},
		{name: "server error", status: 500, body: `oops`, wantErr: ErrBadAnswer},
		{name: "too few scores", status: 200, body: `{"results":[{"index":0,"relevance_score":0.1}]}`, wantErr: ErrBadAnswer},
		{name: "index out of range", status: 200, body: `{"results":[{"index":0,"relevance_score":0.1},{"index":2,"relevance_score":0.3}]}`, wantErr: ErrBadAnswer},
		{name: "index twice", status: 200, body: `{"results":[{"index":0,"relevance_score":0.1},{"index":0,"relevance_score":0.3}]}`, wantErr: ErrBadAnswer},
		{name: "not JSON", status: 200, body: `<html>`, wantErr: ErrBadAnswer},
		{name: "too slow", status: 200, delay: 300 * time.Millisecond, body: `{"results":[]}`, wantErr: context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost || r.Header.Get("Authorization") != "Bearer k" {
					http.Error(w, "bad request", http.StatusBadRequest)
					return
				}
				select {
				case <-time.After(tt.delay):
				case <-r.Context().Done():
					return
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c, err := New(Options{URL: srv.URL, APIKey: "k", Timeout: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Rerank(context.Background(), "q", []string{"a", "b"})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}
