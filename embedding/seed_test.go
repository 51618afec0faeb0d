package embedding_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"mneme/embedding"
	"mneme/seed"
)

// These tests measure the built-in embedder on the demo dataset, the way
// recall uses it: a question against the memories of one user. Run them
// with -v to see the numbers recall's relevance floor is chosen from.

// unrelatedQuestions must recall nothing: no seed memory may come near them.
var unrelatedQuestions = []string{"what's the weather today", "今天天气怎么样"}

// chitChat is more small talk, reported but not asserted: a chance word
// ("goods" for "good", "2 Nov" for "2+2") is a true if useless match.
var chitChat = []string{
	"tell me a joke", "hello there", "what time is it", "who won the football match",
	"recommend a good movie", "write a poem about the sea", "what is the capital of France",
	"what's 2+2", "讲个笑话", "帮我翻译一下这句话", "你好",
}

// unrelatedCeiling is the most an unrelated question may score against any
// seed memory. Recall's relevance floor must sit above it.
const unrelatedCeiling = 0.2

type seedQuestion struct {
	question string
	user     string
	refs     []string // any of these answers the question
	// min is the least cosine the best answer must reach. Questions in the
	// memory's language score well; across languages only the bilingual
	// lexicon bridges the gap, so they score lower.
	min float64
}

var seedQuestions = []seedQuestion{
	{"Does the user like short replies?", "alice", []string{"alice-answer-style"}, 0.3},
	{"what is alice's budget", "alice", []string{"alice-budget-150k", "alice-budget-100k"}, 0.3},
	{"预算多少", "alice", []string{"alice-budget-150k", "alice-budget-100k"}, 0.3},
	{"when does alice's membership expire", "alice", []string{"alice-membership"}, 0.3},
	{"do I need approval for a 60k order?", "alice", []string{"rule-approval"}, 0.3},
	{"which provinces are in East China", "alice", []string{"def-east-china"}, 0.25},
	{"where is order SO-1001", "alice", []string{"alice-so1001"}, 0.3},
	{"SO-1004 发货了吗", "alice", []string{"alice-so1004"}, 0.3},
	{"what is our cost for alice", "alice", []string{"alice-internal-cost"}, 0.3},
	{"how do I handle damaged items", "alice", []string{"howto-damaged"}, 0.3},
	{"how should I contact Alice", "alice", []string{"alice-contact"}, 0.3},
	{"bob's delivery address", "bob", []string{"bob-delivery-address"}, 0.3},
	{"is SO-1005 delayed", "bob", []string{"bob-so1005", "bob-so1005-complaint"}, 0.3},
	{"what is Bob's credit limit", "bob", []string{"bob-credit-limit"}, 0.3},
	{"Carol 喜欢什么样的回复", "carol", []string{"carol-answer-style"}, 0.3},
	{"carol 的发票怎么开", "carol", []string{"carol-howto-vat", "carol-invoice-schedule"}, 0.25},
	// Across languages.
	{"会员什么时候到期", "alice", []string{"alice-membership"}, 0.12},
	{"华东包括哪些省份", "alice", []string{"def-east-china"}, 0.12},
	{"退货政策是什么", "carol", []string{"carol-rule-returns"}, 0.1},
}

type seedMemories struct {
	refs, users, contents []string
	vectors               [][]float32
}

func embedSeed(t *testing.T, e *embedding.Builtin) seedMemories {
	t.Helper()
	ds, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	var s seedMemories
	// The last memory of a key's slot supersedes the earlier ones, and a
	// temporary rule has ended: recall never gives either now.
	head := map[[4]string]string{}
	for _, m := range ds.Memories {
		if m.Key != "" {
			head[[4]string{m.UserID, m.Scope, m.ScopeID, m.Key}] = m.Ref
		}
	}
	for _, m := range ds.Memories {
		if m.ValidTo != nil || m.Key != "" && head[[4]string{m.UserID, m.Scope, m.ScopeID, m.Key}] != m.Ref {
			continue
		}
		s.refs = append(s.refs, m.Ref)
		s.users = append(s.users, m.UserID)
		s.contents = append(s.contents, m.Content)
	}
	if s.vectors, err = e.Embed(t.Context(), s.contents); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestUnrelatedQuestionsMatchNoSeedMemory(t *testing.T) {
	e := embedding.NewBuiltin(0)
	mems := embedSeed(t, e)
	for _, q := range unrelatedQuestions {
		qv := embedOne(t, e, q)
		best, at := 0.0, 0
		for i, v := range mems.vectors {
			if c := cosine(qv, v); c > best {
				best, at = c, i
			}
		}
		t.Logf("%q: max cosine %.3f over %d memories (%s)", q, best, len(mems.vectors), mems.refs[at])
		if best >= unrelatedCeiling {
			t.Errorf("%q has cosine %.3f with %s %q, want < %v",
				q, best, mems.refs[at], mems.contents[at], unrelatedCeiling)
		}
	}
}

func TestSeedQuestionsFindTheirMemory(t *testing.T) {
	e := embedding.NewBuiltin(0)
	mems := embedSeed(t, e)
	for _, sq := range seedQuestions {
		t.Run(sq.question, func(t *testing.T) {
			qv := embedOne(t, e, sq.question)
			var ranked []scored // this user's memories and the shared ones, best first
			for i, v := range mems.vectors {
				// Recall reads the tenant's shared knowledge (user "")
				// beside the user's memories.
				if mems.users[i] == sq.user || mems.users[i] == "" {
					ranked = append(ranked, scored{mems.refs[i], cosine(qv, v)})
				}
			}
			slices.SortStableFunc(ranked, func(a, b scored) int {
				switch {
				case a.cos > b.cos:
					return -1
				case a.cos < b.cos:
					return 1
				}
				return 0
			})
			rank := slices.IndexFunc(ranked, func(s scored) bool { return slices.Contains(sq.refs, s.ref) })
			if rank < 0 {
				t.Fatalf("no memory of %s among %v", sq.user, sq.refs)
			}
			got := ranked[rank]
			t.Logf("cosine %.3f with %s, rank %d of %d; next best %s %.3f",
				got.cos, got.ref, rank+1, len(ranked), nextBest(ranked, sq.refs).ref, nextBest(ranked, sq.refs).cos)
			if rank > 0 {
				t.Errorf("%s ranks %d among %s's memories; above it: %v", got.ref, rank+1, sq.user, ranked[:rank])
			}
			if got.cos < sq.min {
				t.Errorf("cosine with %s = %.3f, want >= %v", got.ref, got.cos, sq.min)
			}
		})
	}
}

// scored is a seed memory and its cosine with a question.
type scored struct {
	ref string
	cos float64
}

// nextBest returns the best-ranked memory that does not answer the question.
func nextBest(ranked []scored, refs []string) scored {
	for _, s := range ranked {
		if !slices.Contains(refs, s.ref) {
			return s
		}
	}
	return scored{}
}

// TestSeedReport prints, for several dimensions, the numbers recall's
// relevance floor is chosen from: the best chance match of unrelated
// questions against all seed memories, and the cosines of related pairs.
func TestSeedReport(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("report only; run with -v")
	}
	for _, dim := range []int{256, 512, 1024} {
		e := embedding.NewBuiltin(dim)
		mems := embedSeed(t, e)
		var b strings.Builder
		fmt.Fprintf(&b, "dim %d\n", dim)
		for _, q := range slices.Concat(unrelatedQuestions, chitChat) {
			qv := embedOne(t, e, q)
			best := scored{}
			for i, v := range mems.vectors {
				if c := cosine(qv, v); c > best.cos {
					best = scored{mems.refs[i], c}
				}
			}
			fmt.Fprintf(&b, "  unrelated %-40q max %.3f  %s\n", q, best.cos, best.ref)
		}
		for _, sq := range seedQuestions {
			qv := embedOne(t, e, sq.question)
			for i, v := range mems.vectors {
				if slices.Contains(sq.refs, mems.refs[i]) {
					fmt.Fprintf(&b, "  related   %-40q %.3f  %s\n", sq.question, cosine(qv, v), mems.refs[i])
				}
			}
		}
		t.Log(b.String())
	}
}
