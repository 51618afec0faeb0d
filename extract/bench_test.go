package extract

import (
	"context"
	"testing"

	"mneme/memory"
)

// BenchmarkRules extracts from a ten-turn conversation in both languages.
func BenchmarkRules(b *testing.B) {
	turns := []memory.Turn{
		{Role: memory.RoleUser, Content: "Hi, it's Alice from Hangzhou Lianhua Trading."},
		{Role: memory.RoleAssistant, Content: "Hello Alice, how can I help?"},
		{Role: memory.RoleUser, Content: "My budget is 150k CNY for Q4. I prefer short answers."},
		{Role: memory.RoleAssistant, Content: "Noted."},
		{Role: memory.RoleUser, Content: "Where is my order SO-1004? It should arrive before 20 Oct."},
		{Role: memory.RoleAssistant, Content: "Let me check."},
		{Role: memory.RoleUser, Content: "请不要打电话给我，发微信就行。预算调整为十五万元。"},
		{Role: memory.RoleAssistant, Content: "好的。"},
		{Role: memory.RoleUser, Content: "记住我们仓库周日不收货。谢谢！"},
		{Role: memory.RoleUser, Content: "Thanks, bye!"},
	}
	r := NewRules(nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Extract(ctx, turns); err != nil {
			b.Fatal(err)
		}
	}
}
