package handlers

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"mneme/memory"
)

// Policy administration: revisions, activation, simulation and the decision
// log. Every route is for the admins of the caller's tenant.

type pushResponse struct {
	Revision memory.PolicyRevision `json:"revision"`
	Report   memory.PolicyReport   `json:"report"`
}

type modulesRequest struct {
	Modules []memory.PolicyModule `json:"modules"`
}

type revisionsResponse struct {
	Revisions []memory.PolicyRevision `json:"revisions"`
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
	Decisions []memory.DecisionRecord `json:"decisions"`
}

func (a *api) policyStatus(c *gin.Context) error {
	st, err := a.svc.PolicyStatus(c.Request.Context(), principalOf(c))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, st)
	return nil
}

func (a *api) pushPolicy(c *gin.Context) error {
	var req memory.NewPolicy
	if err := a.bind(c, &req); err != nil {
		return err
	}
	rev, report, err := a.svc.PushPolicy(c.Request.Context(), principalOf(c), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, pushResponse{Revision: rev, Report: report})
	return nil
}

func (a *api) testPolicy(c *gin.Context) error {
	var req modulesRequest
	if err := a.bind(c, &req); err != nil {
		return err
	}
	report, err := a.svc.CheckPolicy(c.Request.Context(), principalOf(c), req.Modules)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, report)
	return nil
}

func (a *api) listPolicies(c *gin.Context) error {
	revs, err := a.svc.ListPolicies(c.Request.Context(), principalOf(c))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, revisionsResponse{Revisions: revs})
	return nil
}

func (a *api) getPolicy(c *gin.Context) error {
	n, err := revisionParam(c.Param("number"), "number")
	if err != nil {
		return err
	}
	rev, err := a.svc.Policy(c.Request.Context(), principalOf(c), n)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, rev)
	return nil
}

func (a *api) diffPolicies(c *gin.Context) error {
	from, err := revisionParam(c.Query("from"), "from")
	if err != nil {
		return err
	}
	to, err := revisionParam(c.Query("to"), "to")
	if err != nil {
		return err
	}
	diff, err := a.svc.DiffPolicies(c.Request.Context(), principalOf(c), from, to)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, diffResponse{From: from, To: to, Diff: diff})
	return nil
}

func (a *api) activatePolicy(c *gin.Context) error {
	n, err := revisionParam(c.Param("number"), "number")
	if err != nil {
		return err
	}
	st, err := a.svc.ActivatePolicy(c.Request.Context(), principalOf(c), n)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, st)
	return nil
}

func (a *api) rollbackPolicy(c *gin.Context) error {
	var req rollbackRequest
	if err := a.bind(c, &req); err != nil {
		return err
	}
	st, err := a.svc.RollbackPolicy(c.Request.Context(), principalOf(c), req.Revision)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, st)
	return nil
}

func (a *api) simulatePolicy(c *gin.Context) error {
	var req memory.SimulateRequest
	if err := a.bind(c, &req); err != nil {
		return err
	}
	sim, err := a.svc.Simulate(c.Request.Context(), principalOf(c), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, sim)
	return nil
}

func (a *api) replayPolicy(c *gin.Context) error {
	var req memory.ReplayRequest
	if err := a.bind(c, &req); err != nil {
		return err
	}
	report, err := a.svc.Replay(c.Request.Context(), principalOf(c), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, report)
	return nil
}

func (a *api) listDecisions(c *gin.Context) error {
	q := memory.DecisionQuery{Principal: c.Query("principal"), Result: c.Query("result"), Action: c.Query("action")}
	var err error
	if q.Since, err = timeParam(c, "since"); err != nil {
		return err
	}
	if s := c.Query("limit"); s != "" {
		if q.Limit, err = strconv.Atoi(s); err != nil || q.Limit < 1 {
			return memory.Invalid("limit", "must be a positive whole number")
		}
	}
	ds, err := a.svc.Decisions(c.Request.Context(), principalOf(c), q)
	if err != nil {
		return err
	}
	if ds == nil {
		ds = []memory.DecisionRecord{}
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

func (a *api) getGrant(c *gin.Context) error {
	g, err := a.svc.Grant(c.Request.Context(), principalOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, g)
	return nil
}

func (a *api) updateGrant(c *gin.Context) error {
	var req memory.GrantChange
	if err := a.bind(c, &req); err != nil {
		return err
	}
	g, err := a.svc.UpdateGrant(c.Request.Context(), principalOf(c), c.Param("id"), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, g)
	return nil
}
