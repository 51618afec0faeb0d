package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"mneme/identity"
)

// Principals and API keys of the caller's tenant. Every route is for its
// admins; another tenant's ids are simply not found.

type principalsResponse struct {
	Principals []identity.Principal `json:"principals"`
}

type keysResponse struct {
	Keys []identity.Key `json:"keys"`
}

func (a *api) createPrincipal(c *gin.Context) error {
	var req identity.NewPrincipal
	if err := a.bindAdmin(c, &req); err != nil {
		return err
	}
	p, err := a.ident.CreatePrincipal(c.Request.Context(), principalOf(c), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, p)
	return nil
}

func (a *api) listPrincipals(c *gin.Context) error {
	ps, err := a.ident.Principals(c.Request.Context(), principalOf(c))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, principalsResponse{Principals: nonNil(ps)})
	return nil
}

func (a *api) getPrincipal(c *gin.Context) error {
	p, err := a.ident.Principal(c.Request.Context(), principalOf(c), c.Param("kind"), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, p)
	return nil
}

func (a *api) changePrincipal(c *gin.Context) error {
	var req identity.PrincipalChange
	if err := a.bindAdmin(c, &req); err != nil {
		return err
	}
	p, err := a.ident.ChangePrincipal(c.Request.Context(), principalOf(c), c.Param("kind"), c.Param("id"), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, p)
	return nil
}

func (a *api) deletePrincipal(c *gin.Context) error {
	if err := a.ident.DeletePrincipal(c.Request.Context(), principalOf(c), c.Param("kind"), c.Param("id")); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}

func (a *api) createKey(c *gin.Context) error {
	var req identity.NewKey
	if err := a.bindAdmin(c, &req); err != nil {
		return err
	}
	k, err := a.ident.CreateKey(c.Request.Context(), principalOf(c), req)
	if err != nil {
		return err
	}
	// The secret is in this answer and nowhere else: nothing may keep it.
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusCreated, k)
	return nil
}

func (a *api) listKeys(c *gin.Context) error {
	ks, err := a.ident.Keys(c.Request.Context(), principalOf(c))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, keysResponse{Keys: nonNil(ks)})
	return nil
}

func (a *api) getKey(c *gin.Context) error {
	k, err := a.ident.Key(c.Request.Context(), principalOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, k)
	return nil
}

func (a *api) changeKey(c *gin.Context) error {
	var req identity.KeyChange
	if err := a.bindAdmin(c, &req); err != nil {
		return err
	}
	k, err := a.ident.ChangeKey(c.Request.Context(), principalOf(c), c.Param("id"), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, k)
	return nil
}

func (a *api) revokeKey(c *gin.Context) error {
	k, err := a.ident.RevokeKey(c.Request.Context(), principalOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, k)
	return nil
}

// rotateKey takes an optional body: without one the grace is the default.
func (a *api) rotateKey(c *gin.Context) error {
	var req identity.Rotation
	if c.Request.ContentLength != 0 {
		if err := a.bindAdmin(c, &req); err != nil {
			return err
		}
	}
	k, err := a.ident.RotateKey(c.Request.Context(), principalOf(c), c.Param("id"), req)
	if err != nil {
		return err
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusCreated, k)
	return nil
}

// nonNil makes an empty listing encode as [] rather than null.
func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}
