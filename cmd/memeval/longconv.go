package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
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
	cs, qs, err := longconv.Read(dir)
	if err != nil {
		return err
	}
	cs, qs = longconv.Truncate(cs, qs, limit)
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
			Embedder      string          `json:"embedder"`
			Dimension     int             `json:"dimension"`
			Conversations int             `json:"conversations"`
			Turns         int             `json:"turns"`
			Report        longconv.Report `json:"report"`
		}{a.Embed.Model(), a.Embed.Dimension(), len(cs), turns, rep})
	}
	fmt.Fprintf(stdout, "embedder %s, dimension %d, k=%d; %d conversations, %d turns\n\n", a.Embed.Model(), a.Embed.Dimension(), longconv.K, len(cs), turns)
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
			case g == "all":
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
