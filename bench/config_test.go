package main

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConcurrencyLevels(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		levels []int
		first  int
		bad    bool
	}{
		{args: nil, levels: []int{1}, first: 1},
		{args: []string{"-concurrency", "8"}, levels: []int{8}, first: 8},
		{args: []string{"-concurrency", "1,8,32"}, levels: []int{1, 8, 32}, first: 1},
		{args: []string{"-concurrency", "1, 8"}, levels: []int{1, 8}, first: 1},
		{args: []string{"-concurrency", "1,x"}, bad: true},
		{args: []string{"-concurrency", "1,0"}, bad: true},
		{args: []string{"-concurrency", ""}, bad: true},
	} {
		c, err := parseFlags(tc.args, io.Discard)
		if tc.bad {
			if err == nil {
				t.Errorf("%v: no error", tc.args)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if diff := cmp.Diff(tc.levels, c.Levels); diff != "" || c.Concurrency != tc.first {
			t.Errorf("%v: levels (-want +got)\n%s concurrency %d, want %d", tc.args, diff, c.Concurrency, tc.first)
		}
	}
}

func TestPickModesKeepsReportOrder(t *testing.T) {
	var modes []mode
	for _, name := range allModes {
		modes = append(modes, mode{name: name})
	}
	c, err := parseFlags([]string{"-modes", "bare-index,policy"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range pickModes(modes, c.Modes) {
		got = append(got, m.name)
	}
	if diff := cmp.Diff([]string{modePolicy, modeBareIndex}, got); diff != "" {
		t.Errorf("picked modes (-want +got):\n%s", diff)
	}
	if d, _ := parseFlags(nil, io.Discard); !cmp.Equal(d.Modes, allModes) {
		t.Errorf("default modes %v, want all of %v", d.Modes, allModes)
	}
}
