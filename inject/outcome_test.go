package inject

import "testing"

// TestOutcomeFacts: what each outcome tells, one row an outcome; a new
// outcome fails the test until it has a row.
func TestOutcomeFacts(t *testing.T) {
	type facts struct {
		gotMetadata, complete, resolved, matched bool
	}
	want := map[Outcome]facts{
		Injected:       {gotMetadata: true, complete: true, resolved: true, matched: true},
		AlreadyPresent: {gotMetadata: true, complete: true, resolved: true},
		NoMetadata:     {complete: true, resolved: true, matched: true},
		Duplicate:      {complete: true, resolved: true},
		TooLarge:       {resolved: true, matched: true},
		NotFound:       {},
		Mismatch:       {},
		Failed:         {},
	}
	if len(want) != len(outcomeNames) {
		t.Fatalf("%d outcomes in the table, %d declared", len(want), len(outcomeNames))
	}
	for i := range outcomeNames {
		o := Outcome(i)
		w, ok := want[o]
		if !ok {
			t.Errorf("%v: no row", o)
			continue
		}
		got := facts{o.GotMetadata(), o.complete(), o.Resolved(), o.matched()}
		if got != w {
			t.Errorf("%v: got %+v, want %+v", o, got, w)
		}
		// GotMetadata ⊂ complete ⊂ Resolved
		if got.gotMetadata && !got.complete || got.complete && !got.resolved {
			t.Errorf("%v: %+v breaks GotMetadata ⊂ complete ⊂ Resolved", o, got)
		}
	}
	// an Outcome of no name tells nothing
	for _, o := range []Outcome{-1, Outcome(len(outcomeNames))} {
		if got := (facts{o.GotMetadata(), o.complete(), o.Resolved(), o.matched()}); got != (facts{}) {
			t.Errorf("Outcome(%d): %+v, want nothing", int(o), got)
		}
	}
}
