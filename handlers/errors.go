package handlers

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"mneme/documents"
	"mneme/graphquery"
	"mneme/identity"
	"mneme/memory"
	"mneme/policyadmin"
)

// Transport-level errors; domain errors come from memory and policyadmin.
var (
	errRoute      = errors.New("no such route")
	errMethod     = errors.New("method not allowed")
	errTooLarge   = errors.New("request body too large")
	errMediaType  = errors.New("content type must be application/json in UTF-8, not compressed")
	errPrecondBad = errors.New("If-Match must be a version number")
)

// retryLater is an error that says when to retry, as a rate limiter's
// refusal (ratelimit.LimitedError) does.
type retryLater interface {
	error
	RetryAfterSeconds() int
}

// refusal is a refusal from a package the handlers do not import
// (userids.CaseConflictError, workingmemory.TurnOrderError) that names its
// own stable code, in a message the client may read: 409 when it conflicts
// with what is stored (it wraps memory.ErrConflict), else 422.
type refusal interface {
	error
	RefusalCode() string
}

// badRequest is malformed input found while decoding, before the domain.
type badRequest struct {
	code, msg string
}

func (e *badRequest) Error() string { return e.msg }

// errorBody is every error the API returns.
type errorBody struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	RequestID string `json:"request_id"`
}

// statusClientClosed is what a request whose client went away before its
// answer is logged and counted as (nginx's 499): nobody reads the answer,
// and it is no failure of the service, whatever error the abandoned work
// ended with.
const statusClientClosed = 499

// fail is the one place errors become responses. Clients see a stable code
// and a message that reveals nothing they may not know; the cause is logged.
func (a *api) fail(c *gin.Context, err error) {
	ctx := c.Request.Context()
	if errors.Is(ctx.Err(), context.Canceled) && errors.Is(context.Cause(ctx), context.Canceled) {
		a.log.InfoContext(ctx, "client closed request", "status", statusClientClosed, "err", err)
		c.AbortWithStatus(statusClientClosed)
		return
	}
	err = answered(ctx, err)
	status, code, msg := classify(err)
	if status >= 500 {
		a.log.ErrorContext(ctx, "request failed", "status", status, "err", err)
	} else {
		a.log.InfoContext(ctx, "request rejected", "status", status, "code", code, "err", err)
	}
	var limited retryLater
	if errors.As(err, &limited) {
		c.Header("Retry-After", strconv.Itoa(limited.RetryAfterSeconds()))
	}
	if errors.Is(err, memory.ErrSessionClosing) {
		// A close under way ends in seconds, and a claim that lapsed is
		// taken by the next close.
		c.Header("Retry-After", "2")
	}
	if status == http.StatusUnauthorized {
		// RFC 9110: a 401 names the scheme that would be accepted.
		c.Header("WWW-Authenticate", `Bearer realm="mneme"`)
	}
	if a.mcp != nil && c.FullPath() == mcpRoute {
		// An MCP client reads JSON-RPC whatever refused its request.
		a.mcp.Refuse(c.Writer, status, code, msg)
		c.Abort()
		return
	}
	c.AbortWithStatusJSON(status, errorBody{Code: code, Message: msg, RequestID: requestIDOf(c)})
}

// answered is the error a request with context ctx is answered for when it
// ends with err. The server cancels a request's context when its
// connection closes (nobody reads the answer then: fail); the stall guard
// cancels it, for its cause, when a store stalls, and the request is
// answered unavailable whatever its work ended with.
func answered(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		if cause := context.Cause(ctx); !errors.Is(cause, context.Canceled) {
			return unavailable(cause)
		}
	}
	return err
}

// AuditCode is the code the API answers err with on a request with context
// ctx, for the audit trail to record a failed act under the code its
// client got, whichever service recorded it.
func AuditCode(ctx context.Context, err error) string {
	_, code, _ := classify(answered(ctx, err))
	return code
}

// Classify returns the HTTP status, stable code and client message the API
// answers an error with, for other faces of the service (the MCP endpoint)
// to say the same.
func Classify(err error) (status int, code, message string) { return classify(err) }

func classify(err error) (status int, code, msg string) {
	var inv *memory.InvalidError
	var bad *badRequest
	var rejected *policyadmin.PolicyRejectedError
	var ceiling *policyadmin.CeilingError
	var guarded *memory.GuardError
	var limited retryLater
	var graphLimit *graphquery.LimitError
	var quota *memory.QuotaError
	var busy *policyadmin.CheckBusyError
	var refused refusal
	var field *memory.ForbiddenFieldError
	switch {
	// identity's errors, before the domain errors they wrap.
	case errors.Is(err, identity.ErrTenantExists):
		return http.StatusConflict, "tenant_exists", "a tenant of that name exists"
	case errors.Is(err, identity.ErrPrincipalExists):
		return http.StatusConflict, "principal_exists", "a principal of that kind and id exists"
	case errors.Is(err, identity.ErrKeyInactive):
		return http.StatusConflict, "key_inactive", "the key is revoked, expired or rotated already"
	case errors.Is(err, policyadmin.ErrUnknownGrantee), errors.Is(err, policyadmin.ErrUnknownSource):
		return http.StatusUnprocessableEntity, "unknown_principal", err.Error()
	case errors.Is(err, identity.ErrUnknownRole):
		return http.StatusUnprocessableEntity, "unknown_role", err.Error()
	case errors.Is(err, identity.ErrNoOwner):
		return http.StatusUnprocessableEntity, "unknown_principal", "no principal of that kind and id: create it first (POST /v1/principals)"
	case errors.As(err, &refused) && errors.Is(err, memory.ErrConflict):
		return http.StatusConflict, refused.RefusalCode(), refused.Error()
	case errors.As(err, &refused):
		return http.StatusUnprocessableEntity, refused.RefusalCode(), refused.Error()
	case errors.As(err, &busy):
		return http.StatusTooManyRequests, "policy_check_busy", busy.Error()
	case errors.As(err, &limited):
		return http.StatusTooManyRequests, "rate_limited", "too many requests: retry after the seconds in Retry-After"
	case errors.As(err, &quota):
		// 403, not 429: a quota does not refill with time, so a client
		// must not retry; not 413: the request itself may be small.
		return http.StatusForbidden, "quota_exceeded", quota.Error()
	case errors.As(err, &rejected):
		return http.StatusUnprocessableEntity, rejected.Code, "policy rejected: " + rejected.Error()
	case errors.As(err, &graphLimit):
		return http.StatusUnprocessableEntity, "limit_exceeded", graphLimit.Error()
	case errors.Is(err, graphquery.ErrTimeout):
		return http.StatusUnprocessableEntity, "query_timeout", err.Error()
	case errors.Is(err, graphquery.ErrCypherRefused):
		return http.StatusUnprocessableEntity, "cypher_refused", err.Error()
	case errors.Is(err, documents.ErrTooLarge):
		return http.StatusRequestEntityTooLarge, "document_too_large", err.Error()
	case errors.Is(err, documents.ErrSections):
		return http.StatusRequestEntityTooLarge, "document_too_many_sections", err.Error()
	case errors.Is(err, documents.ErrEmpty):
		return http.StatusBadRequest, "document_empty", err.Error()
	case errors.Is(err, documents.ErrFormat):
		return http.StatusBadRequest, "document_format", err.Error()
	case errors.Is(err, documents.ErrID):
		return http.StatusBadRequest, "document_id", err.Error()
	case errors.Is(err, documents.ErrOtherScope):
		return http.StatusConflict, "document_scope", err.Error()
	case errors.Is(err, documents.ErrUnknownTeam):
		return http.StatusUnprocessableEntity, "unknown_team", err.Error()
	case errors.Is(err, documents.ErrImportRunning):
		return http.StatusConflict, "document_busy", err.Error()
	case errors.Is(err, memory.ErrNotConfigured):
		return http.StatusNotImplemented, "not_configured", err.Error()
	case errors.As(err, &bad):
		return http.StatusBadRequest, bad.code, bad.msg
	case errors.As(err, &guarded):
		return http.StatusUnprocessableEntity, "guard_rejected", guarded.Error()
	case errors.As(err, &inv):
		return http.StatusBadRequest, "invalid_argument", inv.Error()
	case errors.Is(err, errTooLarge):
		return http.StatusRequestEntityTooLarge, "body_too_large", err.Error()
	case errors.Is(err, errMediaType):
		return http.StatusUnsupportedMediaType, "unsupported_media_type", err.Error()
	case errors.Is(err, errPrecondBad):
		return http.StatusBadRequest, "invalid_precondition", err.Error()
	case errors.Is(err, errRoute):
		return http.StatusNotFound, "route_not_found", err.Error()
	case errors.Is(err, errMethod):
		return http.StatusMethodNotAllowed, "method_not_allowed", err.Error()
	case errors.Is(err, memory.ErrUnauthenticated):
		return http.StatusUnauthorized, "unauthenticated", "a valid API key is required (Authorization: Bearer <key>)"
	case errors.Is(err, memory.ErrNotFound):
		return http.StatusNotFound, "not_found", "not found"
	case errors.As(err, &ceiling):
		return http.StatusForbidden, "sensitivity_above_ceiling", ceiling.Error()
	case errors.Is(err, memory.ErrBackdate):
		return http.StatusForbidden, "backdate_forbidden", "only admins and imports may set observed_at further back than 5 minutes"
	case errors.As(err, &field):
		// The same code as any refusal, with the field that was refused.
		return http.StatusForbidden, "forbidden", field.Error()
	case errors.Is(err, memory.ErrForbidden):
		return http.StatusForbidden, "forbidden", "policy does not allow this action"
	case errors.Is(err, memory.ErrSessionFull):
		return http.StatusConflict, "session_full", "the session reached its cap of turns or bytes; close it and start a new one"
	case errors.Is(err, memory.ErrSessionTaken):
		return http.StatusConflict, "session_taken", "this session id belongs to another user or agent (open or closed): one session links one user's memories, written by whoever opened it, so use a session id of your own"
	case errors.Is(err, memory.ErrSessionClosing):
		return http.StatusConflict, "session_closing", "the session is being closed and takes no more turns: a close retried after Retry-After finds it closed (404) or closes it"
	case errors.Is(err, memory.ErrIdempotencyKeyReused):
		return http.StatusUnprocessableEntity, "idempotency_key_reused", "this idempotency key (the Idempotency-Key header, or a memory's idempotency_key) was used before for a different request or memory: send a new key for a new one"
	case errors.Is(err, policyadmin.ErrPolicyChanged):
		// Before conflict, which it wraps: it is no memory that changed.
		return http.StatusConflict, "policy_changed", err.Error()
	case errors.Is(err, memory.ErrConflict):
		return http.StatusConflict, "conflict", "the memory changed: it is not the current version"
	case errors.Is(err, policyadmin.ErrPolicyUntranslatable):
		// Before unavailable, which it wraps: retrying cannot help.
		return http.StatusServiceUnavailable, "policy_untranslatable", policyadmin.ErrPolicyUntranslatable.Error()
	case errors.Is(err, policyadmin.ErrPolicyTimeout):
		// Before unavailable, which it wraps: it was the policy, not a store.
		return http.StatusServiceUnavailable, "policy_timeout", policyadmin.TimeoutMessage(err)
	case errors.Is(err, memory.ErrUnavailable):
		return http.StatusServiceUnavailable, "unavailable", "a backing store is unavailable; retry later"
	default:
		return http.StatusInternalServerError, "internal", "internal error"
	}
}
