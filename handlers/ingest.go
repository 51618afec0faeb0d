package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"mneme/memory"
)

// ingest learns from conversation turns. By default the turns are queued
// (202 and a job to poll); with sync=true the extractor runs now and the
// answer holds the memories written.
func (a *api) ingest(c *gin.Context) error {
	sync, err := boolParam(c, "sync")
	if err != nil {
		return err
	}
	idemKey, err := idempotencyKey(c)
	if err != nil {
		return err
	}
	var req memory.IngestRequest
	if err := a.bind(c, &req); err != nil {
		return err
	}
	if !sync {
		job, err := a.working.IngestAsync(c.Request.Context(), principalOf(c), req, idemKey)
		if err != nil {
			return err
		}
		a.observe.Conversation(principalOf(c).Tenant)
		c.Header("Location", "/v1/jobs/"+job.ID)
		c.JSON(http.StatusAccepted, job)
		return nil
	}
	res, err := a.working.Ingest(c.Request.Context(), principalOf(c), req, idemKey)
	if err != nil {
		return err
	}
	a.observe.Conversation(principalOf(c).Tenant)
	c.JSON(http.StatusOK, res)
	return nil
}
