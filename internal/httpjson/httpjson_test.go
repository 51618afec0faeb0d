package httpjson

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPost(t *testing.T) {
	type seen struct{ Method, ContentType, Accept, Auth, Body string }
	tests := []struct {
		name       string
		apiKey     string
		status     int
		header     map[string]string
		answer     string
		limit      int64
		want       string
		wantErr    *StatusError
		wantHeader seen
	}{
		{name: "ok with a key", apiKey: "sk-1", status: 200, answer: `{"ok":true}`, limit: 1 << 10, want: `{"ok":true}`,
			wantHeader: seen{"POST", "application/json", "application/json", "Bearer sk-1", `{"q":1}`}},
		{name: "ok without a key", status: 200, answer: `{"ok":true}`, limit: 1 << 10, want: `{"ok":true}`,
			wantHeader: seen{"POST", "application/json", "application/json", "", `{"q":1}`}},
		{name: "answer cut at the limit", status: 200, answer: `0123456789`, limit: 4, want: `0123`,
			wantHeader: seen{"POST", "application/json", "application/json", "", `{"q":1}`}},
		{name: "rate limited", status: 429, header: map[string]string{"Retry-After": " 3 "}, answer: " slow down \n", limit: 1 << 10,
			wantErr:    &StatusError{Status: 429, Body: "slow down", RetryAfter: 3 * time.Second},
			wantHeader: seen{"POST", "application/json", "application/json", "", `{"q":1}`}},
		{name: "server error, a date in Retry-After", status: 503, header: map[string]string{"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"},
			answer: strings.Repeat("x", 600), limit: 1 << 10,
			wantErr:    &StatusError{Status: 503, Body: strings.Repeat("x", maxErrorBody)},
			wantHeader: seen{"POST", "application/json", "application/json", "", `{"q":1}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got seen
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				got = seen{r.Method, r.Header.Get("Content-Type"), r.Header.Get("Accept"), r.Header.Get("Authorization"), string(body)}
				for k, v := range tt.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.answer)
			}))
			defer srv.Close()
			raw, err := Post(t.Context(), Request{URL: srv.URL, APIKey: tt.apiKey, Body: []byte(`{"q":1}`), Limit: tt.limit})
			if diff := cmp.Diff(tt.wantHeader, got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			if tt.wantErr != nil {
				var se *StatusError
				if !errors.As(err, &se) {
					t.Fatalf("err = %v, want a *StatusError", err)
				}
				tt.wantErr.URL = srv.URL
				if diff := cmp.Diff(tt.wantErr, se); diff != "" {
					t.Errorf("status error (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil || string(raw) != tt.want {
				t.Errorf("Post = %q, %v; want %q", raw, err, tt.want)
			}
		})
	}
}

func TestPostFailures(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer slow.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := Post(ctx, Request{URL: slow.URL, Limit: 10}); !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), slow.URL) {
		t.Errorf("timed out: %v, want a deadline error naming the URL", err)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	if _, err := Post(t.Context(), Request{URL: closed.URL, Limit: 10}); err == nil || !strings.Contains(err.Error(), closed.URL) {
		t.Errorf("refused: %v, want an error naming the URL", err)
	}
	if _, err := Post(t.Context(), Request{URL: "://no scheme", Limit: 10}); err == nil {
		t.Error("a malformed URL was posted")
	}
}
