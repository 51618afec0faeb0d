// Package handlers is Mneme's HTTP API: the gin router, thin handlers that
// decode a request, call one method of a service (memory, policyadmin,
// identity) and encode the answer, the API-key middleware, and the one
// adapter that turns errors into JSON.
package handlers

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"mneme/graphquery"
	"mneme/identity"
	"mneme/memory"
	"mneme/policyadmin"
)

// OpenAPI is the API description served at /openapi.json.
//
//go:embed openapi.json
var OpenAPI []byte

// DefaultMaxBody caps request bodies.
const DefaultMaxBody = 1 << 20

// Options configures the router. Service, Recalls, Admin, Identity and
// Sessions are required.
type Options struct {
	// Service serves memories, recall and lifecycle.
	Service *memory.Service
	// Recalls reads the recall log for admins.
	Recalls RecallLogs
	// Admin serves policy administration and grants, and syncs each
	// request's tenant before anything is decided.
	Admin *policyadmin.Service
	// Identity authenticates API keys.
	Identity *identity.Service
	Sessions Sessions // working memory: /v1/sessions
	Logger   *slog.Logger
	// Ready reports whether the stores answer; /readyz uses it.
	Ready func(ctx context.Context) error
	// MaxBody caps request bodies in bytes (default DefaultMaxBody).
	MaxBody int64

	// Export serves data-subject exports; without it the route answers 503.
	Export Exporter
	// Tokens verifies JWT bearer tokens; nil accepts API keys only.
	Tokens TokenVerifier
	// Limiter rate-limits each caller; nil limits nobody.
	Limiter RateLimiter
	// MCP serves the Model Context Protocol endpoint at /mcp to callers
	// authenticated (and rate-limited) as on /v1, whose principal it finds
	// with PrincipalFrom; without it /mcp answers 501.
	MCP MCPEndpoint

	// Observer takes note of requests, recalls, writes and deletions for
	// the metrics; nil observes nothing.
	Observer Observer
	// Metrics serves /metrics (Prometheus's text format); nil leaves the
	// route out.
	Metrics http.Handler
	// Panel serves the memory panel under /panel/; nil leaves it out.
	Panel http.Handler
	// Tracer starts a span per request; nil traces nothing.
	Tracer trace.Tracer
	// Graph serves analysts' graph queries under /v1/graph; without it
	// those routes answer 501.
	Graph *graphquery.Service
	// Knowledge imports knowledge-base documents; without it the routes
	// answer 501.
	Knowledge Knowledge
	// Stalls, when set, refuses /v1 and MCP requests with 503 while a
	// store is stalled, and those under way when a stall begins; nil
	// lets them wait for the stores' own deadlines.
	Stalls Stalls
}

// MCPEndpoint serves the Model Context Protocol (package mcp).
type MCPEndpoint interface {
	http.Handler
	// Refuse answers a request to the endpoint that the router refuses
	// before it (no or a bad key, a rate limit) in the endpoint's own
	// error shape, with the status, stable code and message the API would.
	Refuse(w http.ResponseWriter, status int, code, message string)
}

// api holds what the handlers share.
type api struct {
	svc     *memory.Service
	recalls RecallLogs
	working Sessions
	admin   *policyadmin.Service
	ident   *identity.Service
	log     *slog.Logger
	ready   func(ctx context.Context) error
	maxBody int64

	export    Exporter
	tokens    TokenVerifier
	limiter   RateLimiter
	mcp       MCPEndpoint
	observe   Observer
	tracer    trace.Tracer
	graph     *graphquery.Service
	knowledge Knowledge
	stalls    Stalls

	// queryParams holds what each /v1 route takes in its query string,
	// by method and route as gin writes it (c.FullPath).
	queryParams map[string]routeQuery
}

// New returns the HTTP handler for the whole API, or an error naming each
// required service opts lacks or each /v1 route openapi.json does not
// describe (its query parameters are the ones the route takes).
func New(opts Options) (http.Handler, error) {
	var missing []error
	if opts.Service == nil {
		missing = append(missing, errors.New("handlers: Service is required"))
	}
	if opts.Recalls == nil {
		missing = append(missing, errors.New("handlers: Recalls is required"))
	}
	if opts.Admin == nil {
		missing = append(missing, errors.New("handlers: Admin is required"))
	}
	if opts.Identity == nil {
		missing = append(missing, errors.New("handlers: Identity is required"))
	}
	if opts.Sessions == nil {
		missing = append(missing, errors.New("handlers: Sessions is required"))
	}
	if err := errors.Join(missing...); err != nil {
		return nil, err
	}
	gin.SetMode(gin.ReleaseMode)
	a := &api{
		svc: opts.Service, recalls: opts.Recalls, admin: opts.Admin, ident: opts.Identity,
		log: opts.Logger, ready: opts.Ready, maxBody: opts.MaxBody,
		export: opts.Export, working: opts.Sessions,
		tokens: opts.Tokens, limiter: opts.Limiter, mcp: opts.MCP,
		observe: opts.Observer, tracer: opts.Tracer, graph: opts.Graph,
		knowledge: opts.Knowledge, stalls: opts.Stalls,
	}
	if a.tracer == nil {
		a.tracer = noop.NewTracerProvider().Tracer("mneme")
	}
	if a.observe == nil {
		a.observe = nopObserver{}
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	if a.maxBody <= 0 {
		a.maxBody = DefaultMaxBody
	}
	if a.ready == nil {
		a.ready = func(context.Context) error { return nil }
	}

	r := gin.New()
	r.HandleMethodNotAllowed = true
	// A path with a stray slash is a JSON 404, not an HTML redirect.
	r.RedirectTrailingSlash = false
	r.Use(a.requestID, a.traceRequest, a.observeRequest, a.accessLog, a.recoverPanic, a.strictQuery)
	r.NoRoute(func(c *gin.Context) { a.fail(c, errRoute) })
	r.NoMethod(func(c *gin.Context) { a.fail(c, errMethod) })

	r.GET("/healthz", a.healthz)
	r.GET("/readyz", a.readyz)
	r.GET("/openapi.json", func(c *gin.Context) { c.Data(http.StatusOK, "application/json", OpenAPI) })
	if opts.Metrics != nil {
		r.GET("/metrics", gin.WrapH(opts.Metrics))
	}
	if opts.Panel != nil {
		panel := gin.WrapH(opts.Panel)
		r.GET("/panel", panel)
		r.GET("/panel/*page", panel)
		r.POST("/panel/*page", panel)
	}

	// A parameter a route does not declare is refused before the key is
	// looked up, as a malformed query string is (params.go): the check
	// costs less than the lookup, and /openapi.json tells every route's
	// parameters to anyone anyway.
	v1 := r.Group("/v1", a.stalled, a.knownQuery, a.singleHeaders, a.authenticate, a.rateLimit)
	v1.POST("/memories", a.handle(a.writes(a.createMemories)))
	v1.GET("/memories", a.handle(a.listMemories))
	v1.GET("/memories/:id", a.handle(a.getMemory))
	v1.PATCH("/memories/:id", a.handle(a.writes(a.updateMemory)))
	v1.DELETE("/memories/:id", a.handle(a.writes(a.bodyless(a.deleteMemory))))
	v1.GET("/memories/:id/history", a.handle(a.history))
	v1.POST("/memories/:id/confirm", a.handle(a.writes(a.bodyless(a.confirmMemory))))
	v1.DELETE("/users/:id", a.handle(a.bodyless(a.eraseUser)))
	v1.POST("/janitor/sweep", a.handle(a.bodyless(a.sweep)))
	v1.POST("/recall", a.handle(a.recall))
	v1.POST("/ingest", a.handle(a.writes(a.ingest)))
	v1.POST("/sessions/:id/turns", a.handle(a.writes(a.appendTurns)))
	v1.GET("/sessions/:id", a.handle(a.getSession))
	v1.POST("/sessions/:id/close", a.handle(a.bodyless(a.closeSession)))
	v1.GET("/recall-log", a.handle(a.recallLog))
	v1.POST("/grants", a.handle(a.createGrant))
	v1.GET("/grants", a.handle(a.listGrants))
	v1.GET("/grants/:id", a.handle(a.getGrant))
	v1.PATCH("/grants/:id", a.handle(a.updateGrant))
	v1.DELETE("/grants/:id", a.handle(a.adminBodyless(a.deleteGrant)))
	v1.GET("/policy", a.handle(a.policyStatus))
	v1.PUT("/policy", a.handle(a.pushPolicy))
	v1.POST("/policy/test", a.handle(a.testPolicy))
	v1.POST("/policy/simulate", a.handle(a.simulatePolicy))
	v1.POST("/policy/replay", a.handle(a.replayPolicy))
	v1.POST("/policy/rollback", a.handle(a.rollbackPolicy))
	v1.GET("/policy/diff", a.handle(a.diffPolicies))
	v1.GET("/policy/revisions", a.handle(a.listPolicies))
	v1.GET("/policy/revisions/:number", a.handle(a.getPolicy))
	v1.POST("/policy/revisions/:number/activate", a.handle(a.adminBodyless(a.activatePolicy)))
	v1.GET("/decisions", a.handle(a.listDecisions))

	v1.GET("/audit", a.handle(a.listAudit))
	a.graphRoutes(v1)

	v1.GET("/jobs/:id", a.handle(a.getJob))

	// Knowledge-base documents imported as shared knowledge (admins;
	// knowledge.go).
	v1.POST("/knowledge/import", a.handle(a.importDocument))
	v1.GET("/knowledge/documents", a.handle(a.listDocuments))
	// A document id may hold slashes (guides/returns), sent raw or as %2F.
	v1.DELETE("/knowledge/documents/*id", a.handle(a.bodylessOr(a.removeDocument, importerFirst)))
	v1.GET("/whoami", a.handle(a.whoami))

	// Principals and API keys of the caller's tenant (admins; identity.go).
	v1.POST("/principals", a.handle(a.createPrincipal))
	v1.GET("/principals", a.handle(a.listPrincipals))
	v1.GET("/principals/:kind/:id", a.handle(a.getPrincipal))
	v1.PATCH("/principals/:kind/:id", a.handle(a.changePrincipal))
	v1.DELETE("/principals/:kind/:id", a.handle(a.adminBodyless(a.deletePrincipal)))
	v1.POST("/keys", a.handle(a.createKey))
	v1.GET("/keys", a.handle(a.listKeys))
	v1.GET("/keys/:id", a.handle(a.getKey))
	v1.PATCH("/keys/:id", a.handle(a.changeKey))
	v1.DELETE("/keys/:id", a.handle(a.adminBodyless(a.revokeKey)))
	v1.POST("/keys/:id/rotate", a.handle(a.rotateKey))
	// Who may see what: tenant settings of the policy, data-subject export.
	v1.GET("/policy/settings", a.handle(a.getSettings))
	v1.PUT("/policy/settings", a.handle(a.putSettings))
	v1.PATCH("/policy/settings", a.handle(a.patchSettings))
	v1.GET("/users/:id/export", a.handle(a.exportUser))

	// The MCP endpoint: the same keys, tenant sync and rate limits as /v1.
	r.POST(mcpRoute, a.stalled, a.singleHeaders, a.authenticate, a.rateLimit, a.handle(a.serveMCP))

	var err error
	if a.queryParams, err = queryParamsOf(r, OpenAPI); err != nil {
		return nil, err
	}
	if a.stalls != nil {
		return a.guardStalls(r, a.stalls), nil
	}
	return r, nil
}

// mcpRoute is where the MCP endpoint is served.
const mcpRoute = "/mcp"

func (a *api) serveMCP(c *gin.Context) error {
	if a.mcp == nil {
		return memory.ErrNotConfigured
	}
	a.mcp.ServeHTTP(c.Writer, c.Request)
	return nil
}

// Refusal says why the REST API would refuse a request whose JSON body
// parses, with the status it would answer, or "": a body said to be other
// than JSON in UTF-8 or compressed (415), a key one object names twice, a
// string holding NUL or half a surrogate pair (400). The MCP endpoint
// refuses such a request as the REST routes do.
func Refusal(h http.Header, body []byte) (int, string) {
	if err := jsonForm(h); err != nil {
		return http.StatusUnsupportedMediaType, err.Error()
	}
	if k := duplicateKey(body); k != "" {
		return http.StatusBadRequest, fmt.Sprintf("unmarshal: the key %q is given twice in one object", k)
	}
	if holdsNUL(body) {
		return http.StatusBadRequest, `a string holds a NUL character (\u0000)`
	}
	if loneSurrogate(body) {
		return http.StatusBadRequest, `a string holds half of a UTF-16 surrogate pair (such as \ud800), which is no character`
	}
	return 0, ""
}

// handle adapts a handler that returns an error to gin: the error, if any,
// goes through the one error adapter.
func (a *api) handle(h func(c *gin.Context) error) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := h(c); err != nil {
			a.fail(c, err)
		}
	}
}

func (a *api) healthz(c *gin.Context) {
	c.JSON(http.StatusOK, statusResponse{Status: "ok"})
}

func (a *api) readyz(c *gin.Context) {
	if err := a.ready(c.Request.Context()); err != nil {
		a.log.WarnContext(c.Request.Context(), "not ready", "err", err)
		a.fail(c, memory.ErrUnavailable)
		return
	}
	c.JSON(http.StatusOK, statusResponse{Status: "ready"})
}

type statusResponse struct {
	Status string `json:"status"`
}
