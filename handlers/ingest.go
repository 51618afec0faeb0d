package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"mneme/memory"
)

// ingest learns from conversation turns: the extractor finds what is worth
// keeping and the service writes it like any other memory.
func (a *api) ingest(c *gin.Context) error {
	var req memory.IngestRequest
	if err := a.bind(c, &req); err != nil {
		return err
	}
	res, err := a.svc.Ingest(c.Request.Context(), principalOf(c), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, res)
	return nil
}
