package usem

import (
	"archive/zip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// array is one array of an .npz file: its shape and its data, widened to
// float32 unless it is bytes.
type array struct {
	shape []int
	f32   []float32
	u8    []uint8
}

var (
	descrRE = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	orderRE = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	shapeRE = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// readNPZ reads every array of a NumPy .npz archive (a zip of .npy files),
// for the dtypes the weight file uses: little-endian float32 and float64,
// uint8 and int8.
func readNPZ(path string) (map[string]array, error) {
	z, err := zip.OpenReader(path)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	out := make(map[string]array, len(z.File))
	for _, f := range z.File {
		name := strings.TrimSuffix(f.Name, ".npy")
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		a, err := readNPY(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", path, f.Name, err)
		}
		out[name] = a
	}
	return out, nil
}

func readNPY(r io.Reader) (array, error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return array{}, err
	}
	if string(pre[:6]) != "\x93NUMPY" {
		return array{}, errors.New("not an .npy array")
	}
	var hlen int
	switch pre[6] {
	case 1:
		hlen = int(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		var more [2]byte
		if _, err := io.ReadFull(r, more[:]); err != nil {
			return array{}, err
		}
		hlen = int(binary.LittleEndian.Uint32(append(pre[8:10:10], more[:]...)))
	default:
		return array{}, fmt.Errorf("npy version %d", pre[6])
	}
	header := make([]byte, hlen)
	if _, err := io.ReadFull(r, header); err != nil {
		return array{}, err
	}
	h := string(header)
	descr, order, shape := descrRE.FindStringSubmatch(h), orderRE.FindStringSubmatch(h), shapeRE.FindStringSubmatch(h)
	if descr == nil || order == nil || shape == nil {
		return array{}, fmt.Errorf("npy header %q", h)
	}
	if order[1] != "False" {
		return array{}, errors.New("fortran-ordered arrays are not read")
	}
	a := array{}
	n := 1
	for _, s := range strings.Split(shape[1], ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		d, err := strconv.Atoi(s)
		if err != nil {
			return array{}, fmt.Errorf("npy shape %q", shape[1])
		}
		a.shape = append(a.shape, d)
		n *= d
	}
	var size int
	switch descr[1] {
	case "<f4":
		size = 4
	case "<f8":
		size = 8
	case "|u1", "|i1":
		size = 1
	default:
		return array{}, fmt.Errorf("npy dtype %s", descr[1])
	}
	raw := make([]byte, n*size)
	if _, err := io.ReadFull(r, raw); err != nil {
		return array{}, err
	}
	switch descr[1] {
	case "<f4":
		a.f32 = make([]float32, n)
		for i := range a.f32 {
			a.f32[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case "<f8":
		a.f32 = make([]float32, n)
		for i := range a.f32 {
			a.f32[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])))
		}
	case "|u1":
		a.u8 = raw
	case "|i1":
		a.f32 = make([]float32, n)
		for i, b := range raw {
			a.f32[i] = float32(int8(b))
		}
	}
	return a, nil
}
