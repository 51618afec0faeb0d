package handlers

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"mneme/memory"
	"mneme/policyadmin"
)

// Who may see what: the tenant's policy settings and data-subject exports,
// both for the admins of the caller's tenant.

func (a *api) getSettings(c *gin.Context) error {
	s, err := a.admin.TenantSettings(c.Request.Context(), principalOf(c))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, s)
	return nil
}

// putSettings replaces every setting; patchSettings changes those given.
func (a *api) putSettings(c *gin.Context) error {
	return a.changeSettings(c, a.admin.PutSettings)
}

func (a *api) patchSettings(c *gin.Context) error {
	return a.changeSettings(c, a.admin.PatchSettings)
}

func (a *api) changeSettings(c *gin.Context, change func(context.Context, memory.Principal, policyadmin.SettingsChange) (policyadmin.Settings, error)) error {
	var req policyadmin.SettingsChange
	if err := a.bindAdmin(c, &req); err != nil {
		return err
	}
	s, err := change(c.Request.Context(), principalOf(c), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, s)
	return nil
}

// Exporter gathers everything held about one user into one document
// (export.Service, adapted by app), which the handler sends as it is.
type Exporter interface {
	UserDocument(ctx context.Context, p memory.Principal, userID string) (any, error)
}

// exportUser answers everything held about one user in one document.
func (a *api) exportUser(c *gin.Context) error {
	if a.export == nil {
		return memory.ErrUnavailable
	}
	doc, err := a.export.UserDocument(c.Request.Context(), principalOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, doc)
	return nil
}
