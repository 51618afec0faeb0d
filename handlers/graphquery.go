package handlers

import (
	"context"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"mneme/graphquery"
	"mneme/memory"
)

// Analysts' graph queries (/v1/graph): each reads its query string, asks the
// graph query service and answers its result.

func (a *api) graphRoutes(v1 *gin.RouterGroup) {
	g := v1.Group("/graph")
	s := a.graph // nil when off: graphRoute answers 501 before calling it
	g.GET("/entities", a.handle(graphRoute(a, graphquery.ParseEntities, s.Entities)))
	g.GET("/neighbourhood", a.handle(graphRoute(a, graphquery.ParseNeighbourhood, s.Neighbourhood)))
	g.GET("/paths", a.handle(graphRoute(a, graphquery.ParsePaths, s.Paths)))
	g.GET("/co-mentions", a.handle(graphRoute(a, graphquery.ParseCoMentions, s.CoMentions)))
	g.GET("/timeline", a.handle(graphRoute(a, graphquery.ParseTimeline, s.Timeline)))
	g.GET("/aggregates", a.handle(graphRoute(a, graphquery.ParseAggregate, s.Aggregate)))
	// Raw Cypher is refused, and the attempt recorded; see
	// graphquery.ErrCypherRefused.
	g.POST("/cypher", a.handle(func(c *gin.Context) error {
		if a.graph == nil {
			return memory.ErrNotConfigured
		}
		return a.graph.Cypher(c.Request.Context(), principalOf(c), int(c.Request.ContentLength))
	}))
}

// graphRoute is one query shape: parse the query string, run the query.
func graphRoute[Q, R any](a *api, parse func(url.Values) (Q, error), query func(context.Context, memory.Principal, Q) (R, error)) func(c *gin.Context) error {
	return func(c *gin.Context) error {
		if a.graph == nil {
			return memory.ErrNotConfigured
		}
		q, err := parse(c.Request.URL.Query())
		if err != nil {
			return err
		}
		res, err := query(c.Request.Context(), principalOf(c), q)
		if err != nil {
			return err
		}
		c.JSON(http.StatusOK, res)
		return nil
	}
}
