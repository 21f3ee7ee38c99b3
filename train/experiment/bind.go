package experiment

// A program's own flags declared once, on its config struct: the field's
// tag names the flag and says what it does, the field's value before
// parsing is the default. main then reads as the config it fills, not as
// a column of flag.IntVar calls.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"reflect"
	"strconv"
	"strings"
	"syscall"

	"github.com/geluproject/gelu/train/report"
)

// BindFlags defines a flag on fs for every field of the struct *cfg that
// has a `flag:"name"` tag, with the tag `help:"…"` as its usage and the
// field's current value as its default. Fields may be int, uint64,
// float64, string, bool, or a type whose pointer is a flag.Value (Floats,
// Ints, Strings, Activations). Untagged fields are left alone.
//
//	type config struct {
//		Batch int     `flag:"batch" help:"mini-batch size"`
//		LRs   Floats  `flag:"lrs" help:"learning rates, comma-separated"`
//	}
//	c := config{Batch: 64, LRs: Floats{0.1, 0.3}}
//	err := experiment.BindFlags(flag.CommandLine, &c)
func BindFlags(fs *flag.FlagSet, cfg any) error {
	if fs == nil {
		return errors.New("experiment.BindFlags: nil flag set")
	}
	// Check every field first and define the flags only then, so that an
	// error leaves fs as it was (and the flag package's panic on a name
	// defined twice cannot happen).
	var defs []func()
	if err := collectFlags(fs, cfg, map[string]bool{}, &defs); err != nil {
		return err
	}
	for _, define := range defs {
		define()
	}
	return nil
}

// collectFlags appends to defs the definition of every tagged field of the
// struct *cfg (and of its embedded groups), checking names against seen
// and against the flags fs already has.
func collectFlags(fs *flag.FlagSet, cfg any, seen map[string]bool, defs *[]func()) error {
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("experiment.BindFlags: got %T, want a non-nil pointer to a struct", cfg)
	}
	v = v.Elem()
	for i := 0; i < v.NumField(); i++ {
		f, field := v.Type().Field(i), v.Field(i)
		name, ok := f.Tag.Lookup("flag")
		if !ok && f.Anonymous && field.Kind() == reflect.Struct {
			if err := collectFlags(fs, field.Addr().Interface(), seen, defs); err != nil { // an embedded group of flags (MNISTMLP)
				return err
			}
			continue
		}
		if !ok {
			continue
		}
		help := f.Tag.Get("help")
		if !f.IsExported() || name == "" || help == "" {
			return fmt.Errorf("experiment.BindFlags: field %s: want an exported field with a flag name and a help text", f.Name)
		}
		if seen[name] || fs.Lookup(name) != nil {
			return fmt.Errorf("experiment.BindFlags: field %s: flag -%s is already defined, want each name once", f.Name, name)
		}
		seen[name] = true
		var define func()
		switch p := field.Addr().Interface().(type) {
		case flag.Value:
			define = func() { fs.Var(p, name, help) }
		case *int:
			define = func() { fs.IntVar(p, name, *p, help) }
		case *uint64:
			define = func() { fs.Uint64Var(p, name, *p, help) }
		case *float64:
			define = func() { fs.Float64Var(p, name, *p, help) }
		case *string:
			define = func() { fs.StringVar(p, name, *p, help) }
		case *bool:
			define = func() { fs.BoolVar(p, name, *p, help) }
		default:
			return fmt.Errorf("experiment.BindFlags: field %s (-%s) has type %s, want int, uint64, float64, string, bool or a flag.Value", f.Name, name, f.Type)
		}
		*defs = append(*defs, define)
	}
	return nil
}

// Exit ends an experiment program's main after its run: with an error it
// prints "program: error" to stderr and exits with status 1, otherwise it
// prints where the report is ("wrote out/report.md") and the verdicts of
// the claims the report checked, a line each.
func Exit(program, out string, err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, program+":", err)
		os.Exit(1)
	}
	fmt.Println("wrote", out+"/report.md")
	printClaims(os.Stdout, os.Stderr, program, out)
}

// printClaims writes the claims of the report in dir to stdout (a report
// that cannot be read back is said on stderr: the run itself succeeded).
func printClaims(stdout, stderr io.Writer, program, dir string) {
	s, err := report.ReadSummary(dir)
	if err == nil {
		err = s.WriteClaims(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: reading the claims back: %v\n", program, err)
	}
}

// ExitGrid ends the main of a program whose grid may run in shards: an
// error ends the program as Exit does, except ErrIncomplete, a shard's
// share done while another shard makes the report, which is no failure:
// "program: <err>" goes to stdout and the status is 0. Without an error it
// prints the line wrote returns, called only then, as it may describe
// results that exist only on success, and the verdicts of the claims of
// the report in out, a line each.
//
//	experiment.ExitGrid("x", c.Out, err, func() string { return fmt.Sprintf("wrote %s/report.md (%d runs)", c.Out, len(res.Runs)) })
func ExitGrid(program, out string, err error, wrote func() string) {
	if code := exitGrid(os.Stdout, os.Stderr, program, out, err, wrote); code != 0 {
		os.Exit(code)
	}
}

// exitGrid is ExitGrid writing to stdout and stderr; it returns the exit
// status.
func exitGrid(stdout, stderr io.Writer, program, out string, err error, wrote func() string) int {
	switch {
	case errors.Is(err, ErrIncomplete):
		fmt.Fprintln(stdout, program+":", err)
	case err != nil:
		fmt.Fprintln(stderr, program+":", err)
		return 1
	default:
		fmt.Fprintln(stdout, wrote())
		printClaims(stdout, stderr, program, out)
	}
	return 0
}

// CheckFlags checks the fields of the struct *cfg (or cfg) that have both a
// flag tag and a `check:"…"` tag, a comma-separated list of rules:
//
//	positive    > 0
//	min=v       ≥ v
//	below=v     < v
//	nonempty    a list with at least one element
//
// A rule on a list applies to every element; NaN passes no numeric rule.
// A flag whose value has a Check() error method (Inits) is checked by it
// too. Embedded structs without a flag tag are checked in turn.
// The error names every flag that fails, with its value and the rule
// ("-batch 0: want ≥ 1"). Programs call it from their own validation, so
// that a config built in a test is checked as one built from flags.
func CheckFlags(cfg any) error {
	v := reflect.Indirect(reflect.ValueOf(cfg))
	if v.Kind() != reflect.Struct {
		return fmt.Errorf("experiment.CheckFlags: got %T, want a struct or a pointer to one", cfg)
	}
	var errs []error
	for i := 0; i < v.NumField(); i++ {
		f, field := v.Type().Field(i), v.Field(i)
		name, rules := f.Tag.Get("flag"), f.Tag.Get("check")
		if name == "" && f.Anonymous && field.Kind() == reflect.Struct {
			errs = append(errs, CheckFlags(field.Interface()))
			continue
		}
		if c, ok := field.Interface().(interface{ Check() error }); ok && name != "" && f.IsExported() {
			if err := c.Check(); err != nil {
				errs = append(errs, fmt.Errorf("-%s: %w", name, err))
			}
		}
		if name == "" || rules == "" {
			continue
		}
		var values []reflect.Value
		if field.Kind() == reflect.Slice {
			for j := 0; j < field.Len(); j++ {
				values = append(values, field.Index(j))
			}
		} else {
			values = append(values, field)
		}
		for _, rule := range strings.Split(rules, ",") {
			want, ok, err := checkRule(rule, field.Len, values)
			if err != nil {
				return fmt.Errorf("experiment.CheckFlags: field %s (-%s): %w", f.Name, name, err)
			}
			if !ok {
				if field.Kind() == reflect.Slice && rule != "nonempty" {
					want = "every value " + want
				}
				errs = append(errs, fmt.Errorf("-%s %v: want %s", name, field.Interface(), want))
			}
		}
	}
	return errors.Join(errs...)
}

// checkRule applies one rule to values; n is the field's length (lists).
func checkRule(rule string, n func() int, values []reflect.Value) (want string, ok bool, err error) {
	key, arg, _ := strings.Cut(strings.TrimSpace(rule), "=")
	if key == "nonempty" {
		return "a non-empty list", n() > 0, nil
	}
	bound := 0.0
	if key != "positive" {
		if bound, err = strconv.ParseFloat(arg, 64); err != nil {
			return "", false, fmt.Errorf("rule %q, want positive, min=v, below=v or nonempty", rule)
		}
	}
	test, want := map[string]func(float64) bool{
		"positive": func(x float64) bool { return x > 0 },
		"min":      func(x float64) bool { return x >= bound },
		"below":    func(x float64) bool { return x < bound },
	}[key], map[string]string{"positive": "> 0", "min": "≥ " + arg, "below": "< " + arg}[key]
	if test == nil {
		return "", false, fmt.Errorf("rule %q, want positive, min=v, below=v or nonempty", rule)
	}
	for _, v := range values {
		var x float64
		switch v.Kind() {
		case reflect.Int, reflect.Int64, reflect.Int32:
			x = float64(v.Int())
		case reflect.Uint64, reflect.Uint, reflect.Uint32:
			x = float64(v.Uint())
		case reflect.Float64, reflect.Float32:
			x = v.Float()
		default:
			return "", false, fmt.Errorf("rule %q on a %s, want numbers", rule, v.Type())
		}
		if !test(x) {
			return want, false, nil
		}
	}
	return want, true, nil
}

// MNISTMLP are the flags of a program that trains MLP classifiers on
// MNIST with SGD and momentum. Embed it in the config (BindFlags and
// CheckFlags look inside); the values set before BindFlags are the
// defaults.
type MNISTMLP struct {
	MNIST    string      `flag:"mnist" help:"directory with the MNIST IDX files (default: the GoMNIST module copy)"`
	Acts     Activations `flag:"acts" help:"activations, comma-separated (names as activation.ParseActivation takes them)" check:"nonempty"`
	Hidden   Ints        `flag:"hidden" help:"hidden layer widths, comma-separated" check:"nonempty,positive"`
	Batch    int         `flag:"batch" help:"mini-batch size" check:"positive"`
	Momentum float64     `flag:"momentum" help:"SGD heavy-ball momentum (PyTorch's convention, dampening 0)" check:"min=0,below=1"`
	DPI      int         `flag:"dpi" help:"resolution of the PNG plots"`
}

// Main is an experiment program's main once its config holds the
// defaults: it defines f's shared flags (which, see Flags.Register) and
// cfg's own (BindFlags) on flag.CommandLine, parses the command line
// (refusing anything but flags, as Flags.Parse does), calls run with a
// context that SIGINT (Ctrl-C) and SIGTERM cancel, and ends the program
// through Exit(program, f.Out, err).
//
//	c := config{Flags: experiment.Flags{Out: "out/x", Seed: 1}, Steps: 600}
//	experiment.Main("x", &c.Flags, experiment.SubsetFlag, &c, func(ctx context.Context) error { _, err := run(ctx, c); return err })
func Main(program string, f *Flags, which FlagSet, cfg any, run func(ctx context.Context) error) {
	err := parseFlags(flag.CommandLine, os.Args[1:], f, which, cfg)
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err = run(ctx)
		stop()
	}
	Exit(program, f.Out, err)
}

// parseFlags is Main's parsing on fs with args (Flags.Parse): anything
// left after the flags is an error, not silently ignored.
func parseFlags(fs *flag.FlagSet, args []string, f *Flags, which FlagSet, cfg any) error {
	_, err := f.Parse(fs, args, which, cfg)
	return err
}
