package memory

// Filter is a predicate over the metadata of a memory (the fields of
// Resource), compiled from the read policy by the policy engine and turned
// into a query predicate by the store. memory only carries it from one to the
// other; its meaning is fixed here so that both sides agree:
//
//   - FilterTrue and FilterFalse match everything and nothing;
//   - FilterAnd and FilterOr combine Args (an empty And is true, an empty Or
//     false); FilterNot negates its single Arg;
//   - FilterEq, FilterNe and FilterIn compare the Field named by its JSON
//     name in Resource with Values (one value for Eq and Ne, any number for
//     In). A field a memory does not have counts as "", as in the policy
//     input, so negation needs no special case for missing values; but
//     scope, which counts as ScopeUser when unset (ScopeOf).
type Filter struct {
	Op     string   `json:"op"`
	Field  string   `json:"field,omitempty"`
	Values []string `json:"values,omitempty"`
	Args   []Filter `json:"args,omitempty"`
}

// Filter operators.
const (
	FilterTrue  = "true"
	FilterFalse = "false"
	FilterAnd   = "and"
	FilterOr    = "or"
	FilterNot   = "not"
	FilterEq    = "eq"
	FilterNe    = "ne"
	FilterIn    = "in"
)

// FilterFields are the Resource fields a Filter may compare, by JSON name.
// Store and policy engine accept no other.
var FilterFields = []string{"tenant", "id", "user_id", "agent_id", "type", "kind", "sensitivity", "status", "scope", "scope_id", "author"}

// IsFalse reports whether f is the constant false, which matches nothing.
func (f Filter) IsFalse() bool { return f.Op == FilterFalse }

// JointScope is the scope of a recall that reads one user's memories and
// the knowledge shared in the tenant: user is the principal's scope for
// that user's memories, all its scope for every memory. A memory about the
// user is in scope by user; a shared one, about no user, by all. Both must
// carry a filter; otherwise JointScope returns user and false.
func JointScope(user, all Scope) (Scope, bool) {
	if user.Filter == nil || all.Filter == nil {
		return user, false
	}
	return Scope{Tenant: user.Tenant, Filter: &Filter{Op: FilterOr, Args: []Filter{*user.Filter, {Op: FilterAnd, Args: []Filter{
		{Op: FilterEq, Field: "user_id", Values: []string{""}}, {Op: FilterNe, Field: "scope", Values: []string{ScopeUser}}, *all.Filter}}}}}, true
}
