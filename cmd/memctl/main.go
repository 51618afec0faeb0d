// Command memctl is the admin and analyst CLI for Mneme. Most commands talk
// to memoryd's REST API with an API key; `seed` and `tenant create` talk to
// the stores directly, because they are how a tenant gets its first keys.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"mneme/app"
	mneme "mneme/client"
	"mneme/seed"
)

const usage = `usage: memctl [-url URL] [-key KEY] COMMAND [ARGS]

Commands:
  seed                         load the demo dataset into Neo4j (uses NEO4J_URI, REDIS_URL)
  keys                         print the demo API keys
  whoami                       show the principal of the API key
  get ID                       show one memory
  list [user=U] [type=T] ...   list memories (filters: user_id type kind status from to limit)
  history ID                   show the versions of a memory
  recall USER QUERY...         recall memories about USER for QUERY
  grants list                  list sharing grants (admin)
  grants add JSON              add a grant, e.g. '{"grantee":"support-bot","source":"order-bot","types":["episodic"],"max_sensitivity":"internal"}'
  grants remove ID             remove a grant
  grants change ID JSON        change a grant, e.g. '{"kinds":["order"]}' or '{"no_expiry":true}'
  policy show                  the active revision, epoch, grant revision and history (admin)
  policy list                  list policy revisions (0 is the bundled policy)
  policy get N                 show revision N with its modules
  policy export N DIR          write revision N's modules into DIR, to edit and push
  policy diff A B              line diff from revision A to revision B
  policy test PATH...          check modules (files or directories of .rego) without storing them
  policy push [-m MSG] PATH... store modules as a new revision (checked, not activated)
  policy simulate DRAFT INPUT [explain]
                               decide INPUT ({"principal":…,"action":…,"resource":…}) against
                               DRAFT: a revision number or PATH; explain lists the rules
  policy replay DRAFT [LIMIT]  replay recent logged decisions against DRAFT; show changes
  policy activate N            check revision N again and put it in force on every replica
  policy rollback [N]          activate the previous revision, or revision N
  decisions [principal=P] [result=R] [action=A] [since=T] [limit=N]
                               the decision log, newest first (admin)
  audit [actor=A] [action=X] [since=T] [limit=N]
                               the admin audit trail, newest first (admin); action=policy.
                               matches every policy action
  graph entities [TEXT] [limit=N]
                               entities whose name or id contains TEXT, with readable mentions
  graph neighbourhood LABEL:ID [hops=1..3] [limit=N] [FILTER...] [user=U] [entity=E]
                               nodes around entity:ID, user:ID, agent:ID, session:ID or memory:ID
  graph paths FROM TO [max_length=N] [via=MENTIONS,SUPERSEDES] [limit=N]
                               shortest paths between two entities through readable memories
  graph co-mentions [ENTITY] [limit=N] [FILTER...]
                               entities mentioned together, with counts
  graph timeline user:ID|entity:ID|kind:KIND [limit=N] [FILTER...] (no kind=)
                               memories over time, every version
  graph aggregate BY [FILTER...] [user=U] [entity=E]
                               counts by type, kind, agent, user, entity, status, sensitivity,
                               day, week or month
                               (analyst, admin; FILTER: type= kind= status= agent= sensitivity=
                               since= until=; a command refuses an option it does not take;
                               -json prints JSON)
  delete ID [REASON...]        delete a memory (every version you may delete), saying why; prints the receipt
  erase USER                   erase a user everywhere (admin, or the user themself); prints the receipt
  janitor run|dry-run          sweep the tenant now: expire, archive, cap (admin); dry-run changes nothing

  tenant create NAME           create a tenant and print its first admin key, once (uses NEO4J_URI,
                               REDIS_URL, MNEME_KEY_SECRET)
  principal list               the tenant's agents, users, analysts and admins (admin)
  principal create KIND ID [team=T] [roles=a,b] [name="N"]
                               register an agent, user, analyst or admin
  principal change KIND ID [team=T] [roles=a,b] [name="N"]
                               change what create set ("" clears it)
  principal get|delete KIND ID show one, or remove it with its keys
  key list                     the tenant's API keys, never their secrets (admin)
  key create KIND ID [expires=TIME]
                               issue a key for a principal; the secret is printed once
  key get|revoke ID            show a key, or stop it on every replica at once
  key rotate ID [grace=24h]    issue a successor; the old key works for the grace (default 24h)
  key expire ID TIME|never     set or clear a key's expiry (RFC 3339)
  knowledge import PATH… [--scope tenant|team:NAME] [--format markdown|html|text]
                               import knowledge-base documents as shared knowledge, each named by its
                               file name; a re-import writes only what changed (admin)
  knowledge list               the imported documents (admin)
  knowledge remove ID          retire every section of a document (admin)

Flags and environment: -url (MNEME_URL, default http://127.0.0.1:8080), -key (MNEME_API_KEY).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "memctl:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("memctl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	base := fs.String("url", firstNonEmpty(getenv("MNEME_URL"), "http://127.0.0.1:8080"), "memoryd base URL")
	key := fs.String("key", getenv("MNEME_API_KEY"), "API key")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("no command")
	}
	cmd, rest := fs.Arg(0), fs.Args()[1:]
	switch cmd {
	case "seed":
		return seedCmd(ctx, getenv, stdout, stderr)
	case "keys":
		return keysCmd(stdout)
	case "tenant":
		if err := tenantCmd(ctx, fs.Args()[1:], getenv, stdout, stderr); !errors.Is(err, errUsage) {
			return err
		}
		fs.Usage()
		return fmt.Errorf("unknown command or wrong arguments: %s", strings.Join(fs.Args(), " "))
	}
	if *key == "" {
		return errors.New("an API key is needed: -key or MNEME_API_KEY (memctl keys prints the demo keys)")
	}
	c := client{api: mneme.New(*base, *key, nil), out: stdout}
	switch {
	case cmd == "whoami" && len(rest) == 0:
		return c.print(c.api.WhoAmI(ctx))
	case cmd == "get" && len(rest) == 1:
		return c.print(c.api.Get(ctx, rest[0]))
	case cmd == "history" && len(rest) == 1:
		ms, err := c.api.History(ctx, rest[0])
		return c.print(map[string][]mneme.Memory{"memories": ms}, err)
	case cmd == "list":
		q := url.Values{}
		for _, kv := range rest {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return fmt.Errorf("list filter %q is not name=value", kv)
			}
			if k == "user" {
				k = "user_id"
			}
			q.Set(k, v)
		}
		return c.call(ctx, http.MethodGet, "/v1/memories?"+q.Encode(), nil)
	case cmd == "recall" && len(rest) >= 2:
		return c.print(c.api.Recall(ctx, mneme.RecallRequest{UserID: rest[0], Query: strings.Join(rest[1:], " ")}))
	case cmd == "delete" && len(rest) >= 1:
		return c.print(c.api.DeleteBecause(ctx, rest[0], strings.Join(rest[1:], " ")))
	case cmd == "erase" && len(rest) == 1:
		return c.print(c.api.DeleteUser(ctx, rest[0]))
	case cmd == "janitor" && len(rest) == 1 && (rest[0] == "run" || rest[0] == "dry-run"):
		return c.call(ctx, http.MethodPost, "/v1/janitor/sweep?dry_run="+strconv.FormatBool(rest[0] == "dry-run"), nil)
	case cmd == "grants" && len(rest) == 1 && rest[0] == "list":
		return c.call(ctx, http.MethodGet, "/v1/grants", nil)
	case cmd == "grants" && len(rest) == 2 && rest[0] == "add":
		return c.call(ctx, http.MethodPost, "/v1/grants", json.RawMessage(rest[1]))
	case cmd == "grants" && len(rest) == 2 && rest[0] == "remove":
		return c.call(ctx, http.MethodDelete, "/v1/grants/"+url.PathEscape(rest[1]), nil)
	case cmd == "grants" && len(rest) == 3 && rest[0] == "change":
		return c.call(ctx, http.MethodPatch, "/v1/grants/"+url.PathEscape(rest[1]), json.RawMessage(rest[2]))
	case cmd == "policy" && len(rest) > 0:
		if err := c.policy(ctx, rest); !errors.Is(err, errUsage) {
			return err
		}
	case cmd == "principal" && len(rest) > 0:
		if err := c.principal(ctx, rest); !errors.Is(err, errUsage) {
			return err
		}
	case cmd == "graph" && len(rest) > 0:
		if err := c.graph(ctx, rest); !errors.Is(err, errUsage) {
			return err
		}
	case cmd == "key" && len(rest) > 0:
		if err := c.keys(ctx, rest); !errors.Is(err, errUsage) {
			return err
		}
	case cmd == "knowledge" && len(rest) > 0:
		if err := c.knowledge(ctx, rest); !errors.Is(err, errUsage) {
			return err
		}
	case cmd == "decisions":
		q, err := filters(rest)
		if err != nil {
			return err
		}
		return c.call(ctx, http.MethodGet, "/v1/decisions?"+q.Encode(), nil)

	case cmd == "audit":
		q, err := filters(rest)
		if err != nil {
			return err
		}
		return c.call(ctx, http.MethodGet, "/v1/audit?"+q.Encode(), nil)
	}
	fs.Usage()
	return fmt.Errorf("unknown command or wrong arguments: %s", strings.Join(fs.Args(), " "))
}

func seedCmd(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) error {
	a, err := app.NewTool(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer a.Close(context.WithoutCancel(ctx))
	// The decision log and the policy listener finish what seeding starts.
	defer a.StartWorkers(ctx)()
	report, err := a.LoadDemo(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "seeded: %+v\n", report)
	return keysCmd(stdout)
}

func keysCmd(stdout io.Writer) error {
	ds, err := seed.Demo()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "demo API keys (tenant %s):\n", ds.Tenant)
	for _, k := range ds.APIKeys {
		fmt.Fprintf(stdout, "  %-8s %-12s %s\n", k.Kind, k.ID, k.Key)
	}
	return nil
}

// client runs memctl's REST commands through the Go client, which retries
// a 503 and turns an error status into an error with the API's code.
type client struct {
	api *mneme.Client
	out io.Writer
}

// call sends one request and prints the JSON answer indented.
func (c client) call(ctx context.Context, method, path string, body any) error {
	raw, err := c.fetch(ctx, method, path, body)
	if err != nil {
		return err
	}
	if len(raw) == 0 {
		fmt.Fprintln(c.out, "ok")
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("server sent non-JSON: %w", err)
	}
	return c.print(v, nil)
}

// print writes an answer as indented JSON, or returns the call's error.
func (c client) print(v any, err error) error {
	if err != nil {
		return err
	}
	enc := json.NewEncoder(c.out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // the context block is meant to be read
	return enc.Encode(v)
}

// fetch sends one request and returns the body of a successful answer.
func (c client) fetch(ctx context.Context, method, path string, body any) ([]byte, error) {
	var raw json.RawMessage
	if err := c.api.Do(ctx, method, path, body, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
