// Package httpjson posts JSON to the model endpoints Mneme calls — chat
// completions, embeddings, reranking — and hands back the answer's body, so
// that each client only encodes its request, checks its answer and decides
// what to retry.
package httpjson

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxErrorBody is how much of a failed answer a StatusError quotes.
const maxErrorBody = 512

// Request is one POST of a JSON body.
type Request struct {
	// Client sends it; http.DefaultClient when nil.
	Client *http.Client
	URL    string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	Body   []byte
	// Limit caps how many bytes of a successful answer are read.
	Limit int64
}

// StatusError is an answer whose status is not 200 OK.
type StatusError struct {
	URL    string
	Status int
	// Body is the start of the answer, for the error message.
	Body string
	// RetryAfter is the answer's Retry-After in seconds, or 0: a server
	// that rate-limits says when to come back.
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s answered %d %s: %s", e.URL, e.Status, http.StatusText(e.Status), e.Body)
}

// Post sends r and returns the body of a 200 answer, at most r.Limit bytes
// of it. Any other status is a *StatusError. A failure to send is the
// client's error, which names the URL and wraps the context's error when
// ctx ended.
func Post(ctx context.Context, r Request) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if r.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.APIKey)
	}
	client := r.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, &StatusError{
			URL: r.URL, Status: resp.StatusCode, Body: strings.TrimSpace(string(snippet)),
			RetryAfter: retryAfter(resp.Header.Get("Retry-After")),
		}
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, r.Limit))
	if err != nil {
		return nil, fmt.Errorf("read the answer of %s: %w", r.URL, err)
	}
	return raw, nil
}

// retryAfter reads a Retry-After header given in seconds; dates are rare
// from model servers and ignored.
func retryAfter(v string) time.Duration {
	s, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || s < 0 {
		return 0
	}
	return time.Duration(s) * time.Second
}
