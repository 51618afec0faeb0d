package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"mneme/graphquery"
	"mneme/memory"
)

// The graph view: analysts (and admins) search an entity, draw its
// neighbourhood, expand nodes, filter, open a memory with its versions and
// export what is shown. The page is static; its script asks the JSON
// routes below, which call the graph query service as the signed-in caller
// and answer as the REST API does.

func (c caller) Analyst() bool { return c.Kind == memory.KindAnalyst }

func (p *Panel) graphRoutes(m *http.ServeMux) {
	m.HandleFunc("GET /panel/graph", p.authed(p.graphPage))
	m.HandleFunc("GET /panel/graph/entities", p.graphJSON(func(ctx context.Context, c caller, v url.Values) (any, error) {
		q, err := graphquery.ParseEntities(v)
		if err != nil {
			return nil, err
		}
		return p.graph.Entities(ctx, c.Principal, q)
	}))
	m.HandleFunc("GET /panel/graph/neighbourhood", p.graphJSON(func(ctx context.Context, c caller, v url.Values) (any, error) {
		q, err := graphquery.ParseNeighbourhood(v)
		if err != nil {
			return nil, err
		}
		return p.graph.Neighbourhood(ctx, c.Principal, q)
	}))
	m.HandleFunc("GET /panel/graph/memories/{id}", p.graphJSON(func(ctx context.Context, c caller, v url.Values) (any, error) {
		return p.memoryDetail(ctx, c, v.Get("id"))
	}))
}

// graphCaller: analysts and admins.
func graphCaller(c caller) error {
	if !c.Analyst() && !c.Admin() {
		return memory.ErrForbidden
	}
	return nil
}

func (p *Panel) graphPage(w http.ResponseWriter, r *http.Request, c caller) error {
	if err := graphCaller(c); err != nil {
		return err
	}
	if p.graph == nil {
		return memory.ErrNotConfigured
	}
	return p.page(w, r, c, "graph", "Graph", graphData{Types: memory.Types, States: memory.Statuses})
}

type graphData struct {
	Types, States []string
}

// detail is a memory with its versions, as the graph view opens it.
type detail struct {
	Memory   memory.Memory   `json:"memory"`
	Versions []memory.Memory `json:"versions"`
}

func (p *Panel) memoryDetail(ctx context.Context, c caller, id string) (detail, error) {
	m, err := p.svc.Get(ctx, c.Principal, id)
	if err != nil {
		return detail{}, err
	}
	vs, err := p.svc.History(ctx, c.Principal, id)
	if err != nil {
		return detail{}, err
	}
	return detail{Memory: m, Versions: vs}, nil
}

// graphJSON serves one JSON route of the view to a signed-in analyst or
// admin; errors are JSON with the API's codes.
func (p *Panel) graphJSON(h func(ctx context.Context, c caller, v url.Values) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := p.who(r)
		if err == nil {
			err = graphCaller(c)
		}
		if err == nil && p.graph == nil {
			err = memory.ErrNotConfigured
		}
		var out any
		if err == nil {
			ctx, cancel := withTimeout(r.Context())
			defer cancel()
			v := r.URL.Query()
			if id := r.PathValue("id"); id != "" {
				v.Set("id", id)
			}
			out, err = h(ctx, c, v)
		}
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			status, code, msg := jsonError(err)
			var limited retryLater
			if errors.As(err, &limited) {
				w.Header().Set("Retry-After", strconv.Itoa(limited.RetryAfterSeconds()))
			}
			if status >= 500 {
				p.log.ErrorContext(r.Context(), "panel graph", "path", r.URL.Path, "err", err)
			}
			w.WriteHeader(status)
			// The request id the router gave the request, as every API error carries.
			_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "message": msg, "request_id": w.Header().Get("X-Request-ID")})
			return
		}
		_ = json.NewEncoder(w).Encode(out)
	}
}

// jsonError says what the caller may know of err, with the API's codes.
func jsonError(err error) (int, string, string) {
	var invalid *memory.InvalidError
	var limit *graphquery.LimitError
	switch {
	case errors.Is(err, errNoSession), errors.Is(err, memory.ErrUnauthenticated):
		return http.StatusUnauthorized, "unauthenticated", "sign in again"
	case errors.Is(err, memory.ErrForbidden):
		return http.StatusForbidden, "forbidden", "your key may not do this"
	case errors.Is(err, memory.ErrNotFound):
		return http.StatusNotFound, "not_found", "not found"
	case errors.As(err, &invalid):
		return http.StatusBadRequest, "invalid_argument", invalid.Error()
	case errors.As(err, &limit):
		return http.StatusUnprocessableEntity, "limit_exceeded", limit.Error()
	case errors.Is(err, graphquery.ErrTimeout):
		return http.StatusUnprocessableEntity, "query_timeout", err.Error()
	case errors.Is(err, memory.ErrNotConfigured):
		return http.StatusNotImplemented, "not_configured", "graph queries are off"
	case errors.Is(err, memory.ErrUnavailable):
		return http.StatusServiceUnavailable, "unavailable", "a store does not answer; try again shortly"
	case errors.As(err, new(retryLater)):
		return http.StatusTooManyRequests, "rate_limited", "your key is over its rate limit; try again in a moment"
	}
	return http.StatusInternalServerError, "internal", "internal error"
}
