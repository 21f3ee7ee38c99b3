package experiment

import "testing"

func TestFlagsCheck(t *testing.T) {
	for _, tc := range []struct {
		f    Flags
		want string // "" for no error
	}{
		{Flags{Workers: 1}, ""},
		{Flags{TrainN: 100, TestN: 10, Workers: 4}, ""},
		{Flags{Workers: 0}, "-workers 0: want ≥ 1"},
		{Flags{TrainN: -1, Workers: 2}, "-train-n -1: want ≥ 0"},
		{Flags{TrainN: -2, TestN: -3, Workers: -1}, "-train-n -2: want ≥ 0\n-test-n -3: want ≥ 0\n-workers -1: want ≥ 1"},
	} {
		err := tc.f.Check()
		if got := ""; err != nil {
			got = err.Error()
			if got != tc.want {
				t.Errorf("%+v: %q, want %q", tc.f, got, tc.want)
			}
		} else if tc.want != "" {
			t.Errorf("%+v: no error, want %q", tc.f, tc.want)
		}
	}
}
