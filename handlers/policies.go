package handlers

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"mneme/memory"
	"mneme/policyadmin"
)

// Policy administration: revisions, activation, simulation and the decision
// log. Every route is for the admins of the caller's tenant.

type pushResponse struct {
	Revision policyadmin.PolicyRevision `json:"revision"`
	Report   policyadmin.PolicyReport   `json:"report"`
}

type modulesRequest struct {
	Modules []policyadmin.PolicyModule `json:"modules"`
}

type revisionsResponse struct {
	Revisions []policyadmin.PolicyRevision `json:"revisions"`
}

type diffResponse struct {
	From int64  `json:"from"`
	To   int64  `json:"to"`
	Diff string `json:"diff"`
}

type rollbackRequest struct {
	Revision *int64 `json:"revision,omitempty"`
}

type decisionsResponse struct {
	Decisions []policyadmin.DecisionRecord `json:"decisions"`
}

func (a *api) policyStatus(c *gin.Context) error {
	st, err := a.admin.PolicyStatus(c.Request.Context(), principalOf(c))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, st)
	return nil
}

func (a *api) pushPolicy(c *gin.Context) error {
	var req policyadmin.NewPolicy
	if err := a.bindAdmin(c, &req); err != nil {
		return err
	}
	rev, report, err := a.admin.PushPolicy(c.Request.Context(), principalOf(c), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, pushResponse{Revision: rev, Report: report})
	return nil
}

func (a *api) testPolicy(c *gin.Context) error {
	var req modulesRequest
	if err := a.bindAdmin(c, &req); err != nil {
		return err
	}
	report, err := a.admin.CheckPolicy(c.Request.Context(), principalOf(c), req.Modules)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, report)
	return nil
}

func (a *api) listPolicies(c *gin.Context) error {
	revs, err := a.admin.ListPolicies(c.Request.Context(), principalOf(c))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, revisionsResponse{Revisions: revs})
	return nil
}

func (a *api) getPolicy(c *gin.Context) error {
	n, err := revisionParam(c.Param("number"), "number")
	if err != nil {
		return a.adminFirst(c, err)
	}
	rev, err := a.admin.Policy(c.Request.Context(), principalOf(c), n)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, rev)
	return nil
}

func (a *api) diffPolicies(c *gin.Context) error {
	from, err := revisionParam(c.Query("from"), "from")
	if err != nil {
		return a.adminFirst(c, err)
	}
	to, err := revisionParam(c.Query("to"), "to")
	if err != nil {
		return a.adminFirst(c, err)
	}
	diff, err := a.admin.DiffPolicies(c.Request.Context(), principalOf(c), from, to)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, diffResponse{From: from, To: to, Diff: diff})
	return nil
}

func (a *api) activatePolicy(c *gin.Context) error {
	n, err := revisionParam(c.Param("number"), "number")
	if err != nil {
		return a.adminFirst(c, err)
	}
	st, err := a.admin.ActivatePolicy(c.Request.Context(), principalOf(c), n)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, st)
	return nil
}

// rollbackPolicy takes no body as {}: the previous revision, as the
// answer of a policy_timeout says to send in an emergency.
func (a *api) rollbackPolicy(c *gin.Context) error {
	var req rollbackRequest
	if err := a.bind(c, &req); err != nil && err != errEmptyBody {
		return a.adminFirst(c, err)
	}
	if req.Revision != nil && *req.Revision < 0 {
		return a.adminFirst(c, memory.Invalid("revision", "must be a revision number: 0 or more"))
	}
	st, err := a.admin.RollbackPolicy(c.Request.Context(), principalOf(c), req.Revision)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, st)
	return nil
}

func (a *api) simulatePolicy(c *gin.Context) error {
	var req policyadmin.SimulateRequest
	if err := a.bindAdmin(c, &req); err != nil {
		return err
	}
	sim, err := a.admin.Simulate(c.Request.Context(), principalOf(c), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, sim)
	return nil
}

func (a *api) replayPolicy(c *gin.Context) error {
	var req policyadmin.ReplayRequest
	if err := a.bindAdmin(c, &req); err != nil {
		return err
	}
	report, err := a.admin.Replay(c.Request.Context(), principalOf(c), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, report)
	return nil
}

func (a *api) listDecisions(c *gin.Context) error {
	q := policyadmin.DecisionQuery{Principal: c.Query("principal"), Result: c.Query("result"), Action: c.Query("action")}
	var err error
	if q.Since, q.Limit, err = logWindow(c); err != nil {
		return a.adminFirst(c, err)
	}
	ds, err := a.admin.Decisions(c.Request.Context(), principalOf(c), q)
	if err != nil {
		return err
	}
	if ds == nil {
		ds = []policyadmin.DecisionRecord{}
	}
	c.JSON(http.StatusOK, decisionsResponse{Decisions: ds})
	return nil
}

// revisionParam parses a revision number: 0 (the bundled policy) or more.
func revisionParam(s, name string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, memory.Invalid(name, "must be a revision number: 0 or more")
	}
	return n, nil
}

// logWindow reads the since and limit parameters of a log's listing (the
// decision log, the audit trail); a zero limit leaves the log's default.
func logWindow(c *gin.Context) (since time.Time, limit int, err error) {
	if since, err = timeParam(c, "since"); err != nil {
		return time.Time{}, 0, err
	}
	if s := c.Query("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 {
			return time.Time{}, 0, memory.Invalid("limit", "must be a positive whole number")
		}
	}
	return since, limit, nil
}
