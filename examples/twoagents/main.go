// Command twoagents shows two agents sharing what they know about a
// customer through a grant, with the Go client. The support bot remembers
// how Alice wants her parcels delivered; the order bot may read none of it
// until an admin grants it the support bot's delivery notes up to
// "internal", and then still not the confidential one. It withdraws its
// grant at the end, so that a second run tells the same story; its notes
// stay (a second run reinforces them). Run it against `make run`:
//
//	go run ./examples/twoagents
//
// It talks to http://127.0.0.1:8080 with the demo keys of support-bot,
// order-bot and admin that `make run` seeds; MNEME_URL, SUPPORT_KEY,
// ORDER_KEY and ADMIN_KEY name another server and other keys.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"mneme/client"
	"mneme/seed"
)

func main() {
	if err := run(context.Background(), os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "twoagents:", err)
		os.Exit(1)
	}
}

// question says "parcels" as the note does: recall's full-text side matches
// English words as written, and among the demo Alice's many memories no
// other gate admits the note for "parcel".
const question = "How should Alice's parcels be delivered?"

// outcome is what the scenario saw, for its test.
type outcome struct {
	Note, Secret  client.Memory
	Grant         client.Grant
	Before, After client.RecallResult
}

func run(ctx context.Context, getenv func(string) string, out io.Writer) error {
	url := getenv("MNEME_URL")
	if url == "" {
		url = "http://127.0.0.1:8080"
	}
	support, order, admin, err := keys(getenv)
	if err != nil {
		return err
	}
	o, err := scenario(ctx, url, support, order, admin)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "order bot before the grant: %d memories\n", len(o.Before.Memories))
	fmt.Fprintf(out, "order bot after grant %s (withdrawn again since):\n%s\n", o.Grant.ID, o.After.Context)
	return nil
}

// keys are SUPPORT_KEY, ORDER_KEY and ADMIN_KEY, each the demo tenant's
// key of its principal when not set.
func keys(getenv func(string) string) (support, order, admin string, err error) {
	support, order, admin = getenv("SUPPORT_KEY"), getenv("ORDER_KEY"), getenv("ADMIN_KEY")
	if support != "" && order != "" && admin != "" {
		return support, order, admin, nil
	}
	ds, err := seed.Demo()
	if err != nil {
		return "", "", "", fmt.Errorf("the demo keys: %w", err)
	}
	demo := ds.KeyOf()
	return cmp.Or(support, demo["support-bot"]), cmp.Or(order, demo["order-bot"]), cmp.Or(admin, demo["admin"]), nil
}

func scenario(ctx context.Context, url, supportKey, orderKey, adminKey string) (_ outcome, err error) {
	support := client.New(url, supportKey, nil)
	orders := client.New(url, orderKey, nil)
	admin := client.New(url, adminKey, nil)
	var o outcome

	w, err := support.Add(ctx,
		client.NewMemory{UserID: "alice", Type: client.TypeEpisodic, Kind: "delivery_note",
			Content: "Alice asked that parcels be left with the building's concierge."},
		client.NewMemory{UserID: "alice", Type: client.TypeEpisodic, Kind: "delivery_note", Sensitivity: "confidential",
			Content: "Alice mentioned a dispute with the concierge about a lost parcel."},
	)
	if err != nil {
		return o, fmt.Errorf("support bot remembers: %w", err)
	}
	if len(w.Memories) != 2 {
		return o, fmt.Errorf("support bot remembers: %d of 2 memories stored", len(w.Memories))
	}
	o.Note, o.Secret = w.Memories[0], w.Memories[1]

	if o.Before, err = orders.Recall(ctx, client.RecallRequest{UserID: "alice", Query: question}); err != nil {
		return o, fmt.Errorf("order bot recalls: %w", err)
	}
	if o.Grant, err = admin.CreateGrant(ctx, client.NewGrant{
		Grantee: "order-bot", Source: "support-bot", Types: []string{client.TypeEpisodic},
		Kinds: []string{"delivery_note"}, MaxSensitivity: "internal",
	}); err != nil {
		return o, fmt.Errorf("admin grants: %w", err)
	}
	defer func() {
		if werr := admin.DeleteGrant(context.WithoutCancel(ctx), o.Grant.ID); werr != nil {
			err = errors.Join(err, fmt.Errorf("admin withdraws the grant: %w", werr))
		}
	}()
	if o.After, err = orders.Recall(ctx, client.RecallRequest{UserID: "alice", Query: question}); err != nil {
		return o, fmt.Errorf("order bot recalls: %w", err)
	}
	return o, nil
}
