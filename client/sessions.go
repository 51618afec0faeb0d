package client

import (
	"context"
	"net/http"
)

// AppendTurns adds conversation turns to a session of working memory,
// opening it on the first call. Recall with the session's id sees its
// turns; closing it, or its expiry, extracts its memories.
func (c *Client) AppendTurns(ctx context.Context, sessionID string, r AppendRequest) (Session, error) {
	var out Session
	_, err := c.send(ctx, call{method: http.MethodPost, path: "/v1/sessions" + pathOf(sessionID, "turns"), body: r}, &out)
	return out, err
}

// Session returns an open session with its turns.
func (c *Client) Session(ctx context.Context, sessionID string) (Session, error) {
	var out Session
	_, err := c.send(ctx, call{method: http.MethodGet, path: "/v1/sessions" + pathOf(sessionID)}, &out)
	return out, err
}

// CloseSession ends a session and stores what its turns are worth
// remembering.
func (c *Client) CloseSession(ctx context.Context, sessionID string) (CloseResult, error) {
	var out CloseResult
	_, err := c.send(ctx, call{method: http.MethodPost, path: "/v1/sessions" + pathOf(sessionID, "close")}, &out)
	return out, err
}
