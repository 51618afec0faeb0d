package handlers

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// eraseUser forgets a user everywhere and answers with the receipt.
func (a *api) eraseUser(c *gin.Context) error {
	r, err := a.svc.EraseUser(c.Request.Context(), principalOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, r)
	return nil
}
