package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"mneme/policyadmin"
)

// Sharing grants: data, not code, that lets one agent read what another
// wrote. Every route is for the admins of the caller's tenant.

func (a *api) createGrant(c *gin.Context) error {
	var req policyadmin.NewGrant
	if err := a.bindAdmin(c, &req); err != nil {
		return err
	}
	g, created, err := a.admin.CreateGrant(c.Request.Context(), principalOf(c), req)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if !created { // the tenant has this grant already: it is the answer
		status = http.StatusOK
	}
	c.JSON(status, g)
	return nil
}

func (a *api) listGrants(c *gin.Context) error {
	set, err := a.admin.Grants(c.Request.Context(), principalOf(c))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, set)
	return nil
}

func (a *api) deleteGrant(c *gin.Context) error {
	if err := a.admin.DeleteGrant(c.Request.Context(), principalOf(c), c.Param("id")); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}

func (a *api) getGrant(c *gin.Context) error {
	g, err := a.admin.Grant(c.Request.Context(), principalOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, g)
	return nil
}

func (a *api) updateGrant(c *gin.Context) error {
	var req policyadmin.GrantChange
	if err := a.bindAdmin(c, &req); err != nil {
		return err
	}
	g, err := a.admin.UpdateGrant(c.Request.Context(), principalOf(c), c.Param("id"), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, g)
	return nil
}
