package experiment

// A program's own flags declared once, on its config struct: the field's
// tag names the flag and says what it does, the field's value before
// parsing is the default. main then reads as the config it fills, not as
// a column of flag.IntVar calls.

import (
	"flag"
	"fmt"
	"os"
	"reflect"
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
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("experiment.BindFlags: got %T, want a pointer to a struct", cfg)
	}
	v = v.Elem()
	for i := 0; i < v.NumField(); i++ {
		f, field := v.Type().Field(i), v.Field(i)
		name, ok := f.Tag.Lookup("flag")
		if !ok {
			continue
		}
		help := f.Tag.Get("help")
		if !f.IsExported() || name == "" || help == "" {
			return fmt.Errorf("experiment.BindFlags: field %s: want an exported field with a flag name and a help text", f.Name)
		}
		switch p := field.Addr().Interface().(type) {
		case flag.Value:
			fs.Var(p, name, help)
		case *int:
			fs.IntVar(p, name, *p, help)
		case *uint64:
			fs.Uint64Var(p, name, *p, help)
		case *float64:
			fs.Float64Var(p, name, *p, help)
		case *string:
			fs.StringVar(p, name, *p, help)
		case *bool:
			fs.BoolVar(p, name, *p, help)
		default:
			return fmt.Errorf("experiment.BindFlags: field %s (-%s) has type %s, want int, uint64, float64, string, bool or a flag.Value", f.Name, name, f.Type)
		}
	}
	return nil
}

// Exit ends an experiment program's main after its run: with an error it
// prints "program: error" to stderr and exits with status 1, otherwise it
// prints where the report is ("wrote out/report.md").
func Exit(program, out string, err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, program+":", err)
		os.Exit(1)
	}
	fmt.Println("wrote", out+"/report.md")
}
