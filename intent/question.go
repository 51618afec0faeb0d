package intent

import (
	"mneme/facts"
	"mneme/relevance"
)

// Question reads text into what the relevance gate weighs: its keywords
// (terms) weighed by how many of the user's memories contain them, counted
// among docs, the full-text hits (every memory sharing a keyword, up to
// the search's limit), against the n memories of the partition; and whom
// and what it asks about. forUser says the recall names a user, who is
// that user's name; ask is what DetectFor read in it.
func Question(text string, who Person, forUser bool, ask Ask, terms, docs []string, n int) relevance.Question {
	q := relevance.Analyse(terms, docs, n)
	other := who.NamesOther(text) // about another user, neither the user nor a dealing of theirs
	q.AboutUser, q.Identifiers, q.Social = forUser && !other && about(text, who), facts.Identifiers(text), q.Social || Phatic(text)
	q.AboutDealing, q.World = forUser && !q.AboutUser && !other && Dealing(text), !q.AboutUser && General(text)
	q.Asks, q.Refers, q.Requests, q.Prefers, q.HowTo = Asks(text), Refers(text), Requests(text), Prefers(text), HowTo(text)
	q.Topical = ask.Topical
	return q
}
