package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"mneme/memory"
)

// The admin audit trail: who changed what in the tenant, and how it ended.

type auditResponse struct {
	Events []memory.AuditEvent `json:"events"`
}

func (a *api) listAudit(c *gin.Context) error {
	q := memory.AuditQuery{Actor: c.Query("actor"), Action: c.Query("action")}
	var err error
	if q.Since, q.Limit, err = logWindow(c); err != nil {
		return a.adminFirst(c, err)
	}
	es, err := a.admin.AuditTrail(c.Request.Context(), principalOf(c), q)
	if err != nil {
		return err
	}
	if es == nil {
		es = []memory.AuditEvent{}
	}
	c.JSON(http.StatusOK, auditResponse{Events: es})
	return nil
}
