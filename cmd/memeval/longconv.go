package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"mneme/app"
	"mneme/extract"
	"mneme/seed/longconv"
)

// runLongconv writes the long conversations of dir into a fresh tenant, one
// memory per turn, asks their questions as each conversation's user and
// prints evidence recall@5 by split, category and span.
func runLongconv(ctx context.Context, a *app.App, dir string, limit int, asJSON, verbose bool, stdout, stderr io.Writer) error {
	data, err := longconv.Open(dir)
	if err != nil {
		return err
	}
	cs, qs := longconv.Truncate(data.Conversations, data.Questions, limit)
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	tenant := "longconv-" + hex.EncodeToString(suffix[:])
	ex := extract.NewRules(nil)
	loaded := map[string]*longconv.Loaded{}
	turns := 0
	for _, c := range cs {
		start := time.Now()
		fmt.Fprintf(stderr, "writing %s (%d turns in %d sessions) into tenant %s\n", c.ID, c.Turns(), len(c.Sessions), tenant)
		l, err := longconv.Load(ctx, a.Service, ex, tenant, c)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "  %d memories, %d turns skipped as not worth remembering, %d refused, %d folded into an identical one, in %s\n",
			len(l.Turn), l.Skipped, l.Refused, l.Folded, time.Since(start).Round(time.Second))
		loaded[c.ID] = l
		turns += c.Turns()
	}
	start := time.Now()
	outcomes, err := longconv.Ask(ctx, a.Service, loaded, qs)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "asked %d questions in %s\n", len(outcomes), time.Since(start).Round(time.Millisecond))
	rep := longconv.Summarise(outcomes)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Embedder        string          `json:"embedder"`
			Dimension       int             `json:"dimension"`
			Format          string          `json:"format"`
			Conversations   int             `json:"conversations"`
			Turns           int             `json:"turns"`
			Questions       int             `json:"questions"`
			LeftOut         map[string]int  `json:"left_out,omitempty"`
			SkippedEvidence int             `json:"skipped_evidence"`
			Report          longconv.Report `json:"report"`
		}{a.Embed.Model(), a.Embed.Dimension(), data.Format, len(cs), turns, len(outcomes), data.LeftOut, data.SkippedEvidence, rep})
	}
	fmt.Fprintf(stdout, "embedder %s, dimension %d, k=%d; %s data: %d conversations, %d turns, %d questions asked\n", a.Embed.Model(), a.Embed.Dimension(), longconv.K, data.Format, len(cs), turns, len(outcomes))
	fmt.Fprintf(stdout, "left out of the dataset's questions: %s; evidence ids naming no turn, skipped: %d\n\n", leftOut(data.LeftOut), data.SkippedEvidence)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "group\tquestions\tevidence recall@5\tany@5\tall@5\tevidence unstored\t")
	groups := make([]string, 0, len(rep))
	for g := range rep {
		groups = append(groups, g)
	}
	slices.SortFunc(groups, func(x, y string) int {
		// all first, then the held-out part: the honest figures lead.
		rank := func(g string) int {
			switch {
			case g == "all", strings.HasPrefix(g, "all/"):
				return 0
			case strings.HasPrefix(g, longconv.SplitHeldOut):
				return 1
			}
			return 2
		}
		if d := rank(x) - rank(y); d != 0 {
			return d
		}
		return strings.Compare(x, y)
	})
	for _, g := range groups {
		s := rep[g]
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%d\t\n", g, s.Questions, s.RecallAtK, s.AnyAtK, s.AllAtK, s.Unstored)
	}
	_ = tw.Flush()
	for _, o := range outcomes {
		q := o.Question
		if !verbose && o.Found == len(q.Evidence) {
			continue
		}
		fmt.Fprintf(stdout, "\n%s %s [%s, %s, %d sessions] %q\n     evidence %v got %v (%d of %d found)\n",
			o.Split, q.ID, q.Conversation, q.Category, o.Sessions, q.Query, q.Evidence, o.Got, o.Found, len(q.Evidence))
	}
	return nil
}

// leftOut says how many questions were left out, by why.
func leftOut(n map[string]int) string {
	if len(n) == 0 {
		return "none"
	}
	var parts []string
	for _, why := range slices.Sorted(maps.Keys(n)) {
		parts = append(parts, fmt.Sprintf("%d %s", n[why], why))
	}
	return strings.Join(parts, ", ")
}
