package neo

import "regexp"

// UnsizedArgs names the one parameter of an unsized query.
const UnsizedArgs = "args"

var cypherParam = regexp.MustCompile(`\$([A-Za-z_][A-Za-z0-9_]*)`)

// Unsized moves a query's parameters into one map parameter, $args, and
// reads each as $args.name. Neo4j keys a cached plan by the query's text and
// its parameters' types, and for a string or a list also by its length
// rounded up to a power of ten: recall's questions, user ids, partition
// lists and policy values would make one query a dozen plans to make, each
// costing the request that meets it first hundreds of milliseconds. A map
// has no size, so an unsized query is planned once. The rewrite touches
// parameter names only, so a query must hold no '$' in a string literal.
func Unsized(cypher string, params map[string]any) (string, map[string]any) {
	text := cypherParam.ReplaceAllStringFunc(cypher, func(p string) string {
		if _, ok := params[p[1:]]; ok {
			return "$" + UnsizedArgs + "." + p[1:]
		}
		return p
	})
	return text, map[string]any{UnsizedArgs: params}
}
