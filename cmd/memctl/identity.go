package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"mneme/app"
	"mneme/identity"
)

// tenantCmd creates a tenant through the stores, as seed does: a fresh
// tenant has no admin yet whose key could call the API.
func tenantCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) != 2 || args[0] != "create" {
		return errUsage
	}
	a, err := app.NewTool(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer a.Close(context.WithoutCancel(ctx))
	issued, err := a.Identity.CreateTenant(ctx, args[1])
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "tenant %s created; its admin %q has key %s\n", args[1], identity.FirstAdmin, issued.Key.ID)
	fmt.Fprintf(stdout, "admin key (shown once, store it now): %s\n", issued.Secret)
	return nil
}

// principal and key administer the caller's tenant over REST.
func (c client) principal(ctx context.Context, args []string) error {
	switch {
	case len(args) == 1 && args[0] == "list":
		return c.call(ctx, http.MethodGet, "/v1/principals", nil)
	case len(args) >= 3 && args[0] == "create":
		o, err := principalOptions(args[3:])
		if err != nil {
			return err
		}
		n := identity.NewPrincipal{Kind: args[1], ID: args[2]}
		if o.Team != nil {
			n.Team = *o.Team
		}
		if o.Roles != nil {
			n.Roles = *o.Roles
		}
		if o.Name != nil {
			n.Name = *o.Name
		}
		return c.call(ctx, http.MethodPost, "/v1/principals", n)
	case len(args) >= 4 && args[0] == "change":
		ch, err := principalOptions(args[3:])
		if err != nil {
			return err
		}
		return c.call(ctx, http.MethodPatch, principalPath(args[1], args[2]), ch)
	case len(args) == 3 && args[0] == "get":
		return c.call(ctx, http.MethodGet, principalPath(args[1], args[2]), nil)
	case len(args) == 3 && args[0] == "delete":
		return c.call(ctx, http.MethodDelete, principalPath(args[1], args[2]), nil)
	}
	return errUsage
}

// principalOptions reads team=T, roles=a,b and name=N, each only when given
// ("roles=" is no roles).
func principalOptions(kvs []string) (identity.PrincipalChange, error) {
	var o identity.PrincipalChange
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		switch {
		case ok && k == "team":
			o.Team = &v
		case ok && k == "roles":
			roles := []string{}
			if v != "" {
				roles = strings.Split(v, ",")
			}
			o.Roles = &roles
		case ok && k == "name":
			o.Name = &v
		default:
			return o, fmt.Errorf("principal option %q is not team=T, roles=a,b or name=N", kv)
		}
	}
	return o, nil
}

func principalPath(kind, id string) string {
	return "/v1/principals/" + url.PathEscape(kind) + "/" + url.PathEscape(id)
}

func (c client) keys(ctx context.Context, args []string) error {
	switch {
	case len(args) == 1 && args[0] == "list":
		return c.call(ctx, http.MethodGet, "/v1/keys", nil)
	case (len(args) == 3 || len(args) == 4) && args[0] == "create":
		n := identity.NewKey{OwnerKind: args[1], OwnerID: args[2]}
		if len(args) == 4 {
			v, ok := strings.CutPrefix(args[3], "expires=")
			t, err := time.Parse(time.RFC3339, v)
			if !ok || err != nil {
				return fmt.Errorf("%q is not expires=<RFC 3339 time>", args[3])
			}
			n.ExpiresAt = &t
		}
		return c.call(ctx, http.MethodPost, "/v1/keys", n)
	case len(args) == 2 && args[0] == "get":
		return c.call(ctx, http.MethodGet, "/v1/keys/"+url.PathEscape(args[1]), nil)
	case len(args) == 2 && args[0] == "revoke":
		return c.call(ctx, http.MethodDelete, "/v1/keys/"+url.PathEscape(args[1]), nil)
	case (len(args) == 2 || len(args) == 3) && args[0] == "rotate":
		var r identity.Rotation
		if len(args) == 3 {
			v, ok := strings.CutPrefix(args[2], "grace=")
			d, err := time.ParseDuration(v)
			if !ok || err != nil {
				return fmt.Errorf("%q is not grace=<duration such as 24h or 0s>", args[2])
			}
			secs := int64(d / time.Second)
			r.GraceSeconds = &secs
		}
		return c.call(ctx, http.MethodPost, "/v1/keys/"+url.PathEscape(args[1])+"/rotate", r)
	case len(args) == 3 && args[0] == "expire":
		var ch identity.KeyChange
		if args[2] == "never" {
			ch.NoExpiry = true
		} else {
			t, err := time.Parse(time.RFC3339, args[2])
			if err != nil {
				return fmt.Errorf("%q is not an RFC 3339 time or never", args[2])
			}
			ch.ExpiresAt = &t
		}
		return c.call(ctx, http.MethodPatch, "/v1/keys/"+url.PathEscape(args[1]), ch)
	}
	return errUsage
}
