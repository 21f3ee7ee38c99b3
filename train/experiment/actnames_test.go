package experiment

import (
	"slices"
	"testing"

	"github.com/geluproject/gelu/ops/activation"
)

func TestActivationsNamesTitles(t *testing.T) {
	var f Activations
	if err := f.Set("relu,gelu_tanh"); err != nil {
		t.Fatal(err)
	}
	if got, want := f.Names(), []string{"relu", "gelu_tanh"}; !slices.Equal(got, want) {
		t.Errorf("Names = %q, want %q (the names -acts was given)", got, want)
	}
	if got, want := f.Titles(), []string{activation.ReLU.Title(), activation.GELUTanh.Title()}; !slices.Equal(got, want) {
		t.Errorf("Titles = %q, want %q", got, want)
	}
}
