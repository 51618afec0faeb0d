package embedding

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"mneme/internal/httpjson"
)

// HTTPConfig configures an HTTP embedder. Zero values of the optional fields
// take the defaults below.
type HTTPConfig struct {
	// BaseURL is the API root, such as "http://127.0.0.1:8000/v1"; requests
	// go to BaseURL + "/embeddings", as with OpenAI's clients.
	BaseURL string
	// Model is sent with every request and recorded on every memory.
	Model string
	// APIKey, when set, is sent as a bearer token.
	APIKey string
	// QueryPrefix and PassagePrefix are put before a question and before a
	// stored text, for models trained with them (the e5 family wants
	// "query: " and "passage: "); empty for models that are not.
	QueryPrefix, PassagePrefix string
	// Dimension is the vector size the model must return; any other size is
	// an error, never silently stored.
	Dimension int
	// BatchSize is the most inputs sent in one request (default 64).
	BatchSize int
	// Timeout bounds one request, retries excluded (default 30s).
	Timeout time.Duration
	// Retries is how many times a request is repeated after a 429, a 5xx or
	// a network error (default 3; negative means none).
	Retries int
	// Backoff is the wait before the first retry; it doubles with each
	// further retry, up to MaxBackoff (defaults 250ms and 5s). A Retry-After
	// header in seconds, when shorter than MaxBackoff, is honoured instead.
	Backoff, MaxBackoff time.Duration
	// Client sends the requests (default: a client without its own timeout,
	// Timeout bounds each request).
	Client *http.Client
}

// Defaults of HTTPConfig.
const (
	DefaultHTTPBatch      = 64
	DefaultHTTPTimeout    = 30 * time.Second
	DefaultHTTPRetries    = 3
	DefaultHTTPBackoff    = 250 * time.Millisecond
	DefaultHTTPMaxBackoff = 5 * time.Second
)

// maxResponseBody caps the response read: 2048 inputs of 4096 floats as JSON
// text fit with room to spare.
const maxResponseBody = 256 << 20

// HTTP is a client of an OpenAI-compatible /v1/embeddings endpoint. It splits
// large inputs into batches, retries transient failures with exponential
// backoff and checks every answer: one vector per input, in input order, each
// of the configured dimension. It is safe for concurrent use.
type HTTP struct {
	cfg      HTTPConfig
	endpoint string
}

// NewHTTP checks cfg and returns the client. It sends no request.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	u, err := url.Parse(cfg.BaseURL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, fmt.Errorf("embed: base URL %q is not an http:// or https:// URL", cfg.BaseURL)
	case strings.TrimSpace(cfg.Model) == "":
		return nil, errors.New("embed: the HTTP embedder needs a model name")
	case cfg.Dimension <= 0:
		return nil, fmt.Errorf("embed: dimension %d must be positive", cfg.Dimension)
	case cfg.BatchSize < 0 || cfg.Timeout < 0 || cfg.Backoff < 0 || cfg.MaxBackoff < 0:
		return nil, errors.New("embed: batch size, timeout and backoff must not be negative")
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultHTTPBatch
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultHTTPTimeout
	}
	if cfg.Retries == 0 {
		cfg.Retries = DefaultHTTPRetries
	} else if cfg.Retries < 0 {
		cfg.Retries = 0
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = DefaultHTTPBackoff
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = DefaultHTTPMaxBackoff
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	return &HTTP{cfg: cfg, endpoint: strings.TrimRight(cfg.BaseURL, "/") + "/embeddings"}, nil
}

// Dimension returns the configured vector size.
func (h *HTTP) Dimension() int { return h.cfg.Dimension }

// Model returns the configured model name.
func (h *HTTP) Model() string { return h.cfg.Model }

// StatusError is a response the endpoint gave that is not a success.
type StatusError = httpjson.StatusError

// ErrBadResponse means the endpoint answered 200 with something that is not
// one vector of the configured dimension per input.
var ErrBadResponse = errors.New("embed: bad embeddings response")

// Embed returns one vector per stored text, in order, sending at most
// BatchSize texts per request.
func (h *HTTP) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return h.embed(ctx, texts, h.cfg.PassagePrefix)
}

// EmbedQuery returns the vector of one question.
func (h *HTTP) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := h.embed(ctx, []string{text}, h.cfg.QueryPrefix)
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (h *HTTP) embed(ctx context.Context, texts []string, prefix string) ([][]float32, error) {
	if prefix != "" {
		prefixed := make([]string, len(texts))
		for i, t := range texts {
			prefixed[i] = prefix + t
		}
		texts = prefixed
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += h.cfg.BatchSize {
		batch := texts[start:min(start+h.cfg.BatchSize, len(texts))]
		vecs, err := h.embedBatch(ctx, batch)
		if err != nil {
			if len(texts) > len(batch) {
				return nil, fmt.Errorf("inputs %d–%d of %d: %w", start, start+len(batch)-1, len(texts), err)
			}
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// embedBatch sends one batch, retrying transient failures.
func (h *HTTP) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingsRequest{Model: h.cfg.Model, Input: texts, EncodingFormat: "float"})
	if err != nil {
		return nil, err
	}
	wait := h.cfg.Backoff
	for attempt := 0; ; attempt++ {
		vecs, err := h.post(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		if attempt >= h.cfg.Retries || !transient(err) || ctx.Err() != nil {
			if attempt > 0 {
				return nil, fmt.Errorf("after %d attempts: %w", attempt+1, err)
			}
			return nil, err
		}
		pause := wait
		if se := (*StatusError)(nil); errors.As(err, &se) && se.RetryAfter > 0 && se.RetryAfter <= h.cfg.MaxBackoff {
			pause = se.RetryAfter
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (while retrying: %v)", ctx.Err(), err)
		case <-time.After(pause):
		}
		wait = min(2*wait, h.cfg.MaxBackoff)
	}
}

// transient reports whether a failed request is worth repeating: rate
// limits, server errors and network failures, but not a cancelled caller,
// a rejected request or a malformed answer.
func transient(err error) bool {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Status == http.StatusTooManyRequests || se.Status >= 500
	}
	if errors.Is(err, ErrBadResponse) || errors.Is(err, context.Canceled) {
		return false
	}
	return true // network errors and per-request timeouts
}

type embeddingsRequest struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
}

type embeddingsResponse struct {
	Data []struct {
		Index     *int      `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// post sends one request and decodes the answer.
func (h *HTTP) post(ctx context.Context, body []byte, n int) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	raw, err := httpjson.Post(ctx, httpjson.Request{Client: h.cfg.Client, URL: h.endpoint, APIKey: h.cfg.APIKey, Body: body, Limit: maxResponseBody})
	if err != nil {
		return nil, err
	}
	return h.decode(raw, n)
}

// decode checks an answer for n inputs and puts its vectors in input order.
func (h *HTTP) decode(raw []byte, n int) ([][]float32, error) {
	var r embeddingsResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("%w: not JSON of the embeddings format: %v", ErrBadResponse, err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("%w: %d embeddings for %d inputs", ErrBadResponse, len(r.Data), n)
	}
	out := make([][]float32, n)
	for i, d := range r.Data {
		at := i
		if d.Index != nil {
			at = *d.Index
		}
		switch {
		case at < 0 || at >= n || out[at] != nil:
			return nil, fmt.Errorf("%w: index %d is out of range or repeated", ErrBadResponse, at)
		case len(d.Embedding) != h.cfg.Dimension:
			return nil, fmt.Errorf("%w: model %s returned a vector of dimension %d, configured dimension is %d",
				ErrBadResponse, h.cfg.Model, len(d.Embedding), h.cfg.Dimension)
		}
		out[at] = d.Embedding
	}
	return out, nil
}
