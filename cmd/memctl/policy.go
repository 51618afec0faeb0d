package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"mneme/policyadmin"
)

// errUsage means the arguments fit no policy command.
var errUsage = errors.New("usage")

// policy runs `memctl policy …`.
func (c client) policy(ctx context.Context, args []string) error {
	sub, rest := args[0], args[1:]
	switch {
	case sub == "show" && len(rest) == 0:
		return c.call(ctx, http.MethodGet, "/v1/policy", nil)
	case sub == "list" && len(rest) == 0:
		return c.call(ctx, http.MethodGet, "/v1/policy/revisions", nil)
	case sub == "get" && len(rest) == 1:
		return c.call(ctx, http.MethodGet, "/v1/policy/revisions/"+url.PathEscape(rest[0]), nil)
	case sub == "export" && len(rest) == 2:
		return c.exportPolicy(ctx, rest[0], rest[1])
	case sub == "diff" && len(rest) == 2:
		raw, err := c.fetch(ctx, http.MethodGet, "/v1/policy/diff?"+url.Values{"from": {rest[0]}, "to": {rest[1]}}.Encode(), nil)
		if err != nil {
			return err
		}
		var d struct{ Diff string }
		if err := json.Unmarshal(raw, &d); err != nil {
			return err
		}
		if d.Diff == "" {
			fmt.Fprintln(c.out, "no difference")
		}
		fmt.Fprint(c.out, d.Diff)
		return nil
	case sub == "test" && len(rest) > 0:
		modules, err := readModules(rest)
		if err != nil {
			return err
		}
		return c.call(ctx, http.MethodPost, "/v1/policy/test", map[string]any{"modules": modules})
	case sub == "push" && len(rest) > 0:
		msg := ""
		if rest[0] == "-m" && len(rest) > 2 {
			msg, rest = rest[1], rest[2:]
		}
		modules, err := readModules(rest)
		if err != nil {
			return err
		}
		return c.call(ctx, http.MethodPut, "/v1/policy", policyadmin.NewPolicy{Message: msg, Modules: modules})
	case sub == "simulate" && (len(rest) == 2 || len(rest) == 3 && rest[2] == "explain"):
		req := policyadmin.SimulateRequest{Explain: len(rest) == 3}
		if err := draft(rest[0], &req.Revision, &req.Modules); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(rest[1]), &req.Input); err != nil {
			return fmt.Errorf("simulate input: %w", err)
		}
		return c.call(ctx, http.MethodPost, "/v1/policy/simulate", req)
	case sub == "replay" && (len(rest) == 1 || len(rest) == 2):
		var req policyadmin.ReplayRequest
		if err := draft(rest[0], &req.Revision, &req.Modules); err != nil {
			return err
		}
		if len(rest) == 2 {
			n, err := strconv.Atoi(rest[1])
			if err != nil {
				return fmt.Errorf("replay limit %q is not a number", rest[1])
			}
			req.Limit = n
		}
		return c.call(ctx, http.MethodPost, "/v1/policy/replay", req)
	case sub == "activate" && len(rest) == 1:
		return c.call(ctx, http.MethodPost, "/v1/policy/revisions/"+url.PathEscape(rest[0])+"/activate", nil)
	case sub == "rollback" && len(rest) <= 1:
		body := map[string]any{}
		if len(rest) == 1 {
			n, err := strconv.ParseInt(rest[0], 10, 64)
			if err != nil {
				return fmt.Errorf("rollback revision %q is not a number", rest[0])
			}
			body["revision"] = n
		}
		return c.call(ctx, http.MethodPost, "/v1/policy/rollback", body)
	}
	return errUsage
}

// draft reads a draft given as a revision number or as paths of modules.
func draft(arg string, revision **int64, modules *[]policyadmin.PolicyModule) error {
	if n, err := strconv.ParseInt(arg, 10, 64); err == nil {
		*revision = &n
		return nil
	}
	ms, err := readModules([]string{arg})
	*modules = ms
	return err
}

// readModules reads .rego files, and every .rego file directly inside the
// directories given, each named by its base name.
func readModules(paths []string) ([]policyadmin.PolicyModule, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		matches, err := filepath.Glob(filepath.Join(p, "*.rego"))
		if err != nil {
			return nil, err
		}
		files = append(files, matches...)
	}
	sort.Strings(files)
	var out []policyadmin.PolicyModule
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, policyadmin.PolicyModule{Name: filepath.Base(f), Source: string(src)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no .rego files in %s", strings.Join(paths, " "))
	}
	return out, nil
}

// exportPolicy writes a revision's modules into dir.
func (c client) exportPolicy(ctx context.Context, number, dir string) error {
	raw, err := c.fetch(ctx, http.MethodGet, "/v1/policy/revisions/"+url.PathEscape(number), nil)
	if err != nil {
		return err
	}
	var rev policyadmin.PolicyRevision
	if err := json.Unmarshal(raw, &rev); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, m := range rev.Modules {
		if filepath.Base(m.Name) != m.Name {
			return fmt.Errorf("module name %q is not a plain file name", m.Name)
		}
		if err := os.WriteFile(filepath.Join(dir, m.Name), []byte(m.Source), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(c.out, "revision %d (%s): %d modules written to %s\n", rev.Number, rev.Digest, len(rev.Modules), dir)
	return nil
}

// filters turns name=value arguments into a query.
func filters(args []string) (url.Values, error) {
	q := url.Values{}
	for _, kv := range args {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("filter %q is not name=value", kv)
		}
		q.Set(k, v)
	}
	return q, nil
}
