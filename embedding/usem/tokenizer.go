package usem

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"unicode/utf8"
)

// Special piece ids of the SentencePiece model.
const (
	unkID = 0
	bosID = 1
	eosID = 2
)

// spaceSymbol replaces whitespace in normalized text, as SentencePiece does.
const spaceSymbol = "\u2581"

// tokenizer is SentencePiece's unigram tokenizer for the model's vocabulary:
// the nmt_nfkc normalizer (a precompiled double-array trie of replacements),
// whitespace escaping, then the Viterbi segmentation into pieces.
type tokenizer struct {
	scores   []float64
	prefixes map[string]int32 // piece id + 1 for a piece, 0 for a prefix of one
	maxLen   int              // longest piece in characters
	unkScore float64
	units    []uint32 // the normalizer's double array; nil when the model has none
	replaced []byte   // its NUL-terminated replacements
}

// field is a length-delimited protobuf field: where its bytes are.
type field struct{ start, length int }

// parseFields reads the length-delimited fields of a protobuf message. The
// model file is the legacy layout with small field numbers only, so a tag is
// one byte.
func parseFields(data []byte, start, end int) map[int][]field {
	out := map[int][]field{}
	pos := start
	for pos < end {
		b := data[pos]
		num, wire := int(b>>3), b&7
		pos++
		switch {
		case num == 0 || wire == 0:
			for data[pos]&0x80 != 0 {
				pos++
			}
			pos++
		case wire == 1:
			pos += 8
		case wire == 2:
			n, w := binary.Uvarint(data[pos:])
			pos += w
			out[num] = append(out[num], field{pos, int(n)})
			pos += int(n)
		case wire == 5:
			out[num] = append(out[num], field{pos, 4})
			pos += 4
		default:
			return out
		}
	}
	return out
}

func newTokenizer(data []byte) (*tokenizer, error) {
	top := parseFields(data, 0, len(data))
	t := &tokenizer{prefixes: make(map[string]int32, 1<<19)}
	minScore := math.Inf(1)
	for id, f := range top[1] {
		p := parseFields(data, f.start, f.start+f.length)
		if len(p[1]) == 0 {
			return nil, errors.New("usem: a vocabulary entry without a piece")
		}
		piece := string(data[p[1][0].start : p[1][0].start+p[1][0].length])
		score := 0.0
		if len(p[2]) > 0 {
			score = float64(math.Float32frombits(binary.LittleEndian.Uint32(data[p[2][0].start:])))
		}
		t.scores = append(t.scores, score)
		minScore = min(minScore, score)
		n := 0
		for i := range piece {
			if i > 0 {
				if _, ok := t.prefixes[piece[:i]]; !ok {
					t.prefixes[piece[:i]] = 0
				}
			}
			n++
		}
		t.maxLen = max(t.maxLen, n)
		t.prefixes[piece] = int32(id + 1)
	}
	if len(t.scores) < 3 {
		return nil, errors.New("usem: the SentencePiece model has no vocabulary")
	}
	t.unkScore = minScore - 10
	if len(top[3]) > 0 {
		tf := parseFields(data, top[3][0].start, top[3][0].start+top[3][0].length)
		if len(tf[2]) > 0 {
			cm := data[tf[2][0].start : tf[2][0].start+tf[2][0].length]
			size := int(binary.LittleEndian.Uint32(cm))
			t.units = make([]uint32, size/4)
			for i := range t.units {
				t.units[i] = binary.LittleEndian.Uint32(cm[4+4*i:])
			}
			t.replaced = cm[4+size:]
		}
	}
	return t, nil
}

// encode returns the piece ids of text between BOS and EOS.
func (t *tokenizer) encode(text string) []int32 {
	ids := []int32{bosID}
	norm := t.normalize(text)
	if norm == "" {
		ids = append(ids, unkID)
	} else {
		ids = t.viterbi(norm, ids)
	}
	return append(ids, eosID)
}

func offset(unit uint32) uint32 { return (unit >> 10) << ((unit & 0x200) >> 6) }

// normalizePrefix returns the normalized form of the longest charsmap key at
// the start of data and how many bytes it consumed; a byte sequence with no
// key stands for itself (one UTF-8 character, or one byte if malformed).
func (t *tokenizer) normalizePrefix(data []byte) ([]byte, int) {
	if len(data) == 0 {
		return nil, 0
	}
	bestLen, bestValue := 0, uint32(0)
	if t.units != nil {
		node := offset(t.units[0])
		for i, c := range data {
			node ^= uint32(c)
			if int(node) >= len(t.units) {
				break
			}
			unit := t.units[node]
			if unit&0x800000FF != uint32(c) {
				break
			}
			node ^= offset(unit)
			if unit&0x100 != 0 {
				bestLen = i + 1
				bestValue = t.units[node] & 0x7FFFFFFF
			}
		}
	}
	if bestLen == 0 || int(bestValue) >= len(t.replaced) {
		first, n := data[0], 1
		switch {
		case first < 0x80:
		case first>>5 == 0x6:
			n = 2
		case first>>4 == 0xE:
			n = 3
		case first>>3 == 0x1E:
			n = 4
		}
		for k := 1; k < n; k++ {
			if k >= len(data) || data[k]&0xC0 != 0x80 {
				n = 1
				break
			}
		}
		return data[:n], n
	}
	rest := t.replaced[bestValue:]
	if end := indexByte(rest, 0); end >= 0 {
		rest = rest[:end]
	}
	return rest, bestLen
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// normalize applies the charsmap, drops leading, trailing and repeated
// whitespace, and writes spaces as U+2581 with one before the first word.
func (t *tokenizer) normalize(text string) string {
	raw := []byte(text)
	pos := 0
	for pos < len(raw) {
		p, n := t.normalizePrefix(raw[pos:])
		if string(p) != " " {
			break
		}
		pos += n
	}
	if pos >= len(raw) {
		return ""
	}
	var out strings.Builder
	out.WriteString(spaceSymbol)
	prevSpace := true
	for pos < len(raw) {
		p, n := t.normalizePrefix(raw[pos:])
		pos += n
		if prevSpace {
			for len(p) > 0 && p[0] == ' ' {
				p = p[1:]
			}
		}
		if len(p) == 0 {
			continue
		}
		for _, b := range p {
			if b == ' ' {
				out.WriteString(spaceSymbol)
			} else {
				out.WriteByte(b)
			}
		}
		prevSpace = p[len(p)-1] == ' '
	}
	s := out.String()
	for strings.HasSuffix(s, spaceSymbol) {
		s = s[:len(s)-len(spaceSymbol)]
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

// viterbi appends the best-scoring segmentation of s into pieces. Characters
// no piece covers become UNK. Ties keep the earliest-found node, as
// SentencePiece does.
func (t *tokenizer) viterbi(s string, ids []int32) []int32 {
	offs := make([]int, 0, len(s)+1)
	for i := range s {
		offs = append(offs, i)
	}
	offs = append(offs, len(s))
	L := len(offs) - 1
	best := make([]float64, L+1)
	startOf := make([]int, L+1)
	pieceOf := make([]int32, L+1)
	for i := 1; i <= L; i++ {
		best[i] = -1e38
	}
	for i := 0; i < L; i++ {
		base := best[i]
		stop := min(i+t.maxLen, L)
		single := false
		for j := i + 1; j <= stop; j++ {
			v, ok := t.prefixes[s[offs[i]:offs[j]]]
			if !ok {
				break
			}
			if v == 0 {
				continue
			}
			if score := base + t.scores[v-1]; score > best[j] {
				best[j], startOf[j], pieceOf[j] = score, i, v-1
			}
			if j == i+1 {
				single = true
			}
		}
		if !single {
			if score := base + t.unkScore; score > best[i+1] {
				best[i+1], startOf[i+1], pieceOf[i+1] = score, i, unkID
			}
		}
	}
	at := len(ids)
	for p := L; p > 0; p = startOf[p] {
		ids = append(ids, pieceOf[p])
	}
	if len(ids) == at {
		return append(ids, unkID)
	}
	for a, b := at, len(ids)-1; a < b; a, b = a+1, b-1 {
		ids[a], ids[b] = ids[b], ids[a]
	}
	return ids
}
