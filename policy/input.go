package policy

import (
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"mneme/memory"
)

// inputValue builds the policy input
//
//	{principal, action, resource, context: {now}}
//
// where principal and resource carry every field of memory.Principal and
// memory.Resource under its JSON name, always present (empty string or empty
// roles when unset, so that a policy never meets an absent field), and now is
// RFC 3339 in UTC. It builds the AST directly: going through encoding/json
// would cost more than the evaluation itself.
func inputValue(p memory.Principal, action string, r memory.Resource, now time.Time) ast.Value {
	return ast.NewObject(
		item("principal", principalTerm(p)),
		item("action", ast.StringTerm(action)),
		item("resource", resourceTerm(r)),
		item("context", ast.ObjectTerm(item("now", ast.StringTerm(now.UTC().Format(time.RFC3339Nano))))),
	)
}

func principalTerm(p memory.Principal) *ast.Term {
	roles := make([]*ast.Term, len(p.Roles))
	for i, role := range p.Roles {
		roles[i] = ast.StringTerm(role)
	}
	return ast.ObjectTerm(
		item("tenant", ast.StringTerm(p.Tenant)),
		item("kind", ast.StringTerm(p.Kind)),
		item("id", ast.StringTerm(p.ID)),
		item("roles", ast.ArrayTerm(roles...)),
		item("team", ast.StringTerm(p.Team)),
	)
}

func resourceTerm(r memory.Resource) *ast.Term {
	return ast.ObjectTerm(
		item("tenant", ast.StringTerm(r.Tenant)),
		item("id", ast.StringTerm(r.ID)),
		item("user_id", ast.StringTerm(r.UserID)),
		item("agent_id", ast.StringTerm(r.AgentID)),
		item("type", ast.StringTerm(r.Type)),
		item("kind", ast.StringTerm(r.Kind)),
		item("sensitivity", ast.StringTerm(r.Sensitivity)),
		item("status", ast.StringTerm(r.Status)),
		item("scope", ast.StringTerm(scopeOf(r))),
		item("scope_id", ast.StringTerm(r.ScopeID)),
		item("author", ast.StringTerm(authorOf(r))),
	)
}

// authorOf is r's author as policy sees it: when unset, what its ids say.
func authorOf(r memory.Resource) string {
	switch {
	case r.Author != "":
		return r.Author
	case memory.Memory{UserID: r.UserID, AgentID: r.AgentID}.SaidByUser():
		return memory.AuthorUser
	}
	return memory.AuthorAgent
}

// scopeOf is r's scope as policy sees it: a memory about a user when unset.
func scopeOf(r memory.Resource) string {
	if r.Scope == "" {
		return memory.ScopeUser
	}
	return r.Scope
}

func item(key string, value *ast.Term) [2]*ast.Term {
	return ast.Item(ast.StringTerm(key), value)
}
