package client

import (
	"context"
	"net/http"
)

// CreateGrant lets one agent read what another wrote (admins).
func (c *Client) CreateGrant(ctx context.Context, g NewGrant) (Grant, error) {
	var out Grant
	_, err := c.send(ctx, call{method: http.MethodPost, path: "/v1/grants", body: g}, &out)
	return out, err
}

// ListGrants returns the tenant's grants with their revision (admins).
func (c *Client) ListGrants(ctx context.Context) (GrantSet, error) {
	var out GrantSet
	_, err := c.send(ctx, call{method: http.MethodGet, path: "/v1/grants"}, &out)
	return out, err
}

// GetGrant returns one grant (admins).
func (c *Client) GetGrant(ctx context.Context, id string) (Grant, error) {
	var out Grant
	_, err := c.send(ctx, call{method: http.MethodGet, path: "/v1/grants" + pathOf(id)}, &out)
	return out, err
}

// UpdateGrant changes a grant in one step (admins); nil fields stay.
func (c *Client) UpdateGrant(ctx context.Context, id string, g GrantChange) (Grant, error) {
	var out Grant
	_, err := c.send(ctx, call{method: http.MethodPatch, path: "/v1/grants" + pathOf(id), body: g}, &out)
	return out, err
}

// DeleteGrant withdraws a grant (admins).
func (c *Client) DeleteGrant(ctx context.Context, id string) error {
	_, err := c.send(ctx, call{method: http.MethodDelete, path: "/v1/grants" + pathOf(id)}, nil)
	return err
}
