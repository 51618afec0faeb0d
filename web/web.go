// Package web is the memory panel at /panel: server-rendered pages (Go
// html/template, embedded with its static files) for admins, who see their
// tenant's users, memories, recalls, deletions and policy, and for end users,
// who see and delete their own memories and can ask to be forgotten. It
// calls the services the REST API calls and never reaches a store itself.
package web

import (
	"cmp"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"mneme/graphquery"
	"mneme/identity"
	"mneme/memory"
	"mneme/metrics"
	"mneme/policyadmin"
)

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// DefaultSessionTTL is how long a sign-in lasts.
const DefaultSessionTTL = 8 * time.Hour

// Count is how many memories of one user have one type and status.
type Count struct {
	UserID, Type, Status string
	N                    int64
}

// Counter counts the memories of a principal's tenant that the principal
// may read, by user, type and status, and says when it counted (package
// census does, reusing a count for a while). Forget makes the next count
// fresh after a change made in the panel.
type Counter interface {
	Count(ctx context.Context, p memory.Principal) ([]Count, time.Time, error)
	Forget(tenant string)
}

// RecallLogs reads the recall log for admins (recalllog.Service).
type RecallLogs interface {
	RecallLog(ctx context.Context, p memory.Principal, userID string, limit int) ([]memory.RecallRecord, error)
}

// recallsListed is how many recalls about a user the Recalls page reads.
const recallsListed = 500

// Options configures the panel. Service, Census, Recalls, Admin, Identity
// and Secret are required.
type Options struct {
	Service  *memory.Service
	Census   Counter
	Recalls  RecallLogs
	Admin    *policyadmin.Service
	Identity *identity.Service
	// Metrics feeds the overview's charts and figures; nil shows none.
	Metrics *metrics.Metrics
	// Graph serves the graph view; nil turns it off.
	Graph *graphquery.Service
	// Secret seals the session cookies; every replica must share it.
	Secret []byte
	// SessionTTL is how long a sign-in lasts (default DefaultSessionTTL).
	SessionTTL time.Duration
	// Limiter takes each page and panel query from the caller's rate
	// limit, the bucket its key has in the API; nil limits nothing.
	Limiter Limiter
	// SignOuts remembers signed-out sessions, so that their cookies open
	// nothing afterwards; nil leaves a cookie valid until it expires.
	SignOuts SignOuts
	Logger   *slog.Logger
	Now      func() time.Time
}

// Limiter takes one request from a caller's allowance; a refusal carries
// RetryAfterSeconds. ratelimit.Limiter implements it.
type Limiter interface {
	Allow(ctx context.Context, tenant, kind, caller string) error
}

// SignOuts remembers signed-out sessions by id until they expire;
// signouts.Store implements it.
type SignOuts interface {
	SignOut(ctx context.Context, id string, expires time.Time) error
	SignedOut(ctx context.Context, id string) (bool, error)
}

// retryLater is a refusal by the Limiter.
type retryLater interface{ RetryAfterSeconds() int }

// Panel serves the memory panel.
type Panel struct {
	svc       *memory.Service
	recallLog RecallLogs
	census    Counter
	admin     *policyadmin.Service
	ident     *identity.Service
	metrics   *metrics.Metrics
	graph     *graphquery.Service
	limiter   Limiter
	signouts  SignOuts
	seal      sealer
	ttl       time.Duration
	log       *slog.Logger
	now       func() time.Time
	pages     map[string]*template.Template
	mux       *http.ServeMux
}

// New returns the panel, or an error naming each required part opts lacks.
func New(opts Options) (*Panel, error) {
	var missing []error
	if opts.Service == nil {
		missing = append(missing, errors.New("web: Service is required"))
	}
	if opts.Census == nil {
		missing = append(missing, errors.New("web: Census is required"))
	}
	if opts.Recalls == nil {
		missing = append(missing, errors.New("web: Recalls is required"))
	}
	if opts.Admin == nil {
		missing = append(missing, errors.New("web: Admin is required"))
	}
	if opts.Identity == nil {
		missing = append(missing, errors.New("web: Identity is required"))
	}
	seal, err := newSealer(opts.Secret)
	if err != nil {
		missing = append(missing, err)
	}
	if err := errors.Join(missing...); err != nil {
		return nil, err
	}
	p := &Panel{
		svc: opts.Service, census: opts.Census, recallLog: opts.Recalls, admin: opts.Admin, ident: opts.Identity, metrics: opts.Metrics, graph: opts.Graph, limiter: opts.Limiter, signouts: opts.SignOuts,
		seal: seal, ttl: opts.SessionTTL, log: opts.Logger, now: opts.Now,
	}
	if p.ttl <= 0 {
		p.ttl = DefaultSessionTTL
	}
	if p.log == nil {
		p.log = slog.Default()
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.pages, err = parsePages(); err != nil {
		return nil, err
	}
	p.routes()
	return p, nil
}

// pageNames are the templates of the panel, each rendered inside base.html.
var pageNames = []string{"signin", "overview", "user", "recalls", "deletions", "policy", "receipt", "error", "graph", "knowledge"}

func parsePages() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFiles, "templates/base.html", "templates/explain.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %w", name, err)
		}
		out[name] = t
	}
	return out, nil
}

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05")
	},
	"ms":   func(v float64) string { return fmt.Sprintf("%.1f ms", v) },
	"num":  func(v float64) string { return fmt.Sprintf("%.1f", v) },
	"join": strings.Join,
	"has":  slices.Contains[[]string],
}

// routes registers the pages. Each page is reached through a principal:
// authed resolves the session first.
func (p *Panel) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(staticFiles, "static")
	files := http.StripPrefix("/panel/static/", http.FileServerFS(static))
	m.HandleFunc("GET /panel/static/", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // files, not listings of them
			return
		}
		files.ServeHTTP(w, r)
	})
	m.HandleFunc("GET /panel", p.home)
	m.HandleFunc("GET /panel/{$}", p.home)
	m.HandleFunc("GET /panel/signin", p.signinPage)
	m.HandleFunc("POST /panel/signin", p.signin)
	m.HandleFunc("POST /panel/signout", p.form(p.signout))
	m.HandleFunc("GET /panel/overview", p.authed(p.overview))
	m.HandleFunc("GET /panel/users/{id}", p.authed(p.user))
	m.HandleFunc("GET /panel/me", p.authed(p.me))
	m.HandleFunc("POST /panel/memories/{id}/delete", p.form(p.deleteMemory))
	m.HandleFunc("POST /panel/memories/{id}/confirm", p.form(p.confirmMemory))
	m.HandleFunc("POST /panel/users/{id}/forget", p.form(p.forgetUser))
	m.HandleFunc("GET /panel/recalls", p.authed(p.recalls))
	m.HandleFunc("GET /panel/deletions", p.authed(p.deletions))
	m.HandleFunc("GET /panel/knowledge", p.authed(p.knowledge))
	m.HandleFunc("GET /panel/policy", p.authed(p.policy))
	m.HandleFunc("POST /panel/policy/simulate", p.form(p.simulate))
	m.HandleFunc("POST /panel/policy/activate", p.form(p.activate))
	m.HandleFunc("POST /panel/policy/rollback", p.form(p.rollback))
	m.HandleFunc("POST /panel/grants/{id}/delete", p.form(p.deleteGrant))
	m.HandleFunc("POST /panel/grants", p.form(p.createGrant))
	m.HandleFunc("POST /panel/grants/{id}/edit", p.form(p.editGrant))
	m.HandleFunc("POST /panel/policy/replay", p.form(p.replay))
	p.graphRoutes(m)
	m.HandleFunc("/panel/", func(w http.ResponseWriter, r *http.Request) {
		p.render(w, r, http.StatusNotFound, "error", view{Title: "Not found", Message: "There is no such page."})
	})
	p.mux = m
}

// csp lets the pages load only the panel's own scripts, styles and images,
// post forms only to the panel, and be framed by nobody.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func (p *Panel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	if !strings.HasPrefix(r.URL.Path, "/panel/static/") {
		h.Set("Cache-Control", "no-store")
	}
	if msg := badQuery(r.URL.RawQuery); msg != "" {
		p.render(w, r, http.StatusBadRequest, "error", view{Title: "Bad request", Message: msg})
		return
	}
	p.mux.ServeHTTP(w, r)
}

// badQuery says what is wrong with a page's query string, or "": the API
// refuses these in JSON, the panel on a page of its own.
func badQuery(raw string) string {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return "The address is malformed: open the page from the panel's links."
	}
	for name, vs := range q {
		for _, v := range vs {
			if !utf8.ValidString(name+v) || strings.ContainsRune(name+v, 0) {
				return "The address holds characters no page takes: open the page from the panel's links."
			}
		}
	}
	return ""
}

// caller is the signed-in principal of a request with its session.
type caller struct {
	memory.Principal
	csrf    string
	expires time.Time // when the session ends by itself
}

func (c caller) Admin() bool { return c.Kind == memory.KindAdmin }

// view is what every page template gets.
type view struct {
	Title   string
	Caller  *caller
	CSRF    string
	Message string
	Path    string
	Data    any
}

type pageFunc func(w http.ResponseWriter, r *http.Request, c caller) error

// who resolves the session cookie to a principal whose key still works, and
// brings its tenant's policy and grants up to date, as the API does.
func (p *Panel) who(r *http.Request) (caller, error) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil {
		return caller{}, errNoSession
	}
	s, err := p.seal.open(ck.Value, p.now())
	if err != nil {
		return caller{}, err
	}
	if p.signouts != nil {
		// The CSRF token is the session's own random id.
		if out, err := p.signouts.SignedOut(r.Context(), s.CSRF); err != nil || out {
			return caller{}, cmp.Or(err, errNoSession)
		}
	}
	pr, err := timed(r.Context(), "key", func() (memory.Principal, error) { return p.ident.Authenticate(r.Context(), s.Key) })
	if err != nil {
		return caller{}, err
	}
	if !mayUsePanel(pr) {
		return caller{}, memory.ErrForbidden
	}
	if p.limiter != nil {
		if err := p.limiter.Allow(r.Context(), pr.Tenant, pr.Kind, identity.Bucket(s.Key, pr)); err != nil {
			return caller{}, err
		}
	}
	t0 := time.Now()
	err = p.admin.Sync(r.Context(), pr.Tenant)
	record(r.Context(), "sync", time.Since(t0))
	if err != nil {
		return caller{}, err
	}
	return caller{Principal: pr, csrf: s.CSRF, expires: s.Expires}, nil
}

// mayUsePanel: admins, analysts (the graph view) and end users sign in;
// agents work through the API.
func mayUsePanel(pr memory.Principal) bool {
	return pr.Kind == memory.KindAdmin || pr.Kind == memory.KindUser || pr.Kind == memory.KindAnalyst
}

// authed serves a page to a signed-in caller; without a session it sends
// the browser to sign in.
func (p *Panel) authed(h pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r = withTimings(r)
		c, err := p.who(r)
		if err != nil {
			p.noSession(w, r, err)
			return
		}
		if err := h(w, r, c); err != nil {
			p.fail(w, r, &c, err)
		}
	}
}

// form serves a form post: a signed-in caller whose CSRF token matches.
func (p *Panel) form(h pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 1<<20)
		c, err := p.who(r)
		if err != nil {
			p.noSession(w, r, err)
			return
		}
		if !sameToken(r.PostFormValue("csrf"), c.csrf) {
			p.render(w, r, http.StatusForbidden, "error", view{Title: "Refused", Caller: &c, CSRF: c.csrf, Message: "The form's security token is missing or stale: reload the page and try again."})
			return
		}
		if err := h(w, r, c); err != nil {
			p.fail(w, r, &c, err)
		}
	}
}

func (p *Panel) noSession(w http.ResponseWriter, r *http.Request, err error) {
	var limited retryLater
	if errors.Is(err, memory.ErrUnavailable) || errors.As(err, &limited) {
		p.fail(w, r, nil, err)
		return
	}
	http.SetCookie(w, cookie(r, sessionCookie, "", 0))
	http.Redirect(w, r, "/panel/signin", http.StatusSeeOther)
}

// fail renders an error page: what the caller may know, never the cause.
func (p *Panel) fail(w http.ResponseWriter, r *http.Request, c *caller, err error) {
	v := view{Caller: c}
	if c != nil {
		v.CSRF = c.csrf
	}
	status := http.StatusInternalServerError
	var invalid *memory.InvalidError
	var limited retryLater
	switch {
	case errors.Is(err, memory.ErrNotFound):
		status, v.Title, v.Message = http.StatusNotFound, "Not found", "Nothing here, or nothing you may see."
	case errors.Is(err, memory.ErrForbidden):
		status, v.Title, v.Message = http.StatusForbidden, "Forbidden", "Your key may not do this."
	case errors.As(err, &invalid):
		status, v.Title, v.Message = http.StatusBadRequest, "Invalid", invalid.Error()
	case errors.Is(err, memory.ErrConflict):
		status, v.Title, v.Message = http.StatusConflict, "Conflict", "It changed meanwhile: reload and try again."
	case errors.Is(err, policyadmin.ErrPolicyTimeout), errors.Is(err, policyadmin.ErrPolicyUntranslatable):
		// Before unavailable, which both wrap: the stores are fine, and
		// sending the admin to Neo4j and Redis would waste the time it
		// takes to roll the policy back.
		status, v.Title, v.Message, v.Data = http.StatusServiceUnavailable, "Policy", policyFailure(c, err), policyHelp{Rollback: c != nil && c.Kind == memory.KindAdmin && !bundledTimeout(err)}
	case errors.Is(err, memory.ErrUnavailable):
		status, v.Title, v.Message = http.StatusServiceUnavailable, "Unavailable", "A store does not answer; try again shortly."
	case errors.As(err, &limited):
		w.Header().Set("Retry-After", strconv.Itoa(limited.RetryAfterSeconds()))
		status, v.Title, v.Message = http.StatusTooManyRequests, "Too many requests", "Your key is over its rate limit; try again in a moment."
	case errors.Is(err, policyadmin.ErrUnknownGrantee), errors.Is(err, policyadmin.ErrUnknownSource):
		status, v.Title, v.Message = http.StatusUnprocessableEntity, "Rejected", err.Error()
	default:
		var rejected *policyadmin.PolicyRejectedError
		if errors.As(err, &rejected) {
			status, v.Title, v.Message = http.StatusUnprocessableEntity, "Rejected", rejected.Error()
			break
		}
		v.Title, v.Message = "Error", "Something went wrong; it has been logged."
		p.log.ErrorContext(r.Context(), "panel", "path", r.URL.Path, "err", err)
	}
	p.render(w, r, status, "error", v)
}

// policyHelp is what the error page of a failing policy offers: its
// rollback, to an admin.
type policyHelp struct{ Rollback bool }

// policyFailure says, for the error page, that the tenant's policy failed
// the request, not a store, and what to do: retry, or roll the policy back.
// An admin's rollback is decided by the built-in rule, never by the revision
// in force, so it is offered whatever that revision fails on.
func policyFailure(c *caller, err error) string {
	admin := c != nil && c.Kind == memory.KindAdmin
	if errors.Is(err, policyadmin.ErrPolicyUntranslatable) {
		if !admin {
			return "The tenant's access policy cannot be applied to this request (its read rules do not translate into a query); the stores are fine. Ask an admin of the tenant to roll the policy back."
		}
		return "The tenant's access policy cannot be applied to this request (its read rules do not translate into a query); the stores are fine. Retrying will not help: roll the policy back to the previous revision (below, or on the Policy page)."
	}
	if bundledTimeout(err) {
		return "The policy engine is overloaded: the bundled access policy took too long to decide; the stores are fine. Try again in a moment."
	}
	if !admin {
		return "The tenant's access policy took too long to decide; the stores are fine. Try again in a moment; if it keeps happening, ask an admin of the tenant to roll the policy back."
	}
	return "The tenant's access policy took too long to decide; the stores are fine. Try again in a moment; if it keeps happening, the policy in force is too slow for this request: roll it back to the previous revision (below, or on the Policy page)."
}

// bundledTimeout reports a policy timeout under the bundled policy, which
// no rollback changes.
func bundledTimeout(err error) bool {
	var t *policyadmin.PolicyTimeoutError
	return errors.As(err, &t) && t.Revision == 0
}

// render executes a page into a buffer first, so that a template error
// never sends half a page.
func (p *Panel) render(w http.ResponseWriter, r *http.Request, status int, page string, v view) {
	var b strings.Builder
	v.Path = r.URL.Path
	t0 := time.Now()
	if err := p.pages[page].ExecuteTemplate(&b, "base", v); err != nil {
		p.log.ErrorContext(r.Context(), "panel template", "page", page, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	record(r.Context(), "render", time.Since(t0))
	if st := serverTiming(r.Context()); st != "" {
		w.Header().Set("Server-Timing", st)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

func (p *Panel) page(w http.ResponseWriter, r *http.Request, c caller, page, title string, data any) error {
	p.render(w, r, http.StatusOK, page, view{Title: title, Caller: &c, CSRF: c.csrf, Data: data})
	return nil
}

// back returns to the page a form names, if it is a panel page.
func back(w http.ResponseWriter, r *http.Request, fallback string) {
	to := r.PostFormValue("back")
	if !strings.HasPrefix(to, "/panel/") || strings.HasPrefix(to, "//") || strings.ContainsAny(to, "\\\r\n") {
		to = fallback
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

func (p *Panel) home(w http.ResponseWriter, r *http.Request) {
	c, err := p.who(r)
	switch {
	case err != nil:
		p.noSession(w, r, err)
	case c.Admin():
		http.Redirect(w, r, "/panel/overview", http.StatusSeeOther)
	case c.Analyst():
		http.Redirect(w, r, "/panel/graph", http.StatusSeeOther)
	default:
		http.Redirect(w, r, "/panel/me", http.StatusSeeOther)
	}
}

func (p *Panel) signinPage(w http.ResponseWriter, r *http.Request) {
	t := token()
	http.SetCookie(w, cookie(r, preCookie, t, 30*time.Minute))
	p.render(w, r, http.StatusOK, "signin", view{Title: "Sign in", CSRF: t})
}

// signin checks the key and opens a session. Agents' keys are refused: the
// panel is for the people who administer or own the memories.
func (p *Panel) signin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	pre, err := r.Cookie(preCookie)
	if err != nil || !sameToken(r.PostFormValue("csrf"), pre.Value) {
		p.render(w, r, http.StatusForbidden, "error", view{Title: "Refused", Message: "The sign-in form is stale: open it again."})
		return
	}
	key := strings.TrimSpace(r.PostFormValue("key"))
	again := func(msg string) {
		t := token()
		http.SetCookie(w, cookie(r, preCookie, t, 30*time.Minute))
		p.render(w, r, http.StatusOK, "signin", view{Title: "Sign in", CSRF: t, Message: msg})
	}
	pr, err := p.ident.Authenticate(r.Context(), key)
	switch {
	case errors.Is(err, memory.ErrUnavailable):
		p.fail(w, r, nil, err)
		return
	case err != nil:
		again("That key is not valid.")
		return
	case !mayUsePanel(pr):
		again("Only admin, analyst and user keys can sign in to the panel; agents use the API.")
		return
	}
	s := session{Key: key, CSRF: token(), Expires: p.now().Add(p.ttl)}
	v, err := p.seal.seal(s)
	if err != nil {
		p.fail(w, r, nil, err)
		return
	}
	http.SetCookie(w, cookie(r, preCookie, "", 0))
	http.SetCookie(w, cookie(r, sessionCookie, v, p.ttl))
	to := "/panel/me"
	switch pr.Kind {
	case memory.KindAdmin:
		to = "/panel/overview"
	case memory.KindAnalyst:
		to = "/panel/graph"
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

func (p *Panel) signout(w http.ResponseWriter, r *http.Request, c caller) error {
	if p.signouts != nil {
		if err := p.signouts.SignOut(r.Context(), c.csrf, c.expires); err != nil {
			return err
		}
	}
	http.SetCookie(w, cookie(r, sessionCookie, "", 0))
	http.Redirect(w, r, "/panel/signin", http.StatusSeeOther)
	return nil
}

// adminOnly refuses end users the admins' pages.
func adminOnly(c caller) error {
	if !c.Admin() {
		return memory.ErrForbidden
	}
	return nil
}

// withTimeout bounds the work of one page.
func withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, 10*time.Second)
}
