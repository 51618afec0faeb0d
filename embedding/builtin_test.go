package embedding_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mneme/embedding"
	"mneme/memory"
)

var _ memory.Embedder = (*embedding.Builtin)(nil)

func cosine(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func norm(v []float32) float64 { return math.Sqrt(cosine(v, v)) }

// embedOne embeds one text or fails the test.
func embedOne(t testing.TB, e *embedding.Builtin, text string) []float32 {
	t.Helper()
	vs, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatalf("Embed(%q): %v", text, err)
	}
	return vs[0]
}

func TestNewBuiltin(t *testing.T) {
	for _, tc := range []struct {
		dim, want int
	}{
		{0, embedding.DefaultDimension},
		{-3, embedding.DefaultDimension},
		{64, 64},
		{1024, 1024},
	} {
		e := embedding.NewBuiltin(tc.dim)
		if got := e.Dimension(); got != tc.want {
			t.Errorf("NewBuiltin(%d).Dimension() = %d, want %d", tc.dim, got, tc.want)
		}
		if got := len(embedOne(t, e, "order SO-1001")); got != tc.want {
			t.Errorf("NewBuiltin(%d): vector length %d, want %d", tc.dim, got, tc.want)
		}
	}
	if embedding.DefaultDimension != 256 {
		t.Errorf("DefaultDimension = %d, want 256", embedding.DefaultDimension)
	}
	if got := embedding.NewBuiltin(0).Model(); got != "builtin-ngram-v2" {
		t.Errorf("Model() = %q", got)
	}
}

func TestEmbedShape(t *testing.T) {
	e := embedding.NewBuiltin(0)
	texts := []string{"Alice prefers short answers.", "预算是十万元", "what is the"}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(vs), len(texts))
	}
	wantNorm := []float64{1, 1, 0}
	for i, v := range vs {
		if len(v) != e.Dimension() {
			t.Errorf("vector %d has length %d, want %d", i, len(v), e.Dimension())
		}
		if got := norm(v); math.Abs(got-wantNorm[i]) > 1e-5 {
			t.Errorf("|Embed(%q)| = %v, want %v", texts[i], got, wantNorm[i])
		}
	}

	vs, err = e.Embed(context.Background(), nil)
	if err != nil || len(vs) != 0 {
		t.Errorf("Embed(nil) = %v, %v; want no vectors, no error", vs, err)
	}
}

func TestEmbedNothingToMatch(t *testing.T) {
	e := embedding.NewBuiltin(0)
	for _, text := range []string{
		"", "   ", "?!。，、……", "what is the", "How are you doing?", "的了吗", "今天呢？", "Is it, though?",
	} {
		if v := embedOne(t, e, text); norm(v) != 0 {
			t.Errorf("Embed(%q) has norm %v, want the zero vector", text, norm(v))
		}
	}
}

func TestEmbedNormalises(t *testing.T) {
	e := embedding.NewBuiltin(0)
	for _, tc := range []struct{ a, b string }{
		{"ＳＯ－１００１　发货", "so-1001 发货"},
		{"Order SO-1001 SHIPPED!!!", "order so-1001 shipped"},
		{"Budget: 100,000 CNY", "budget 100000 cny"},
		{"budget 100000", "budget 100k"},
		{"Alice's budget", "alice budget"},
		{"预算是十万元。", "预算 是 十万元"},
	} {
		if c := cosine(embedOne(t, e, tc.a), embedOne(t, e, tc.b)); c < 0.9999 {
			t.Errorf("cosine(%q, %q) = %.4f, want the same vector", tc.a, tc.b, c)
		}
	}
}

func TestEmbedDeterministicAndConcurrent(t *testing.T) {
	texts := []string{
		"Order SO-1001 (200 cartons of A4 copy paper) shipped on 15 Sep.",
		"订单 SO-1004（50 把办公椅）已发货，预计 10 月 12 日送达杭州。",
		"Alice prefers short answers.",
	}
	want, err := embedding.NewBuiltin(0).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	e := embedding.NewBuiltin(0)
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for range 16 {
		wg.Go(func() {
			got, err := e.Embed(context.Background(), texts)
			if err != nil {
				errs <- err.Error()
				return
			}
			if d := cmp.Diff(want, got); d != "" {
				errs <- d
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent Embed differs from a sequential one: %s", e)
	}
}

func TestEmbedCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := embedding.NewBuiltin(0).Embed(ctx, []string{"hello"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Embed with a canceled context: err = %v, want context.Canceled", err)
	}
}

// TestRelatedness checks that a query is clearly closer to the text that
// answers it than to a plausible distractor.
func TestRelatedness(t *testing.T) {
	const margin = 0.15
	e := embedding.NewBuiltin(0)
	for _, tc := range []struct {
		name, query, related, unrelated string
	}{
		{"synonyms", "Does the user like short replies?", "user prefers short answers",
			"Order SO-1001 shipped from the Kunshan warehouse."},
		{"chinese", "预算多少", "预算是十万元", "订单已经从仓库发货"},
		{"chinese to english", "alice 的预算", "Alice's budget is 100k CNY", "Alice prefers short answers"},
		{"english to chinese", "when will the order ship?", "订单 SO-1004 已于 10 月 9 日发货",
			"Carol 喜欢简洁的回复"},
		{"inflection", "was the shipment delayed?", "shipping of SO-1005 is delayed to 20 Oct",
			"Alice asked about catalogue prices"},
		{"order ids", "where is SO-1001", "Order SO-1001 shipped on 15 Sep", "Order SO-1002 shipped on 15 Sep"},
		{"membership", "when does the membership expire", "Alice's membership expires on 1 March",
			"Bob likes detailed answers"},
		{"rule", "does a 60k order need approval?", "Orders above 50k need approval",
			"Alice wants deliveries on weekday mornings"},
		{"definition", "which provinces are in East China?", "East China means Shanghai, Jiangsu, Zhejiang and Anhui",
			"Refunded 1,200 CNY for damaged bags"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := embedOne(t, e, tc.query)
			rel := cosine(q, embedOne(t, e, tc.related))
			unrel := cosine(q, embedOne(t, e, tc.unrelated))
			t.Logf("related %.3f, unrelated %.3f", rel, unrel)
			if rel < unrel+margin {
				t.Errorf("cosine(%q, %q) = %.3f, not clearly above cosine to %q = %.3f",
					tc.query, tc.related, rel, tc.unrelated, unrel)
			}
		})
	}
}

func BenchmarkBuiltinEmbed(b *testing.B) {
	texts := map[string]string{
		"en": "Order SO-1007 for 120 office desks (68k CNY) is on hold until Lianhua's finance manager approves it, " +
			"because it is above 50k. Alice asked us to keep her posted by email, short answers only please.",
		"zh": "订单 SO-1004（50 把人体工学办公椅）已于 10 月 9 日从昆山仓发货，预计 10 月 12 日送达杭州。客户反馈两把椅子扶手损坏，" +
			"我们承诺五天内寄出配件，不需要退货。Alice 希望以后的发货都安排在工作日上午送到杭州办公室，并且提前一天电话通知前台。" +
			"她还提到第四季度的采购预算已经调整为十五万元，超过五万元的订单需要财务经理审批。",
	}
	for name, text := range texts {
		b.Run(name, func(b *testing.B) {
			b.Logf("%d characters", len([]rune(text)))
			e := embedding.NewBuiltin(0)
			in := []string{text}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.Embed(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
