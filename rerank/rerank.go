// Package rerank is Mneme's client for a cross-encoder rerank service over
// HTTP, in the request shape Cohere, Jina and compatible servers accept:
// POST {model, query, documents} → {results: [{index, relevance_score}]}.
package rerank

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"mneme/internal/httpjson"
	"mneme/memory"
)

// Options configures a Client.
type Options struct {
	URL   string // the rerank endpoint, e.g. http://127.0.0.1:8081/v1/rerank
	Model string // sent as "model"; empty leaves it out
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// Timeout bounds one call (default 2s): recall waits for it.
	Timeout time.Duration
	// HTTP is the client to use (default: a new one).
	HTTP *http.Client
}

// Client calls a rerank endpoint. It is safe for concurrent use.
type Client struct {
	opts Options
	http *http.Client
}

var _ memory.Reranker = (*Client)(nil)

// ErrBadAnswer means the endpoint answered, but not with one score per
// document.
var ErrBadAnswer = errors.New("rerank: bad answer")

// New returns a Client for opts.URL.
func New(opts Options) (*Client, error) {
	if opts.URL == "" {
		return nil, errors.New("rerank: URL is required")
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Second
	}
	hc := opts.HTTP
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{opts: opts, http: hc}, nil
}

type request struct {
	Model     string   `json:"model,omitempty"`
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
}

type response struct {
	Results []struct {
		Index          *int     `json:"index"`
		RelevanceScore *float64 `json:"relevance_score"`
	} `json:"results"`
}

// Rerank returns one score per document, in the documents' order.
func (c *Client) Rerank(ctx context.Context, query string, docs []string) ([]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	body, err := json.Marshal(request{Model: c.opts.Model, Query: query, Documents: docs})
	if err != nil {
		return nil, fmt.Errorf("rerank: encode: %w", err)
	}
	raw, err := httpjson.Post(ctx, httpjson.Request{Client: c.http, URL: c.opts.URL, APIKey: c.opts.APIKey, Body: body, Limit: 1 << 20})
	var se *httpjson.StatusError
	if errors.As(err, &se) {
		return nil, fmt.Errorf("%w: status %d", ErrBadAnswer, se.Status)
	}
	if err != nil {
		return nil, fmt.Errorf("rerank: %w", err)
	}
	var out response
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadAnswer, err)
	}
	scores := make([]float64, len(docs))
	seen := make([]bool, len(docs))
	for _, r := range out.Results {
		if r.Index == nil || r.RelevanceScore == nil || *r.Index < 0 || *r.Index >= len(docs) || seen[*r.Index] {
			return nil, fmt.Errorf("%w: result without a valid index and score", ErrBadAnswer)
		}
		seen[*r.Index] = true
		scores[*r.Index] = *r.RelevanceScore
	}
	if len(out.Results) != len(docs) {
		return nil, fmt.Errorf("%w: %d scores for %d documents", ErrBadAnswer, len(out.Results), len(docs))
	}
	return scores, nil
}
