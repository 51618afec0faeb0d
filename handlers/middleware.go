package handlers

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"mneme/memory"
)

type ctxKey int

// The request id travels on the context through memory.WithRequestID, so
// that the services below the handlers can name the request too.
const (
	principalKey ctxKey = iota
)

// requestID takes a sane X-Request-ID from the client or makes one, and
// puts it on the response and into the request context for logging.
func (a *api) requestID(c *gin.Context) {
	id := c.GetHeader("X-Request-ID")
	if !saneRequestID(id) {
		id = newRequestID()
	}
	c.Header("X-Request-ID", id)
	// Answers are JSON whatever they hold: no browser may guess otherwise.
	c.Header("X-Content-Type-Options", "nosniff")
	c.Request = c.Request.WithContext(memory.WithRequestID(c.Request.Context(), id))
	c.Next()
}

func saneRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

func requestIDOf(c *gin.Context) string {
	return memory.RequestIDFrom(c.Request.Context())
}

// LogHandler wraps h so that every line logged with a request's context
// carries its request id, and its trace id when it is traced.
func LogHandler(h slog.Handler) slog.Handler { return requestIDHandler{h} }

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := memory.RequestIDFrom(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(as)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}

func (a *api) accessLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	attrs := []slog.Attr{
		slog.String("method", c.Request.Method),
		slog.String("path", c.FullPath()),
		slog.Int("status", c.Writer.Status()),
		slog.Float64("took_ms", float64(time.Since(start).Microseconds())/1000),
	}
	// Who asked, never with what key: the audit trail of a request.
	if p := principalOf(c); p.ID != "" {
		attrs = append(attrs, slog.String("tenant", p.Tenant), slog.String("principal", p.Kind+":"+p.ID))
	}
	a.log.LogAttrs(c.Request.Context(), slog.LevelInfo, "http", attrs...)
}

// recoverPanic turns a panic into a 500 so one bad request cannot take the
// server down; the stack goes to the log, not the client.
func (a *api) recoverPanic(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			a.log.ErrorContext(c.Request.Context(), "panic in handler", "panic", v)
			a.fail(c, errPanic)
		}
	}()
	c.Next()
}

type panicError struct{}

func (panicError) Error() string { return "handler panicked" }

var errPanic error = panicError{}

// strictQuery refuses a query string that does not parse. Go drops a pair
// holding ';' or a bad escape, and every pair past the 10,000th, without a
// word: a flag such as dry_run=true would read as not given. No parameter
// takes several values, and a handler reads the first: a second user_id
// would be ignored without a word too.
func (a *api) strictQuery(c *gin.Context) {
	if strings.HasPrefix(c.Request.URL.Path+"/", "/panel/") {
		c.Next() // the panel answers in pages, not JSON, and checks its own
		return
	}
	q, err := url.ParseQuery(c.Request.URL.RawQuery)
	if err != nil {
		a.fail(c, memory.Invalid("query", "is malformed: separate parameters with &, escape reserved characters as %XX, send at most 10,000"))
		return
	}
	for name, vs := range q {
		if len(vs) > 1 {
			a.fail(c, memory.Invalid(shownName(name), "is given more than once; every parameter takes one value"))
			return
		}
		// A body with these bytes is refused: a parameter is no less text.
		if !utf8.ValidString(name) || !utf8.ValidString(vs[0]) {
			a.fail(c, &badRequest{"invalid_utf8", "the query string is not valid UTF-8 once unescaped"})
			return
		}
		if strings.ContainsRune(name+vs[0], 0) {
			a.fail(c, memory.Invalid("query", "holds a NUL character (%00)"))
			return
		}
	}
	c.Next()
}

// onceHeaders are the request headers that must come once: two answers to
// who is calling, or under which key or in which form, would be read by one
// side of a proxy one way and by the other the other way.
var onceHeaders = []string{"Authorization", "X-API-Key", "Idempotency-Key", "Content-Type", "Content-Encoding", "Mcp-Session-Id", "Mcp-Protocol-Version"}

// singleHeaders refuses a request that gives one of onceHeaders twice, or
// its key in both Authorization and X-API-Key.
func (a *api) singleHeaders(c *gin.Context) {
	h := c.Request.Header
	for _, name := range onceHeaders {
		if len(h.Values(name)) > 1 {
			a.fail(c, memory.Invalid(name, "is given more than once"))
			return
		}
	}
	if h.Get("Authorization") != "" && h.Get("X-API-Key") != "" {
		a.fail(c, memory.Invalid("X-API-Key", "give the key in one header: Authorization or X-API-Key"))
		return
	}
	c.Next()
}

// authenticate resolves the API key to a principal. The key is the only
// source of identity: tenant and ids in the request are parameters.
func (a *api) authenticate(c *gin.Context) {
	key := credentialOf(c)
	if key == "" {
		a.fail(c, memory.ErrUnauthenticated)
		return
	}
	p, err := a.principalFor(c.Request.Context(), key)
	if err != nil {
		a.fail(c, err)
		return
	}
	// Decide nothing with a policy or grants older than the tenant's
	// current ones: a replica that cannot tell denies with 503.
	if err := a.admin.Sync(c.Request.Context(), p.Tenant); err != nil {
		a.fail(c, err)
		return
	}
	c.Request = c.Request.WithContext(context.WithValue(c.Request.Context(), principalKey, p))
	c.Next()
}

// credentialOf is the request's bearer credential (the scheme's name is
// case-insensitive, RFC 9110), else its X-API-Key header, trimmed.
func credentialOf(c *gin.Context) string {
	key := c.GetHeader("X-API-Key")
	if scheme, token, ok := strings.Cut(c.GetHeader("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
		key = token
	}
	return strings.TrimSpace(key)
}

// PrincipalFrom returns the principal the API-key middleware put on a
// request's context, for a handler mounted behind it (Options.MCP).
func PrincipalFrom(ctx context.Context) (memory.Principal, bool) {
	p, ok := ctx.Value(principalKey).(memory.Principal)
	return p, ok
}

func principalOf(c *gin.Context) memory.Principal {
	p, _ := c.Request.Context().Value(principalKey).(memory.Principal)
	return p
}

// Observer takes note of what the API answered, for the metrics, each
// recall, write and deletion with the tenant it happened in. Its methods
// must return at once.
type Observer interface {
	// Request counts an answered request by its route template.
	Request(method, route string, status int, took time.Duration)
	Recalled(tenant string, res memory.RecallResult)
	// Wrote sees a synchronous write's results, or the error that refused it.
	Wrote(tenant string, results []memory.WriteResult, err error)
	Deleted(r memory.Receipt)
	Erased(r memory.Receipt)
	// Conversation counts turns handed over for extraction.
	Conversation(tenant string)
}

type nopObserver struct{}

func (nopObserver) Request(string, string, int, time.Duration) {}
func (nopObserver) Recalled(string, memory.RecallResult)       {}
func (nopObserver) Wrote(string, []memory.WriteResult, error)  {}
func (nopObserver) Deleted(memory.Receipt)                     {}
func (nopObserver) Erased(memory.Receipt)                      {}
func (nopObserver) Conversation(string)                        {}

// observeRequest times every request and counts it by its route template
// (c.FullPath), so that ids in paths never become label values.
func (a *api) observeRequest(c *gin.Context) {
	start := time.Now()
	c.Next()
	a.observe.Request(c.Request.Method, c.FullPath(), c.Writer.Status(), time.Since(start))
}

// traceRequest starts the request's span, continuing the caller's trace
// when it sent a W3C traceparent header, and names it by route template.
func (a *api) traceRequest(c *gin.Context) {
	ctx := propagation.TraceContext{}.Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header))
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	ctx, span := a.tracer.Start(ctx, c.Request.Method+" "+route, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(
			attribute.String("http.request.method", c.Request.Method),
			attribute.String("http.route", route),
			attribute.String("mneme.request_id", requestIDOf(c)),
		))
	defer span.End()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
	status := c.Writer.Status()
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
}
