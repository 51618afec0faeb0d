package handlers

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"mneme/memory"
)

// Sessions serves conversations: working memory and ingestion;
// workingmemory.Service implements it.
type Sessions interface {
	Ingest(ctx context.Context, p memory.Principal, r memory.IngestRequest, idemKey string) (memory.IngestResult, error)
	IngestAsync(ctx context.Context, p memory.Principal, r memory.IngestRequest, idemKey string) (memory.JobStatus, error)
	AppendTurns(ctx context.Context, p memory.Principal, id string, r memory.AppendRequest) (memory.Session, error)
	GetSession(ctx context.Context, p memory.Principal, id string) (memory.Session, error)
	CloseSession(ctx context.Context, p memory.Principal, id string) (memory.CloseResult, error)
}

// appendTurns adds turns to a session, opening it on first use.
func (a *api) appendTurns(c *gin.Context) error {
	var req memory.AppendRequest
	if err := a.bind(c, &req); err != nil {
		return err
	}
	s, err := a.working.AppendTurns(c.Request.Context(), principalOf(c), c.Param("id"), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, s)
	return nil
}

func (a *api) getSession(c *gin.Context) error {
	s, err := a.working.GetSession(c.Request.Context(), principalOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, s)
	return nil
}

// closeSession ends a session and turns it into long-term memories.
func (a *api) closeSession(c *gin.Context) error {
	res, err := a.working.CloseSession(c.Request.Context(), principalOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	a.observe.Conversation(principalOf(c).Tenant)
	c.JSON(http.StatusOK, res)
	return nil
}
