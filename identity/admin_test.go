package identity

import (
	"errors"
	"testing"

	"mneme/memory"
)

func TestValidPrincipal(t *testing.T) {
	tests := []struct {
		name  string
		n     NewPrincipal
		field string // "" = valid
	}{
		{"an agent", NewPrincipal{Kind: memory.KindAgent, ID: "help-bot", Team: "support"}, ""},
		{"a user", NewPrincipal{Kind: memory.KindUser, ID: "dana", Name: "Dana Li"}, ""},
		{"an agent with a colon", NewPrincipal{Kind: memory.KindAgent, ID: "acme:help-bot"}, ""},
		// An agent by that name would write as the user.
		{"an agent named as a user's own writing", NewPrincipal{Kind: memory.KindAgent, ID: "user:alice"}, "id"},
		{"an agent named as a user's own writing, in capitals", NewPrincipal{Kind: memory.KindAgent, ID: "USER:alice"}, "id"},
		{"a name that turns the text around", NewPrincipal{Kind: memory.KindUser, ID: "bob", Name: "Bob\u202eevil"}, "name"},
		{"a name with an isolate", NewPrincipal{Kind: memory.KindUser, ID: "bob", Name: "Bob\u2067x"}, "name"},
		{"a name in Arabic script", NewPrincipal{Kind: memory.KindUser, ID: "amal", Name: "أمل"}, ""},
		{"a name with a zero-width space", NewPrincipal{Kind: memory.KindUser, ID: "bob", Name: "Bo\u200bb"}, "name"},
		{"a name with a zero-width non-joiner", NewPrincipal{Kind: memory.KindUser, ID: "mina", Name: "می\u200cخواهم"}, ""},
		{"a user whose id starts with user:", NewPrincipal{Kind: memory.KindUser, ID: "user:x"}, ""},
		{"an unknown kind", NewPrincipal{Kind: "robot", ID: "r2"}, "kind"},
		{"an id with a slash", NewPrincipal{Kind: memory.KindAgent, ID: "a/b"}, "id"},
		{"an id of dots alone", NewPrincipal{Kind: memory.KindUser, ID: ".."}, "id"},
		{"an id with dots and more", NewPrincipal{Kind: memory.KindUser, ID: "j.doe"}, ""},
		{"a team for a user", NewPrincipal{Kind: memory.KindUser, ID: "dana", Team: "support"}, "team"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := validPrincipal(tt.n)
			var inv *memory.InvalidError
			switch {
			case tt.field == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.field != "" && (!errors.As(err, &inv) || inv.Field != tt.field):
				t.Errorf("err = %v, want invalid %s", err, tt.field)
			}
		})
	}
}
