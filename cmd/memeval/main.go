// Command memeval measures recall quality: it loads the demo dataset and the
// generated one into fresh tenants of the configured Neo4j through the
// memory service, asks the fixed questions of seed/eval through real recall
// under policy, and prints recall@5, MRR, the forbidden memories returned and
// the share of unrelated questions that recalled nothing, overall and, for
// the tuning part and the held-out part apart, by dataset, language and
// category. Only the held-out part's figures say how recall does on words
// nobody tuned it for. It reads the same environment as memoryd (NEO4J_URI,
// REDIS_URL, MNEME_EMBEDDER, MNEME_EMBED_URL, MNEME_EMBED_MODEL,
// MNEME_EMBED_DIM, …), so it measures whichever embedder memoryd would use.
// It exits non-zero when a forbidden memory came back.
//
// With -calibrate DIR it first tunes the embedder's relevance gate (the
// rule for weak similarities) and fusion weights with recall in the loop,
// asking the tuning part of the questions only (calibration.TuneGate),
// writes the calibration into DIR (as memoryd calibrate does; memoryd reads
// it with -calibrations DIR), and reports the held-out part before and
// after the change next to the usual report, which is measured with the
// tuned calibration.
//
// With -longconv DIR it measures long multi-session conversations instead
// (package seed/longconv, LoCoMo from scripts/locomo.sh or the CRI
// benchmark from scripts/longconv.sh): every turn is written through the
// memory service as one memory, dated and filed under its session, every
// question asked as the conversation's user, and it prints evidence
// recall@5 overall and, overall and for the tuning part and the held-out
// part apart, by category and by whether the evidence spans one session or
// several. -limit N writes only the first N turns.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"

	"mneme/app"
	"mneme/calibration"
	"mneme/memory"
	"mneme/seed"
	"mneme/seed/eval"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "memeval:", err)
		os.Exit(1)
	}
}

// errForbidden fails the run: a forbidden memory is a policy or ranking bug,
// not a score.
var errForbidden = errors.New("forbidden memories were returned")

// errBelowFloor fails a run asked to hold the held-out part to a floor
// (-min-heldout) that it did not reach.
var errBelowFloor = errors.New("held-out scores below the floor")

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("memeval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	datasets := fs.String("datasets", "demo,generated", "datasets to load and ask about: demo, generated")
	verbose := fs.Bool("v", false, "print every question with what it got")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	calibrate := fs.String("calibrate", "", "tune the gate and fusion weights on the tuning questions first and write the calibration into this directory")
	reuse := fs.String("reuse", "", "ask again about the datasets an earlier run loaded under this tenant prefix (eval-1a2b3c4d) instead of loading them")
	longDir := fs.String("longconv", "", "instead of the datasets, write the long conversations in this directory (scripts/locomo.sh or scripts/longconv.sh prints it) one memory per turn and score evidence recall@5")
	distractors := fs.Int("distractors", 0, "also give every user of the datasets this many memories that answer none of the questions: user turns of the long conversations in -distractors-from")
	distractorsFrom := fs.String("distractors-from", "", "the long-conversation directory (scripts/longconv.sh prints it) -distractors takes its texts from")
	minHeldOut := fs.Float64("min-heldout", 0, "fail unless the held-out part's recall@5 is at least this and its unrelated questions stay empty at least -min-unrelated-empty of the time; 0: report only")
	minEmpty := fs.Float64("min-unrelated-empty", calibration.MinUnrelatedEmpty, "with -min-heldout, the share of the held-out part's unrelated questions and chit-chat that must recall nothing")
	limit := fs.Int("limit", 0, "with -longconv, write only the first N turns of each conversation and ask only about them (0: all)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	a, err := app.NewTool(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer a.Close(context.WithoutCancel(ctx))
	// Recalls are recorded and decisions logged as memoryd would.
	defer a.StartWorkers(ctx)()
	if *longDir != "" {
		return runLongconv(ctx, a, *longDir, *limit, *asJSON, *verbose, stdout, stderr)
	}

	qs, err := eval.Questions()
	if err != nil {
		return err
	}
	var texts []string
	if *distractors > 0 {
		if texts, err = distractorTurns(*distractorsFrom); err != nil {
			return fmt.Errorf("distractors: %w", err)
		}
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	run := "eval-" + hex.EncodeToString(suffix[:])
	if *reuse != "" {
		run = *reuse
	}
	loaded := map[string]*eval.Loaded{}
	for _, name := range strings.Split(*datasets, ",") {
		var ds *seed.Dataset
		switch name = strings.TrimSpace(name); name {
		case eval.DatasetDemo:
			if ds, err = seed.Demo(); err != nil {
				return err
			}
		case eval.DatasetGenerated:
			ds = eval.Generate()
		default:
			return fmt.Errorf("unknown dataset %q (demo, generated)", name)
		}
		if *distractors > 0 {
			ds = withDistractors(ds, texts, *distractors, len(loaded)*len(texts)/2)
		}
		tenant := run + "-" + name[:3]
		if *reuse != "" {
			fmt.Fprintf(stderr, "asking about %s as loaded in tenant %s\n", name, tenant)
			if loaded[name], err = eval.Attach(ctx, a.Service, ds, tenant); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(stderr, "loading %s (%d memories) into tenant %s\n", name, len(ds.Memories), tenant)
		if loaded[name], err = eval.Load(ctx, a.Service, a.Admin, a.Keys, ds, tenant); err != nil {
			return fmt.Errorf("load %s: %w", name, err)
		}
	}
	prepared, err := eval.Prepare(ctx, a.Service, loaded, qs)
	if err != nil {
		return err
	}
	svc := eval.Service(a.Service)
	if *calibrate != "" {
		if svc, err = tune(ctx, a, prepared, *calibrate, stderr); err != nil {
			return err
		}
	}
	outcomes, err := eval.Ask(ctx, svc, prepared)
	if err != nil {
		return err
	}
	rep := eval.Summarise(outcomes)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Embedder  string      `json:"embedder"`
			Dimension int         `json:"dimension"`
			Report    eval.Report `json:"report"`
		}{a.Embed.Model(), a.Embed.Dimension(), rep}); err != nil {
			return err
		}
	} else {
		print(stdout, a.Embed.Model(), a.Embed.Dimension(), rep, outcomes, *verbose)
	}
	if rep.Overall.Forbidden > 0 {
		return fmt.Errorf("%w: %d", errForbidden, rep.Overall.Forbidden)
	}
	if held := rep.Groups[eval.SplitHeldOut]; *minHeldOut > 0 && (held.RecallAt5 < *minHeldOut || held.UnrelatedEmpty < *minEmpty) {
		return fmt.Errorf("%w: recall@5 %.3f (at least %.3f), unrelated empty %.3f (at least %.2f)", errBelowFloor, held.RecallAt5, *minHeldOut, held.UnrelatedEmpty, *minEmpty)
	}
	return nil
}

func print(w io.Writer, model string, dim int, rep eval.Report, outcomes []eval.Outcome, verbose bool) {
	fmt.Fprintf(w, "embedder %s, dimension %d, k=%d\n\n", model, dim, eval.K)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "group\tquestions\tanswerable\trecall@5\tMRR\tunexpected\tforbidden\tunrelated\tunrelated empty\t")
	row := func(name string, s eval.Scores) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.3f\t%.3f\t%.2f\t%d\t%d\t%.3f\t\n", name, s.Questions, s.Answerable, s.RecallAt5, s.MRR, s.Unexpected, s.Forbidden, s.Unrelated, s.UnrelatedEmpty)
	}
	row("all", rep.Overall)
	names := make([]string, 0, len(rep.Groups))
	for n := range rep.Groups {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		row(n, rep.Groups[n])
	}
	_ = tw.Flush()
	for _, o := range outcomes {
		q := o.Question
		miss := len(q.Expect) > 0 && o.Hits < min(len(q.Expect), eval.K) || q.Unrelated && len(o.Got) > 0 || len(o.Forbidden) > 0
		if !verbose && !miss {
			continue
		}
		mark := "ok  "
		if miss {
			mark = "MISS"
		}
		got := make([]string, len(o.Got))
		for i, ref := range o.Got {
			got[i] = ref
			if i < len(o.Gates) {
				got[i] += "(" + o.Gates[i] + ")"
			}
		}
		fmt.Fprintf(w, "\n%s %s [%s as %s, user %s] %s\n     expect %v got %v", mark, q.ID, q.Lang, q.As, q.User, q.Query, q.Expect, got)
		if len(o.Forbidden) > 0 {
			fmt.Fprintf(w, " FORBIDDEN %v", o.Forbidden)
		}
		fmt.Fprintln(w)
	}
}

// tune picks the gate's rule and the fusion weights on the tuning questions,
// saves the calibration into dir, prints the held-out part's scores before
// and after, and returns a service recalling with the result.
func tune(ctx context.Context, a *app.App, prepared []eval.Prepared, dir string, stderr io.Writer) (eval.Service, error) {
	var tuning, held []eval.Prepared
	for _, p := range prepared {
		if p.Question.Split == eval.SplitTune {
			tuning = append(tuning, p)
		} else {
			held = append(held, p)
		}
	}
	service := func(c calibration.Calibration) (*memory.Service, error) {
		opts := a.MemoryOptions
		opts.Recall = app.TuneGate(c, opts.Recall)
		return memory.NewService(opts)
	}
	scores := func(ctx context.Context, c calibration.Calibration, ps []eval.Prepared) (eval.Scores, error) {
		svc, err := service(c)
		if err != nil {
			return eval.Scores{}, err
		}
		outs, err := eval.Ask(ctx, svc, ps)
		if err != nil {
			return eval.Scores{}, err
		}
		return eval.Score(outs), nil
	}
	score := func(ctx context.Context, c calibration.Calibration) (calibration.GateScores, error) {
		s, err := scores(ctx, c, tuning)
		fmt.Fprintf(stderr, "  strong %.4f unseen %.2f subject %.4f lead %.4f/%.2f fusion %+v: recall@5 %.3f MRR %.3f unexpected %.2f unrelated-empty %.3f forbidden %d\n",
			c.Gate.StrongFloor, c.Gate.UnseenMax, c.Gate.SubjectFloor, c.Gate.LeadFloor, c.Gate.LeadMargin, c.Fusion, s.RecallAt5, s.MRR, s.Unexpected, s.UnrelatedEmpty, s.Forbidden)
		return calibration.GateScores{Recall: s.RecallAt5, MRR: s.MRR, UnrelatedEmpty: s.UnrelatedEmpty, Forbidden: s.Forbidden}, err
	}
	fmt.Fprintf(stderr, "tuning the gate of %s on %d tuning questions\n", a.Calibration.Model, len(tuning))
	best, trials, err := calibration.TuneGate(ctx, a.Calibration, "seed/eval questions.json, split "+eval.SplitTune, len(tuning), score)
	if err != nil {
		return nil, err
	}
	path, err := calibration.Save(dir, best)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "%d trials; picked strong floor %.4f, unseen max %.2f, subject floor %.4f, lead floor %.4f and margin %.2f, fusion %+v; wrote %s\n",
		len(trials), best.Gate.StrongFloor, best.Gate.UnseenMax, best.Gate.SubjectFloor, best.Gate.LeadFloor, best.Gate.LeadMargin, best.Fusion, path)
	before, err := scores(ctx, a.Calibration, held)
	if err != nil {
		return nil, err
	}
	after, err := scores(ctx, best, held)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "held-out before: %+v\nheld-out after:  %+v\n", before, after)
	return service(best)
}
