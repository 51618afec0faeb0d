package usem

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// ModelDir is where scripts/model.sh keeps the weights.
func modelDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("MNEME_MODEL_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(cache, "mneme", "models")
	}
	return filepath.Join(dir, "use-multilingual-v3")
}

var (
	loadOnce sync.Once
	loaded   *Model
	loadErr  error
)

// testModel loads the real weights once; a machine without them fails the
// test, naming the script that fetches them.
func testModel(t testing.TB) *Model {
	t.Helper()
	loadOnce.Do(func() { loaded, loadErr = Load(modelDir(t)) })
	if loadErr != nil {
		t.Fatalf("%v: run scripts/model.sh (scripts/test.sh does)", loadErr)
	}
	return loaded
}

type reference struct {
	Sentences []struct {
		Text   string    `json:"text"`
		IDs    []int32   `json:"ids"`
		Vector []float32 `json:"vector"`
	} `json:"sentences"`
}

func readReference(t *testing.T) reference {
	t.Helper()
	raw, err := os.ReadFile("testdata/reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Sentences) < 20 {
		t.Fatalf("reference has %d sentences", len(ref.Sentences))
	}
	return ref
}

func TestTokensMatchThePythonPackage(t *testing.T) {
	m := testModel(t)
	for _, s := range readReference(t).Sentences {
		if got := m.Tokens(s.Text); !slices.Equal(got, s.IDs) {
			t.Errorf("%q: tokens %v, want %v", s.Text, got, s.IDs)
		}
	}
}

func TestVectorsMatchThePythonPackage(t *testing.T) {
	m := testModel(t)
	ref := readReference(t)
	texts := make([]string, len(ref.Sentences))
	for i, s := range ref.Sentences {
		texts[i] = s.Text
	}
	got := m.Embed(texts)
	for i, s := range ref.Sentences {
		if len(got[i]) != Dimension {
			t.Fatalf("%q: dimension %d", s.Text, len(got[i]))
		}
		if c := cosine(got[i], s.Vector); c < 0.999 {
			t.Errorf("%q: cosine %.5f to the Python package's vector, want ≥ 0.999", s.Text, c)
		}
	}
}

func TestGenericKernelAgreesWithTheFast(t *testing.T) {
	m := testModel(t)
	fast := m.Embed([]string{"我喜欢简洁的回复，不要长篇大论", "Refunds over $500 need a manager's approval."})
	saved := fma
	fma = false
	defer func() { fma = saved }()
	slow := m.Embed([]string{"我喜欢简洁的回复，不要长篇大论", "Refunds over $500 need a manager's approval."})
	for i := range fast {
		if c := cosine(fast[i], slow[i]); c < 0.99999 {
			t.Errorf("text %d: cosine %.6f between kernels", i, c)
		}
	}
}

func TestMeaningOutranksWords(t *testing.T) {
	m := testModel(t)
	v := m.Embed([]string{
		"我的会员什么时候到期",
		"Alice's Gold membership expires on 1 March",
		"The quarterly budget for the Shanghai office",
	})
	if near, far := cosine(v[0], v[1]), cosine(v[0], v[2]); near <= far+0.1 {
		t.Errorf("cross-language paraphrase %.3f, unrelated %.3f: want a clear margin", near, far)
	}
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func BenchmarkEmbedOne(b *testing.B) {
	m := testModel(b)
	for b.Loop() {
		m.Embed([]string{"我的会员什么时候到期"})
	}
}

func BenchmarkEmbedBatch64(b *testing.B) {
	m := testModel(b)
	texts := make([]string, 64)
	for i := range texts {
		texts[i] = "I prefer window seats and vegetarian meals when I fly, order " + string(rune('A'+i%26))
	}
	for b.Loop() {
		m.Embed(texts)
	}
	b.ReportMetric(float64(64*b.N)/b.Elapsed().Seconds(), "texts/s")
}

func TestBatchedSentencesDoNotSeeEachOther(t *testing.T) {
	m := testModel(t)
	texts := []string{"订单4411什么时候到", "Refunds over $500 need a manager's approval.", "好的", "a", ""}
	together := m.Embed(texts)
	for i, text := range texts {
		alone := m.Embed([]string{text})[0]
		if c := cosine(alone, together[i]); c < 0.99999 {
			t.Errorf("%q: cosine %.6f between alone and in a batch", text, c)
		}
	}
}
