package handlers

import (
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"mneme/memory"
)

// eraseUser forgets a user everywhere and answers with the receipt.
func (a *api) eraseUser(c *gin.Context) error {
	r, err := a.svc.EraseUser(c.Request.Context(), principalOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	a.observe.Erased(r)
	c.JSON(http.StatusOK, r)
	return nil
}

// sweep runs the janitor over the caller's tenant; ?dry_run=true reports
// without changing anything.
func (a *api) sweep(c *gin.Context) error {
	dryRun := false
	if s := c.Query("dry_run"); s != "" {
		v, err := strconv.ParseBool(s)
		if err != nil {
			return memory.Invalid("dry_run", "must be true or false")
		}
		dryRun = v
	}
	r, err := a.svc.Sweep(c.Request.Context(), principalOf(c), dryRun)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, r)
	return nil
}
