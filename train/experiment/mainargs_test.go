package experiment

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// Main refuses words left after the flags (a mistyped flag such as
// "steps 20" would otherwise run the whole default experiment).
func TestMainParsingRefusesArguments(t *testing.T) {
	type config struct {
		Flags
		Steps int `flag:"steps" help:"h"`
	}
	for _, args := range [][]string{{"extra"}, {"-steps", "20", "extra", "-seed", "2"}} {
		c := config{Flags: Flags{Out: "out/x", Seed: 1}, Steps: 600}
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		err := parseFlags(fs, args, &c.Flags, 0, &c)
		if err == nil || !strings.Contains(err.Error(), `"extra"`) {
			t.Errorf("%q: error %v, want one naming the unexpected argument \"extra\"", args, err)
		}
	}
}
