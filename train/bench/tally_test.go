package bench

import "testing"

func TestTallyBest(t *testing.T) {
	tl := Tally{}
	tl.Add(Ours, "w", "a", Result{Seconds: 3})
	tl.Add(Ours, "w", "b", Result{Seconds: 2})
	tl.Add(Ours, "w", "a", Result{Seconds: 1.5}) // a later, better round
	tl.Add(Ours, "w", "b", Result{Seconds: 4})   // a worse round is not kept
	s, r, ok := tl.Best(Ours, "w")
	if !ok || s != "a" || r.Seconds != 1.5 || tl[Ours]["w"]["b"].Seconds != 2 {
		t.Errorf("Best = %q %v %v, b kept %v; want a 1.5 true, b 2", s, r.Seconds, ok, tl[Ours]["w"]["b"].Seconds)
	}
	tl.Add(Ours, "w", "c", Result{Seconds: 1.5 * Hopeless})
	tl.Add(Ours, "w", "d", Result{Seconds: 1.5*Hopeless + 0.1})
	if tl.Skip(Ours, "w", "a") || tl.Skip(Ours, "w", "c") || !tl.Skip(Ours, "w", "d") || tl.Skip(Ours, "w", "never run") {
		t.Errorf("Skip: a %v, c (exactly %d× the best) %v, d (over) %v, never run %v; want false false true false", tl.Skip(Ours, "w", "a"),
			Hopeless, tl.Skip(Ours, "w", "c"), tl.Skip(Ours, "w", "d"), tl.Skip(Ours, "w", "never run"))
	}
	if _, _, ok := tl.Best(Peer, "w"); ok {
		t.Error("Best of a side never measured: ok")
	}
	// A tie goes to the setting whose name sorts first, whatever the map order.
	tl.Add(Peer, "w", "z", Result{Seconds: 1})
	tl.Add(Peer, "w", "y", Result{Seconds: 1})
	if s, _, _ := tl.Best(Peer, "w"); s != "y" {
		t.Errorf("Best of a tie = %q, want y", s)
	}
}
