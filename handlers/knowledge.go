package handlers

import (
	"context"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"mneme/documents"
	"mneme/memory"
)

// Knowledge serves the documents of a knowledge base; documents.Service
// implements it.
type Knowledge interface {
	Import(ctx context.Context, p memory.Principal, r documents.ImportRequest) (documents.Result, error)
	List(ctx context.Context, p memory.Principal) ([]documents.Info, error)
	Remove(ctx context.Context, p memory.Principal, id string) (int, error)
}

// documentList is the answer of GET /v1/knowledge/documents.
type documentList struct {
	Documents []documents.Info `json:"documents"`
}

// documentRemoved is the answer of DELETE /v1/knowledge/documents/{id}.
type documentRemoved struct {
	Document string `json:"document"`
	Retired  int    `json:"retired"`
}

// importDocument imports one document: 200 with its counts, or 202 and a
// job (GET /v1/jobs/{id}) when it is large enough to be queued.
func (a *api) importDocument(c *gin.Context) error {
	if a.knowledge == nil {
		return memory.ErrNotConfigured
	}
	// An admin's document may take its own limit, beyond the bodies of
	// other requests; no one else may import, or send one.
	limit := a.maxBody
	if principalOf(c).Kind == memory.KindAdmin {
		limit = max(limit, documents.MaxImportBytes)
	}
	body, err := a.readBodyUpTo(c, limit)
	if err != nil {
		return importerFirst(c, err)
	}
	var req documents.ImportRequest
	if err := decodeStrict(body, &req); err != nil {
		return importerFirst(c, err)
	}
	res, err := a.knowledge.Import(c.Request.Context(), principalOf(c), req)
	if err != nil {
		return err
	}
	if res.Job != nil {
		c.Header("Location", "/v1/jobs/"+res.Job.ID)
		c.JSON(http.StatusAccepted, res)
		return nil
	}
	c.JSON(http.StatusOK, res)
	return nil
}

// importerFirst is adminFirst for the knowledge routes, which
// documents.Service leaves to the tenant's admins alone, whatever the
// policy: anyone else is refused 403 whatever the request held.
func importerFirst(c *gin.Context, bad error) error {
	if principalOf(c).Kind != memory.KindAdmin {
		return memory.ErrForbidden
	}
	return bad
}

func (a *api) listDocuments(c *gin.Context) error {
	if a.knowledge == nil {
		return memory.ErrNotConfigured
	}
	ds, err := a.knowledge.List(c.Request.Context(), principalOf(c))
	if err != nil {
		return err
	}
	if ds == nil {
		ds = []documents.Info{}
	}
	c.JSON(http.StatusOK, documentList{Documents: ds})
	return nil
}

func (a *api) removeDocument(c *gin.Context) error {
	if a.knowledge == nil {
		return memory.ErrNotConfigured
	}
	id := strings.TrimPrefix(c.Param("id"), "/")
	n, err := a.knowledge.Remove(c.Request.Context(), principalOf(c), id)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, documentRemoved{Document: id, Retired: n})
	return nil
}
